/**
 * `serve --db <primary> --db-read <replica>`: chain data comes from the replica, API keys from
 * the primary. The two are told apart here by giving them different contents (two schemas of one
 * test database stand for the primary and its replica).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import {
  apiUrl,
  type CliProcess,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
} from '../../cli/testing/cli-process.js';
import { UserError } from '../../internal/errors.js';
import { silentLogger } from '../../internal/logger.js';
import { splitReads } from '../read-split.js';
import { indexBatch, tokenMetadata, transferRecord } from '../testing/batches.js';
import type { IndexBatch, Store } from '../types.js';
import { MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';
import {
  checkTestServer,
  createTestDatabase,
  querySql,
  type TestDatabase,
  withSchema,
} from './testing/test-database.js';

const TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const HOLDER = '0x1111111111111111111111111111111111111111';
const logger = silentLogger();

/** A mint of `value` to HOLDER in block 1, under the token name `name`. */
function mint(name: string, value: bigint): IndexBatch {
  return indexBatch({
    fromBlock: 1,
    toBlock: 1,
    transfers: [
      transferRecord({
        token: TOKEN,
        blockNumber: 1,
        txHash: `0x${'ab'.repeat(32)}`,
        to: HOLDER,
        value,
        time: 1_700_000_000,
      }),
    ],
    tokens: [tokenMetadata(TOKEN, { name, symbol: name, decimals: 0 })],
  });
}

const unreachable = await checkTestServer().then(
  () => null,
  (error: unknown) => error,
);

if (unreachable !== null) {
  test('PostgreSQL test server is reachable', () => {
    throw unreachable;
  });
} else {
  const database: TestDatabase = await createTestDatabase();
  const stores: Store[] = [];
  const children: CliProcess[] = [];
  after(async () => {
    await Promise.all(children.map((child) => child.stop('SIGKILL')));
    await Promise.all(stores.map((store) => store.close().catch(() => {})));
    await database.drop();
    removeTempDirs();
  });

  let schemas = 0;
  /** A primary and a "replica" schema with different data: PRIMARY holds 1 token unit, REPLICA 2. */
  async function primaryAndReplica(): Promise<{ primaryUrl: string; replicaUrl: string; primary: Store }> {
    const n = ++schemas;
    const [primaryUrl, replicaUrl] = [`primary_${n}`, `replica_${n}`].map((schema) =>
      withSchema(database.url, schema),
    ) as [string, string];
    for (const schema of [`primary_${n}`, `replica_${n}`])
      await querySql(database.url, `CREATE SCHEMA ${schema}`);
    const primary = await openPostgresStore({ url: primaryUrl, logger });
    stores.push(primary);
    await primary.writer.applyBatch(mint('PRIMARY', 1n));
    // The replica's contents, written while it is still an ordinary database.
    const writable = await openPostgresStore({ url: replicaUrl, logger });
    await writable.writer.applyBatch(mint('REPLICA', 2n));
    await writable.close();
    return { primaryUrl, replicaUrl, primary };
  }

  describe('read replica', () => {
    test('the split store reads chain data from the replica and keys from the primary', async () => {
      const { replicaUrl, primary } = await primaryAndReplica();
      const replica = await openPostgresStore({ url: replicaUrl, logger, readOnly: true });
      const store = splitReads(primary, replica);
      stores.push(store);
      assert.equal((await store.reader.getToken('eth', TOKEN))?.name, 'REPLICA');
      assert.equal(await store.reader.getBalance('eth', TOKEN, HOLDER), 2n);
      assert.equal((await store.reader.listTransfers('eth', TOKEN, 0, 10))[0]?.value, 2n);
      assert.equal((await store.reader.listTokens('eth', 0, 10)).tokens[0]?.symbol, 'REPLICA');
      assert.equal((await store.reader.listChainStatuses()).length, 1);

      const key = { id: 'k1', hash: 'a'.repeat(64), label: '', createdAt: 1, revokedAt: null };
      await store.keys.createApiKey(key);
      assert.deepEqual(await primary.keys.findApiKeyByHash(key.hash), key);
      assert.deepEqual(await store.keys.findApiKeyByHash(key.hash), key);
      assert.equal(await replica.keys.findApiKeyByHash(key.hash), null);
      assert.equal(await store.keys.revokeApiKey('k1', 5), true);
      assert.equal((await primary.keys.findApiKeyByHash(key.hash))?.revokedAt, 5);
    });

    test('a replica store is read-only: a write fails and changes nothing', async () => {
      const { replicaUrl } = await primaryAndReplica();
      const replica = await openPostgresStore({ url: replicaUrl, logger, readOnly: true });
      stores.push(replica);
      const batch = { ...mint('X', 3n), fromBlock: 2, toBlock: 2 };
      batch.transfers = batch.transfers.map((t) => ({ ...t, blockNumber: 2 }));
      await assert.rejects(replica.writer.applyBatch(batch), (error: unknown) => {
        assert.ok(error instanceof pg.DatabaseError);
        assert.equal(error.code, '25006', 'read-only transaction');
        return true;
      });
      await assert.rejects(replica.writer.setChainStatus('eth', { head: 9 }), pg.DatabaseError);
      assert.equal((await replica.writer.getCheckpoint('eth'))?.block, 1);
      assert.equal((await replica.reader.getChainStatus('eth'))?.head, 1);
    });

    test('a replica whose schema is newer than this tokenquery is refused with one clear line', async () => {
      const { replicaUrl } = await primaryAndReplica();
      await querySql(replicaUrl, `INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, 'future')`, [
        MIGRATIONS.length + 1,
      ]);
      await assert.rejects(
        openPostgresStore({ url: replicaUrl, logger, readOnly: true }),
        (error: unknown) => {
          assert.ok(error instanceof UserError);
          assert.match(error.shortMessage, /read replica .* has a newer schema/);
          return true;
        },
      );
    });

    test('serve --db-read: data from the replica, keys from the primary, revocation within a second', async () => {
      const { primaryUrl, replicaUrl } = await primaryAndReplica();
      const createKey = async (db: string) => {
        const result = await runCli(['keys', 'create', '--db', db]);
        assert.equal(result.code, 0, result.stderr);
        return lines(result.stdout).at(-1)!;
      };
      const primaryKey = await createKey(primaryUrl);
      const replicaOnlyKey = await createKey(replicaUrl);
      const server = spawnCli(['serve', '--db', primaryUrl, '--port', '0'], {
        env: { TOKENQUERY_DB_READ: replicaUrl },
      });
      children.push(server);
      const base = await apiUrl(server, 'tokenquery serving');
      const info = async (key: string) => {
        const response = await fetch(`${base}/vipapi/eth/token/${TOKEN}?apikey=${key}`);
        return {
          status: response.status,
          body: (await response.json()) as { data?: { tokenInfo?: { f: string } } },
        };
      };
      const served = await info(primaryKey);
      assert.equal(served.status, 200);
      assert.equal(served.body.data?.tokenInfo?.f, 'REPLICA');
      assert.equal((await info(replicaOnlyKey)).status, 401, 'keys are not read from the replica');

      const revoke = await runCli(['keys', 'revoke', primaryKey, '--db', primaryUrl]);
      assert.equal(revoke.code, 0, revoke.stderr);
      const revokedAt = Date.now();
      while ((await info(primaryKey)).status !== 401) {
        assert.ok(Date.now() - revokedAt <= 1_000, 'a revoked key is refused within one second');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const stopped = await server.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
      // The log says where reads go, and never shows either connection string in full.
      assert.match(stopped.stderr, /API reads chain data from the read replica/);
    });
  });
}
