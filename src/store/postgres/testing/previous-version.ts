/**
 * Upgrade tests build a store "as an earlier version kept it": a schema migrated only up to that
 * version, filled from a schema built by this version. Later migrations add columns to the tables
 * (and tables of their own), so rows are copied by the columns the older table has, and the
 * identity sequences are moved past the copied ids.
 */
import { after } from 'node:test';
import pg from 'pg';
import { silentLogger } from '../../../internal/logger.js';
import type { Store } from '../../types.js';
import { MIGRATIONS, MIGRATIONS_TABLE, type Migration, migrate } from '../migrations.js';
import { openPostgresStore } from '../postgres-store.js';
import { createTestDatabase, querySql, withSchema } from './test-database.js';

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

/** A schema holding a store as it was just before one migration (see {@link storeBefore}). */
export interface StoreBefore {
  /** The schema's URL: opening a store there runs the migration and those after it. */
  url: string;
  /** The migration's index in `MIGRATIONS` (the version the schema is at). */
  version: number;
  /** Opens a store on `url` (the default) or another schema of the same database. */
  open(url?: string): Promise<Store>;
}

/**
 * The store as the version before migration `name` kept it, holding what `write` writes into a
 * store of this version: the usual start of an upgrade test. A fresh database, dropped after the
 * test file.
 */
export async function storeBefore(
  name: string,
  write: (store: Store) => Promise<void>,
): Promise<StoreBefore> {
  const database = await createTestDatabase();
  after(() => database.drop());
  await querySql(database.url, 'CREATE SCHEMA built; CREATE SCHEMA previous');
  const url = withSchema(database.url, 'previous');
  const open = (at = url) => openPostgresStore({ url: at, logger: silentLogger(), maxConnections: 2 });
  const built = await open(withSchema(database.url, 'built'));
  try {
    await write(built);
  } finally {
    await built.close();
  }
  const version = MIGRATIONS.findIndex((m) => m.name === name);
  if (version < 0) throw new Error(`no migration ${name}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await fillPreviousSchema(client, MIGRATIONS.slice(0, version), 'built', 'previous');
  } finally {
    await client.end();
  }
  return { url, version, open };
}
