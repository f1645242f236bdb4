/**
 * Upgrade tests build a store "as an earlier version kept it": a new file migrated only up to
 * that version, filled from a store built by this version. Later migrations add columns to the
 * tables (and tables of their own), so rows are copied by the columns the older table has.
 */
import Database from 'better-sqlite3';
import { silentLogger } from '../../../internal/logger.js';
import { type Migration, migrate } from '../migrations.js';

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
