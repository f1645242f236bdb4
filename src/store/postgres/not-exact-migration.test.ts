/**
 * Migration 0009_not_exact on PostgreSQL: a version-8 store with data is upgraded in place on
 * open, its tokens exact (no mark), and the marks work after it.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { silentLogger } from '../../internal/logger.js';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import { MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';
import { createTestDatabase, querySql } from './testing/test-database.js';

test('a version-8 PostgreSQL store gains the not-exact mark in place, every token exact', async () => {
  const database = await createTestDatabase();
  after(() => database.drop());
  const open = () => openPostgresStore({ url: database.url, logger: silentLogger(), maxConnections: 2 });
  const token = tokenAddress(1);
  const store = await open();
  await store.writer.applyBatch(
    batch({ from: 1, to: 1, transfers: moves(token, 1, [[holder(1), holder(2), 5n]]) }),
  );
  await store.close();

  // Back to version 8: what 0009 adds is taken off again, so the store is what 0008 left.
  const version = MIGRATIONS.findIndex((m) => m.name === '0009_not_exact');
  assert.equal(version, 8);
  await querySql(
    database.url,
    `DROP INDEX tokens_not_exact;
     ALTER TABLE tokens DROP COLUMN not_exact_block, DROP COLUMN not_exact_drift,
       DROP COLUMN not_exact_sampled, DROP COLUMN not_exact_differing;
     DELETE FROM ${MIGRATIONS_TABLE} WHERE version > ${version}`,
  );

  const upgraded = await open();
  try {
    assert.equal(await upgraded.reader.getBalance('eth', token, holder(2)), 5n);
    assert.equal(await upgraded.reader.getNotExact('eth', token), null);
    assert.deepEqual(await upgraded.reader.countNotExact(), {});
    const mark = { atBlock: 1, supplyDrift: -4n, sampled: 2, differing: 1 };
    await upgraded.writer.setExactness('eth', [{ address: token, mark }]);
    assert.deepEqual(await upgraded.reader.getNotExact('eth', token), mark);
    const applied = await querySql<{ n: number }>(
      database.url,
      `SELECT max(version) AS n FROM ${MIGRATIONS_TABLE}`,
    );
    assert.equal(applied[0]?.n, MIGRATIONS.length);
  } finally {
    await upgraded.close();
  }
});
