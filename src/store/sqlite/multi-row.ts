/**
 * Many rows per statement, for the SQLite store's bulk writes and bulk reads: one native call
 * per chunk of rows instead of one per row, which saves much of better-sqlite3's per-call cost.
 * `multiRow` takes a fresh parameter array per call; `bufferedRows` writes rows in place into one
 * reused array, for the hottest inserts of a batch.
 */
import type Database from 'better-sqlite3';

/** Rows per statement of {@link multiRow} as the store uses it. */
export const ROWS_PER_STATEMENT = 100;

/** Rows per statement of {@link bufferedRows}: about the fastest for both tables (16 to 64 measure alike). */
export const BUFFERED_ROWS = 32;

/** `sql` repeated `rows` times, comma-separated: the VALUES list or IN list of a multi-row statement. */
export function rowsOf(sql: string, rows: number): string {
  return Array(rows).fill(sql).join(', ');
}

/**
 * Many rows per statement: one native call per chunk of rows instead of one per row, which
 * saves much of better-sqlite3's per-call cost in bulk writes. A statement for each chunk size
 * is prepared on first use and kept.
 */
export function multiRow(
  db: Database.Database,
  build: (rows: number) => string,
  width: number,
  maxRows: number,
) {
  const cache = new Map<number, Database.Statement>();
  const statement = (rows: number): Database.Statement => {
    let prepared = cache.get(rows);
    if (prepared === undefined) {
      prepared = db.prepare(build(rows));
      cache.set(rows, prepared);
    }
    return prepared;
  };
  return {
    /** Runs the statement over `flat` (`width` values per row), `maxRows` rows at a time. */
    run(flat: unknown[]): void {
      const chunk = maxRows * width;
      for (let start = 0; start < flat.length; start += chunk) {
        const part = flat.length <= chunk ? flat : flat.slice(start, start + chunk);
        statement(part.length / width).run(part);
      }
    },
    /** Raw rows of the statement for `rows` rows, bound to `params`. */
    all(rows: number, params: unknown[]): unknown[][] {
      return statement(rows).raw().all(params) as unknown[][];
    },
  };
}

/** A statement of {@link multiRow}. */
export type MultiRow = ReturnType<typeof multiRow>;

/**
 * The rows of a multi-row statement, written in place into one reused parameter array and run
 * each time it is full (the rest, fewer rows, by `flush`): one native call and one result object
 * per `rows` rows instead of one per row. For the hot inserts of a batch, where building a fresh
 * parameter array per chunk (as `multiRow` takes it) would cost what the statement calls save
 * (measurements: docs/benchmarks.md, "Where the time goes").
 */
export function bufferedRows(
  db: Database.Database,
  build: (rows: number) => string,
  width: number,
  rows: number,
) {
  const full = db.prepare(build(rows));
  const tail = multiRow(db, build, width, rows);
  const params: unknown[] = new Array(width * rows);
  let filled = 0;
  return {
    params,
    /** Where in `params` the next row's `width` values go; runs the full statement first if need be. */
    next(): number {
      if (filled === params.length) {
        full.run(params);
        filled = 0;
      }
      const at = filled;
      filled += width;
      return at;
    },
    /** Runs the rows not yet written. */
    flush(): void {
      if (filled === 0) return;
      const part = filled === params.length ? params : params.slice(0, filled);
      filled = 0;
      tail.run(part);
    },
    /** Forgets rows not yet written (a transaction that failed part-way). */
    discard(): void {
      filled = 0;
    },
  };
}

/** A statement of {@link bufferedRows}. */
export type BufferedRows = ReturnType<typeof bufferedRows>;
