/**
 * Migration `0008_balance_changes` (balance changes without a transfer, issue #18) upgrades a store
 * of the version before it in place, on SQLite and PostgreSQL: what it held stays, and balance
 * changes are stored, applied, rolled back and counted afterwards. The step adds an empty table,
 * so there is nothing to fill; the test makes a store of the previous version by taking the
 * table and the version record away from a current one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ZERO_ADDRESS } from '../internal/chains.js';
import { silentLogger } from '../internal/logger.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from './postgres/migrations.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { fillPreviousSchema } from './postgres/testing/previous-version.js';
import { createTestDatabase, querySql, withSchema } from './postgres/testing/test-database.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from './sqlite/migrations.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { previousVersionStore } from './sqlite/testing/previous-version.js';
import { AddressModel } from './testing/address-model.js';
import { applyToBoth, assertAddressViews } from './testing/address-model-check.js';
import { batch, blockHash, holder, moves, tokenAddress, tokenMetadata } from './testing/batches.js';
import type { IndexBatch, Store } from './types.js';

const T1 = tokenAddress(1);
const WETH = tokenAddress(2);
const [H1, H2] = [holder(1), holder(2)];

/** Before the upgrade: transfers only. */
const before: IndexBatch[] = [
  batch({ from: 1, to: 2, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 50n]]) }),
  batch({ from: 3, to: 3, transfers: moves(T1, 3, [[H1, H2, 20n]]) }),
];
/** After it: deposits and a withdrawal of a token no transfer names yet, then a rollback of one. */
const afterUpgrade: IndexBatch[] = [
  {
    ...batch({ from: 4, to: 5, transfers: moves(T1, 5, [[H2, H1, 1n]]) }),
    balanceChanges: [
      { token: WETH, blockNumber: 4, logIndex: 0, holder: H1, amount: 9n },
      { token: WETH, blockNumber: 5, logIndex: 3, holder: H2, amount: 4n },
    ],
    tokens: [tokenMetadata(T1), tokenMetadata(WETH)],
  },
  {
    ...batch({ from: 6, to: 6 }),
    balanceChanges: [{ token: WETH, blockNumber: 6, logIndex: 0, holder: H1, amount: -9n }],
    tokens: [tokenMetadata(WETH)],
  },
];

/** Applies the batches after the upgrade and checks every read, then a rollback of the last one. */
async function carryOn(store: Store, model: AddressModel): Promise<void> {
  await assertAddressViews(store, model, 'eth', { label: 'upgraded', extraTokens: [WETH] });
  await applyToBoth(store, model, afterUpgrade);
  await assertAddressViews(store, model, 'eth', { label: 'after balance changes' });
  assert.deepEqual(
    { holders: (await store.reader.getToken('eth', WETH))?.holderCount, transfers: 0 },
    { holders: 1, transfers: (await store.reader.getToken('eth', WETH))?.transferCount },
  );
  await store.writer.rollback('eth', 5, blockHash(5));
  model.rollback('eth', 5);
  await assertAddressViews(store, model, 'eth', { label: 'after a rollback' });
  assert.equal(await store.reader.getBalance('eth', WETH, H1), 9n);
}

const root = mkdtempSync(join(tmpdir(), 'tq-0008-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('migration 0008_balance_changes', () => {
  test('sqlite: a store of the previous version is upgraded in place on open', async () => {
    const builtPath = join(root, 'built.sqlite');
    const path = join(root, 'previous.sqlite');
    const model = new AddressModel();
    const built = await openSqliteStore({ path: builtPath, logger: silentLogger() });
    await applyToBoth(built, model, before);
    await built.close();
    const version = SQLITE_MIGRATIONS.findIndex((m) => m.name === '0008_balance_changes');
    assert.ok(version > 0);
    // The same data as the version before kept it: its schema, filled from the store built now.
    previousVersionStore(path, builtPath, SQLITE_MIGRATIONS.slice(0, version));

    const upgraded = await openSqliteStore({ path, logger: silentLogger() });
    try {
      const check = new Database(path, { readonly: true });
      assert.equal(check.pragma('user_version', { simple: true }), SQLITE_MIGRATIONS.length);
      check.close();
      await carryOn(upgraded, model);
    } finally {
      await upgraded.close();
    }
  });

  test('postgres: a store of the previous version is upgraded in place on open', async () => {
    const database = await createTestDatabase();
    try {
      await querySql(database.url, 'CREATE SCHEMA built; CREATE SCHEMA previous');
      const url = withSchema(database.url, 'previous');
      const model = new AddressModel();
      const built = await openPostgresStore({
        url: withSchema(database.url, 'built'),
        logger: silentLogger(),
        maxConnections: 2,
      });
      await applyToBoth(built, model, before);
      await built.close();
      const version = POSTGRES_MIGRATIONS.findIndex((m) => m.name === '0008_balance_changes');
      assert.ok(version > 0);
      // The same data as the version before kept it: its schema, filled from the one built now.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await fillPreviousSchema(client, POSTGRES_MIGRATIONS.slice(0, version), 'built', 'previous');
      } finally {
        await client.end();
      }

      const upgraded = await openPostgresStore({ url, logger: silentLogger(), maxConnections: 2 });
      try {
        const versions = await querySql<{ version: number }>(
          database.url,
          'SELECT max(version) AS version FROM previous.tokenquery_migrations',
        );
        assert.equal(versions[0]?.version, POSTGRES_MIGRATIONS.length);
        await carryOn(upgraded, model);
      } finally {
        await upgraded.close();
      }
    } finally {
      await database.drop();
    }
  });
});
