/**
 * Migration 0009_not_exact on SQLite: a version-8 store with data is upgraded in place on open,
 * its tokens exact (no mark), and the marks work after it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { silentLogger } from '../../internal/logger.js';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import { MIGRATIONS } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import { storeBefore } from './testing/previous-version.js';

test('a version-8 SQLite store gains the not-exact mark in place, every token exact', async () => {
  const token = tokenAddress(1);
  // The same data as version 8 kept it: its schema, filled from the store built now.
  const { path, version } = await storeBefore('0009_not_exact', (store) =>
    store.writer.applyBatch(
      batch({ from: 1, to: 1, transfers: moves(token, 1, [[holder(1), holder(2), 5n]]) }),
    ),
  );
  assert.equal(version, 8);

  const upgraded = await openSqliteStore({ path, logger: silentLogger() });
  try {
    assert.equal(await upgraded.reader.getBalance('eth', token, holder(2)), 5n);
    assert.equal(await upgraded.reader.getNotExact('eth', token), null);
    assert.deepEqual(await upgraded.reader.countNotExact(), {});
    const mark = { atBlock: 1, supplyDrift: 4n, sampled: 2, differing: 1 };
    await upgraded.writer.setExactness('eth', [{ address: token, mark }]);
    assert.deepEqual(await upgraded.reader.getNotExact('eth', token), mark);
  } finally {
    await upgraded.close();
  }
  const check = new Database(path, { readonly: true });
  assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
  check.close();
});
