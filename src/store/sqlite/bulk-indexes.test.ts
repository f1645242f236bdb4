import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { indexedWrite } from './bulk-indexes.js';

/** A table like `balances` with a partial index, `rows` rows in it already. */
function tableWith(rows: number) {
  const db = new Database(':memory:');
  db.exec(`
    CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER) WITHOUT ROWID;
    CREATE INDEX t_by_v ON t (v DESC, k) WHERE v IS NOT NULL;`);
  const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  for (let k = 0; k < rows; k++) insert.run(k, k % 13);
  const indexSql = () => db.prepare("SELECT sql FROM sqlite_schema WHERE name = 't_by_v'").pluck().get();
  const schemaVersion = () => db.pragma('schema_version', { simple: true }) as number;
  return { db, insert, indexSql, schemaVersion };
}

describe('secondary indexes built after a bulk write', () => {
  test('a write of more rows than the table holds drops the index and makes it again, from its own SQL', () => {
    const { db, insert, indexSql, schemaVersion } = tableWith(5);
    const before = indexSql();
    const version = schemaVersion();
    const write = indexedWrite(db, 't', ['t_by_v']);
    let sawIndex: unknown = 'not run';
    db.transaction(() =>
      write(20_000, () => {
        sawIndex = indexSql();
        for (let k = 5; k < 20_005; k++) insert.run(k, (k * 7919) % 1_000);
      }),
    )();
    assert.equal(sawIndex, undefined, 'the index is gone while the rows go in');
    assert.equal(indexSql(), before);
    assert.ok(schemaVersion() > version);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    // The index answers the rank query, and holds every row with a value.
    const top = db.prepare(
      'SELECT k, v FROM t INDEXED BY t_by_v WHERE v IS NOT NULL ORDER BY v DESC, k LIMIT 3',
    );
    const expected = Array.from({ length: 20_005 }, (_, k) => ({ k, v: k < 5 ? k % 13 : (k * 7919) % 1_000 }))
      .sort((a, b) => b.v - a.v || a.k - b.k)
      .slice(0, 3);
    assert.deepEqual(top.all(), expected);
    assert.equal(
      db.prepare('SELECT count(*) FROM t INDEXED BY t_by_v WHERE v IS NOT NULL').pluck().get(),
      20_005,
    );
  });

  test('a write no bigger than the table, or a small one, keeps the index up row by row', () => {
    for (const [stored, rows] of [
      [20_000, 20_000],
      [0, 9_999],
    ] as const) {
      const { db, insert, schemaVersion } = tableWith(stored);
      const version = schemaVersion();
      db.transaction(() =>
        indexedWrite(db, 't', ['t_by_v'])(rows, () => {
          for (let k = stored; k < stored + rows; k++) insert.run(k, 1);
        }),
      )();
      assert.equal(schemaVersion(), version, `${stored} stored, ${rows} written: no schema change`);
    }
  });

  test('a write that fails part-way leaves the index and the rows as they were', () => {
    const { db, insert, indexSql } = tableWith(5);
    const before = indexSql();
    assert.throws(
      () =>
        db.transaction(() =>
          indexedWrite(db, 't', ['t_by_v'])(20_000, () => {
            for (let k = 5; k < 15_000; k++) insert.run(k, 1);
            throw new Error('disk full');
          }),
        )(),
      /disk full/,
    );
    assert.equal(indexSql(), before);
    assert.equal(db.prepare('SELECT count(*) FROM t INDEXED BY t_by_v WHERE v IS NOT NULL').pluck().get(), 5);
  });
});
