/**
 * Migration 0010_negative_balances on PostgreSQL: a version-9 store with negative balances gains
 * their index in place on open, the zero address left out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import { MIGRATIONS, MIGRATIONS_TABLE, NEGATIVE_BALANCE } from './migrations.js';
import { storeBefore } from './testing/previous-version.js';
import { querySql } from './testing/test-database.js';

test('a version-9 PostgreSQL store gains the index of its negative balances in place', async () => {
  const token = tokenAddress(1);
  const big = 2n ** 70n;
  const { url, version, open } = await storeBefore('0010_negative_balances', (store) =>
    store.writer.applyBatch(
      batch({
        from: 1,
        to: 1,
        transfers: moves(token, 1, [
          [ZERO_ADDRESS, holder(1), 3n],
          [holder(2), holder(3), 5n],
          [holder(4), holder(3), big],
        ]),
      }),
    ),
  );
  assert.equal(version, 9);

  const upgraded = await open();
  try {
    assert.deepEqual(await upgraded.writer.negativeBalances('eth', token, 10), [
      { holder: holder(2), amount: -5n },
      { holder: holder(4), amount: -big },
    ]);
    const indexed = await querySql<{ indexdef: string }>(
      url,
      "SELECT indexdef FROM pg_indexes WHERE schemaname = 'previous' AND indexname = 'balances_negative'",
    );
    assert.equal(indexed.length, 1);
    const rows = await querySql<{ n: string }>(
      url,
      `SELECT count(*) AS n FROM balances WHERE ${NEGATIVE_BALANCE}`,
    );
    assert.equal(Number(rows[0]?.n), 2);
    const applied = await querySql<{ n: number }>(url, `SELECT max(version) AS n FROM ${MIGRATIONS_TABLE}`);
    assert.equal(applied[0]?.n, MIGRATIONS.length);
  } finally {
    await upgraded.close();
  }
});
