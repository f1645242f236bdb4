/**
 * Upgrade tests build a store "as an earlier version kept it": a new file migrated only up to
 * that version, filled from a store built by this version. Later migrations add columns to the
 * tables (and tables of their own), so rows are copied by the columns the older table has.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import Database from 'better-sqlite3';
import { silentLogger } from '../../../internal/logger.js';
import type { Store } from '../../types.js';
import { MIGRATIONS, type Migration, migrate } from '../migrations.js';
import { openSqliteStore } from '../sqlite-store.js';

/** The columns of `table` in the main database of `db`. */
function columnsOf(db: Database.Database, table: string): string[] {
  return db.prepare<[string], string>('SELECT name FROM pragma_table_info(?)').pluck().all(table);
}

/** The tables of the main database (SQLite's own left out). */
export function tablesOf(db: Database.Database): string[] {
  return db
    .prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all();
}

/**
 * Copies the rows of `table` from the attached database `from` into the main database's table of
 * that name, by the main table's columns; `where` filters the source rows.
 */
export function copyRows(db: Database.Database, table: string, from: string, where = ''): void {
  const columns = columnsOf(db, table).join(', ');
  db.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM ${from}.${table} ${where}`);
}

/**
 * Makes at `path` the store an earlier version would have kept: a new file migrated by
 * `migrations` (the list up to that version), holding every row of the store at `builtPath`.
 */
export function previousVersionStore(
  path: string,
  builtPath: string,
  migrations: readonly Migration[],
): void {
  const db = new Database(path);
  try {
    migrate(db, silentLogger(), migrations);
    db.exec(`ATTACH DATABASE '${builtPath}' AS built`);
    for (const table of tablesOf(db)) copyRows(db, table, 'built');
    db.exec('DETACH DATABASE built');
  } finally {
    db.close();
  }
}

/**
 * The store as the version before migration `name` kept it, holding what `write` writes into a
 * store of this version: the usual start of an upgrade test. Made in a fresh directory removed
 * after the test file; answers the file's path and the migration's index (the version it is at).
 */
export async function storeBefore(
  name: string,
  write: (store: Store) => Promise<void>,
): Promise<{ path: string; version: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenquery-upgrade-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const builtPath = join(dir, 'built.sqlite');
  const built = await openSqliteStore({ path: builtPath, logger: silentLogger() });
  try {
    await write(built);
  } finally {
    await built.close();
  }
  const version = MIGRATIONS.findIndex((m) => m.name === name);
  if (version < 0) throw new Error(`no migration ${name}`);
  const path = join(dir, `v${version}.sqlite`);
  previousVersionStore(path, builtPath, MIGRATIONS.slice(0, version));
  return { path, version };
}
