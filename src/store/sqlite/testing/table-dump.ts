/**
 * Every table of a SQLite store as comparable text, for tests that build one store two ways (a
 * bulk load and row by row) and must find the same rows. Address ids are the one thing two ways
 * may number differently (a bulk load numbers addresses in byte order, row by row numbers them as
 * they come), so entries name their address instead; the write time of the chain row is left out.
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { tablesOf } from './previous-version.js';

/** Per table (and `indexes`: the schema's index definitions), its rows as sorted JSON lines. */
export function dumpTables(path: string): Map<string, string[]> {
  const db = new Database(path, { readonly: true });
  db.defaultSafeIntegers(true);
  try {
    const out = new Map<string, string[]>();
    const text = (row: unknown) =>
      JSON.stringify(row, (_k, v) =>
        typeof v === 'bigint' ? `${v}n` : Buffer.isBuffer(v) ? `x'${v.toString('hex')}'` : v,
      );
    const rows = (sql: string) => (db.prepare(sql).raw().all() as unknown[][]).map(text).sort();
    for (const table of tablesOf(db)) {
      if (table === 'address_transfers') {
        out.set(
          table,
          rows(`SELECT a.chain, a.address, x.token_id, x.block_number, x.log_index
                FROM address_transfers AS x JOIN addresses AS a ON a.id = x.address_id`),
        );
      } else if (table === 'addresses') {
        out.set(table, rows('SELECT chain, address FROM addresses'));
      } else if (table === 'chains') {
        out.set(
          table,
          rows(
            `SELECT ${columnsOf(db, table)
              .filter((c) => c !== 'updated_at')
              .join(', ')} FROM chains`,
          ),
        );
      } else {
        out.set(table, rows(`SELECT * FROM ${table}`));
      }
    }
    out.set('indexes', rows("SELECT name, tbl_name, sql FROM sqlite_schema WHERE type = 'index'"));
    return out;
  } finally {
    db.close();
  }
}

function columnsOf(db: Database.Database, table: string): string[] {
  return db.prepare<[string], string>('SELECT name FROM pragma_table_info(?)').pluck().all(table);
}

/** Asserts that two store files hold the same rows in every table; names the first row that differs. */
export function assertSameTables(actualPath: string, expectedPath: string, what: string): void {
  const actual = dumpTables(actualPath);
  const expected = dumpTables(expectedPath);
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${what}: tables`);
  for (const [table, rows] of expected) {
    const got = actual.get(table)!;
    assert.equal(got.length, rows.length, `${what}: rows of ${table}`);
    const i = got.findIndex((row, k) => row !== rows[k]);
    assert.equal(i, -1, `${what}: ${table} differs first at ${got[i]} (expected ${rows[i]})`);
  }
}
