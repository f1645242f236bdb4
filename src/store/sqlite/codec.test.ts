import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { MAX_UINT256 } from '../../internal/amount.js';
import { decodeAmount, decodeHex, encodeAmount, encodeHex } from './codec.js';

/** Stores a value in a column without affinity and reads it back, as the store does. */
function throughSqlite(value: unknown): unknown {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (v BLOB)');
  db.prepare('INSERT INTO t VALUES (?)').run(value);
  const out = db.prepare('SELECT v FROM t').pluck().get();
  db.close();
  return out;
}

describe('amount encoding', () => {
  const values = [
    0n,
    1n,
    -1n,
    255n,
    256n,
    2n ** 53n - 1n,
    2n ** 53n,
    -(2n ** 53n),
    2n ** 63n,
    2n ** 64n + 1n,
    10n ** 27n,
    MAX_UINT256,
    -MAX_UINT256,
  ];

  test('every value round-trips exactly through SQLite', () => {
    for (const value of values)
      assert.equal(decodeAmount(throughSqlite(encodeAmount(value)) as never), value);
  });

  test('large positive amounts are minimal big-endian bytes', () => {
    assert.deepEqual(encodeAmount(2n ** 53n), Buffer.from('20000000000000', 'hex'));
    assert.equal((encodeAmount(MAX_UINT256) as Buffer).length, 32);
    assert.equal(encodeAmount(5n), 5n);
  });
});

describe('hex encoding', () => {
  test('lower-case even-length hex becomes bytes', () => {
    const address = '0x000000000000000000000000000000000000dead';
    const encoded = encodeHex(address);
    assert.ok(Buffer.isBuffer(encoded) && encoded.length === 20);
    assert.equal(decodeHex(throughSqlite(encoded) as never), address);
  });

  test('anything else stays text and round-trips unchanged', () => {
    for (const value of ['', '0x', '0xABCD', '0xabc', 'AK2nJJpJr6o664CWJKi1QRXjqeic2zRp8y', 'abcd', '0xzz']) {
      assert.equal(encodeHex(value), value);
      assert.equal(decodeHex(throughSqlite(encodeHex(value)) as never), value);
    }
  });
});
