/**
 * Secondary indexes built after a bulk write instead of kept up row by row. When one write puts
 * more rows into a table than the table held before (the first flush of a backfill's deferred
 * balances into a new store, say), inserting each row into an index costs a B-tree descent at a
 * scattered position (`balances_by_rank` is in rank order, the rows come in holder order), while
 * `CREATE INDEX` reads the table once, sorts with SQLite's sorter and fills the index pages in
 * order. Inside the write's transaction, so a crash or failure leaves the indexes as they were.
 * The index is made again from its own stored SQL, so a later migration that changes it is kept.
 */
import type Database from 'better-sqlite3';

/** Runs one write of about `rows` rows into a table, rebuilding some of its indexes afterwards when that pays. */
export type IndexedWrite = (rows: number, write: () => void) => void;

/**
 * A writer of `table` that drops `indexes` before a write of more rows than the table holds and
 * makes them again after it; smaller writes just run. Counting the table's rows stops at the
 * write's size, so the check costs no more than the write.
 */
export function indexedWrite(db: Database.Database, table: string, indexes: readonly string[]): IndexedWrite {
  const holdsAtLeast = db
    .prepare<[number], number>(`SELECT count(*) FROM (SELECT 1 FROM ${table} LIMIT ?)`)
    .pluck();
  const definition = db
    .prepare<[string], string>("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?")
    .pluck();
  return (rows, write) => {
    if (rows < MIN_REBUILD_ROWS || holdsAtLeast.get(rows)! >= rows) {
      write();
      return;
    }
    const sql = indexes.map((name) => definition.get(name));
    if (sql.some((text) => text === undefined)) {
      write();
      return;
    }
    for (const name of indexes) db.exec(`DROP INDEX ${name}`);
    write();
    for (const text of sql) db.exec(text!);
  };
}

/** Below this many rows the per-row inserts cost too little to be worth a rebuild. */
const MIN_REBUILD_ROWS = 10_000;
