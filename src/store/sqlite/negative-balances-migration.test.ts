/**
 * Migration 0010_negative_balances on SQLite: a version-9 store with negative balances (small,
 * and past 2^53 where the codec stores them as text) gains their index in place on open, the zero
 * address left out, and the exactness check's read goes through it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { silentLogger } from '../../internal/logger.js';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import { MIGRATIONS, NEGATIVE_BALANCE } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import { storeBefore } from './testing/previous-version.js';

test('a version-9 SQLite store gains the index of its negative balances in place', async () => {
  const token = tokenAddress(1);
  const big = 2n ** 70n;
  const { path, version } = await storeBefore('0010_negative_balances', (store) =>
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

  const upgraded = await openSqliteStore({ path, logger: silentLogger() });
  try {
    assert.deepEqual(await upgraded.writer.negativeBalances('eth', token, 10), [
      { holder: holder(2), amount: -5n },
      { holder: holder(4), amount: -big },
    ]);
  } finally {
    await upgraded.close();
  }
  const check = new Database(path, { readonly: true });
  try {
    assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
    // The index holds the two negative rows: not the zero address's, nor the positive ones.
    const indexed = check.prepare(
      `SELECT count(*) FROM balances INDEXED BY balances_negative WHERE ${NEGATIVE_BALANCE}`,
    );
    assert.equal(indexed.pluck().get(), 2);
  } finally {
    check.close();
  }
});
