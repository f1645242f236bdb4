/**
 * Migration 0009_not_exact on PostgreSQL: a version-8 store with data is upgraded in place on
 * open, its tokens exact (no mark), and the marks work after it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import { MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js';
import { storeBefore } from './testing/previous-version.js';
import { querySql } from './testing/test-database.js';

test('a version-8 PostgreSQL store gains the not-exact mark in place, every token exact', async () => {
  const token = tokenAddress(1);
  // The same data as version 8 kept it: its schema, filled from the one built now.
  const { url, version, open } = await storeBefore('0009_not_exact', (store) =>
    store.writer.applyBatch(
      batch({ from: 1, to: 1, transfers: moves(token, 1, [[holder(1), holder(2), 5n]]) }),
    ),
  );
  assert.equal(version, 8);

  const upgraded = await open();
  try {
    assert.equal(await upgraded.reader.getBalance('eth', token, holder(2)), 5n);
    assert.equal(await upgraded.reader.getNotExact('eth', token), null);
    assert.deepEqual(await upgraded.reader.countNotExact(), {});
    const mark = { atBlock: 1, supplyDrift: -4n, sampled: 2, differing: 1 };
    await upgraded.writer.setExactness('eth', [{ address: token, mark }]);
    assert.deepEqual(await upgraded.reader.getNotExact('eth', token), mark);
    const applied = await querySql<{ n: number }>(url, `SELECT max(version) AS n FROM ${MIGRATIONS_TABLE}`);
    assert.equal(applied[0]?.n, MIGRATIONS.length);
  } finally {
    await upgraded.close();
  }
});
