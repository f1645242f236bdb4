/**
 * Migration 0012_bulk_load on SQLite: a version-11 store with data is upgraded in place on open
 * (its chains without a waiting load), and a bulk load of another chain then works on it; and
 * migration 0013_bulk_build_steps: a version-12 store killed during a load builds it after.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { silentLogger } from '../../internal/logger.js';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import { MIGRATIONS } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import { storeBefore } from './testing/previous-version.js';

test('a version-11 SQLite store gains the bulk load table in place, and a bulk load works after it', async () => {
  const token = tokenAddress(1);
  const { path, version } = await storeBefore('0012_bulk_load', (store) =>
    store.writer.applyBatch(
      batch({ from: 1, to: 1, transfers: moves(token, 1, [[holder(1), holder(2), 5n]]) }),
    ),
  );
  assert.equal(version, 11);

  const upgraded = await openSqliteStore({ path, logger: silentLogger() });
  try {
    assert.equal(await upgraded.reader.getBalance('eth', token, holder(2)), 5n);
    // A bulk load of a new chain: two batches appended, the third builds them.
    const bsc = (from: number, bulkLoad: boolean) => ({
      ...batch({ from, to: from, transfers: moves(token, from, [[holder(3), holder(4), 7n]]), chain: 'bsc' }),
      continues: from === 1 ? null : from - 1,
      ...(bulkLoad ? { bulkLoad, deferBalances: true } : {}),
    });
    await upgraded.writer.applyBatch(bsc(1, true));
    await upgraded.writer.applyBatch(bsc(2, true));
    assert.equal(await upgraded.reader.getBalance('bsc', token, holder(4)), 0n);
    await upgraded.writer.applyBatch(bsc(3, false));
    assert.equal(await upgraded.reader.getBalance('bsc', token, holder(4)), 21n);
    assert.equal(await upgraded.reader.getBalance('bsc', token, holder(3)), -21n);
    assert.equal((await upgraded.reader.getToken('bsc', token))?.transferCount, 3);
    assert.equal(await upgraded.reader.getBalance('eth', token, holder(2)), 5n);
  } finally {
    await upgraded.close();
  }
  const check = new Database(path, { readonly: true });
  assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
  assert.equal(check.prepare('SELECT count(*) FROM bulk_transfers').pluck().get(), 0);
  check.close();
});

test('a version-12 SQLite store with a waiting bulk load gains the build steps table in place, and builds the load', async () => {
  const token = tokenAddress(1);
  const bsc = (from: number, bulkLoad: boolean) => ({
    ...batch({ from, to: from, transfers: moves(token, from, [[holder(3), holder(4), 7n]]), chain: 'bsc' }),
    continues: from === 1 ? null : from - 1,
    ...(bulkLoad ? { bulkLoad, deferBalances: true } : {}),
  });
  // Killed (as version 12 knew it) with two batches appended and none built.
  const { path, version } = await storeBefore('0013_bulk_build_steps', async (store) => {
    await store.writer.applyBatch(bsc(1, true));
    await store.writer.applyBatch(bsc(2, true));
  });
  assert.equal(version, 12);
  const upgraded = await openSqliteStore({ path, logger: silentLogger() });
  try {
    assert.equal((await upgraded.reader.getChainStatus('bsc'))?.balancesBlock, 0);
    await upgraded.writer.applyBatch(bsc(3, false));
    assert.equal(await upgraded.reader.getBalance('bsc', token, holder(4)), 21n);
    assert.equal(await upgraded.reader.getBalance('bsc', token, holder(3)), -21n);
    assert.equal((await upgraded.reader.getToken('bsc', token))?.transferCount, 3);
    assert.equal((await upgraded.reader.listAddressTransfers('bsc', holder(4), null, 0, 10)).length, 3);
    assert.equal((await upgraded.reader.getChainStatus('bsc'))?.balancesBlock, undefined);
  } finally {
    await upgraded.close();
  }
  const check = new Database(path, { readonly: true });
  assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
  assert.equal(check.prepare('SELECT count(*) FROM bulk_transfers').pluck().get(), 0);
  assert.equal(check.prepare('SELECT count(*) FROM bulk_build').pluck().get(), 0);
  check.close();
});
