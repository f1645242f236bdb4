/**
 * A read forced onto an index (`INDEXED BY`) that a bulk load's build drops for a while: its
 * `balances` step drops `balances_by_holder` and a later step makes it again, each step a
 * transaction of its own (bulk-build.ts). Meanwhile the forced statement cannot be prepared (a
 * store opened then) or run: the same read without the hint answers instead, by a slower plan.
 */
import type Database from 'better-sqlite3';

/** The statement's `all`, with `INDEXED BY ${index}` in `sql` when the index is there. */
export function hintedRead<P extends unknown[], R>(
  db: Database.Database,
  sql: string,
  index: string,
  prepare: (statement: Database.Statement<P, R>) => Database.Statement<P, R> = (s) => s,
): { all(...params: P): R[]; source: string } {
  let hinted: Database.Statement<P, R> | undefined;
  let plain: Database.Statement<P, R> | undefined;
  const hint = `INDEXED BY ${index}`;
  const unhinted = () => {
    plain ??= prepare(db.prepare<P, R>(sql.replace(hint, '')));
    return plain;
  };
  const missing = (error: unknown) =>
    error instanceof Error && error.message.includes(`no such index: ${index}`);
  try {
    hinted = prepare(db.prepare<P, R>(sql));
  } catch (error) {
    if (!missing(error)) throw error;
  }
  return {
    source: sql,
    all(...params: P): R[] {
      if (hinted === undefined) {
        try {
          hinted = prepare(db.prepare<P, R>(sql));
        } catch (error) {
          if (!missing(error)) throw error;
          return unhinted().all(...params);
        }
      }
      try {
        return hinted.all(...params);
      } catch (error) {
        if (!missing(error)) throw error;
        return unhinted().all(...params);
      }
    },
  };
}
