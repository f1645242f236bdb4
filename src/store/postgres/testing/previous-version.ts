/**
 * Upgrade tests build a store "as an earlier version kept it": a schema migrated only up to that
 * version, filled from a schema built by this version. Later migrations add columns to the tables
 * (and tables of their own), so rows are copied by the columns the older table has, and the
 * identity sequences are moved past the copied ids.
 */
import type pg from 'pg';
import { silentLogger } from '../../../internal/logger.js';
import { MIGRATIONS_TABLE, type Migration, migrate } from '../migrations.js';

/** Copies the rows of `from.table` into `to.table` by `to.table`'s columns; `where` filters them. */
export async function copyRows(
  client: pg.ClientBase,
  table: string,
  from: string,
  to: string,
  where = '',
): Promise<void> {
  const columns = (
    await client.query<{ column_name: string }>(
      'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
      [to, table],
    )
  ).rows
    .map((r) => `"${r.column_name}"`)
    .join(', ');
  await client.query(
    `INSERT INTO ${to}.${table} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM ${from}.${table} ${where}`,
  );
}

/** Moves every identity or serial sequence of `schema`'s tables past the largest id copied. */
export async function advanceSequences(client: pg.ClientBase, schema: string): Promise<void> {
  const owned = await client.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = $1 AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')`,
    [schema],
  );
  for (const { table_name: table, column_name: column } of owned.rows) {
    await client.query(
      `SELECT setval(pg_get_serial_sequence('${schema}.${table}', '${column}'), max(${column}))
       FROM ${schema}.${table} HAVING max(${column}) IS NOT NULL`,
    );
  }
}

/**
 * Makes schema `to` (empty, on `client`'s database and search path) what an earlier version
 * would have kept: migrated by `migrations` (the list up to that version), holding every row of
 * schema `from`.
 */
export async function fillPreviousSchema(
  client: pg.ClientBase,
  migrations: readonly Migration[],
  from: string,
  to: string,
): Promise<void> {
  await migrate(client, silentLogger(), migrations);
  const tables = await client.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name <> $2`,
    [to, MIGRATIONS_TABLE],
  );
  for (const { table_name: table } of tables.rows) await copyRows(client, table, from, to);
  await advanceSequences(client, to);
}
