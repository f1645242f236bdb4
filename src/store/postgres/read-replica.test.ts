/**
 * `serve --db <primary> --db-read <replica>` against a real hot standby of the test server
 * (testing/streaming-replica.ts): chain data comes from the standby, API keys from the primary.
 * The standby lags as a real one does; to test what a lagging replica serves, its replay is
 * paused (`pg_wal_replay_pause()`) while the primary takes a batch, and resumed after.
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import pg from 'pg';
import {
  apiUrl,
  type CliProcess,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
} from '../../cli/testing/cli-process.js';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { UserError } from '../../internal/errors.js';
import { silentLogger } from '../../internal/logger.js';
import { eventually } from '../../internal/testing/wait.js';
import { splitReads } from '../read-split.js';
import { batch, holder, moves, tokenAddress, tokenMetadata } from '../testing/batches.js';
import type { IndexBatch, Store } from '../types.js';
import { MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';
import { requireTestServer } from './testing/require-server.js';
import { type StreamingReplica, streamingReplicaOrSkip } from './testing/streaming-replica.js';
import { createTestDatabase, querySql, type TestDatabase, withSchema } from './testing/test-database.js';

const TOKEN = tokenAddress(7);
const [ALICE, BOB] = [holder(1), holder(2)];
const logger = silentLogger();

/** Block 1: a mint of 5 to ALICE. */
const BLOCK_1: IndexBatch = batch({
  from: 1,
  to: 1,
  head: 1,
  transfers: moves(TOKEN, 1, [[ZERO_ADDRESS, ALICE, 5n]]),
  tokens: [tokenMetadata(TOKEN, { name: 'Replicated', symbol: 'REP', decimals: 0 })],
});
/** Block 2: ALICE sends 2 to BOB. */
const BLOCK_2: IndexBatch = batch({
  from: 2,
  to: 2,
  head: 2,
  transfers: moves(TOKEN, 2, [[ALICE, BOB, 2n]]),
  tokens: [],
});

if (await requireTestServer()) {
  const standby = await streamingReplicaOrSkip();
  const replica = standby.replica as StreamingReplica;
  let database: TestDatabase;
  const stores: Store[] = [];
  const children: CliProcess[] = [];

  before(async () => {
    if (standby.skip !== undefined) return;
    // Made after the standby: the standby replays its creation, as it replays everything.
    database = await createTestDatabase();
    await replica.catchUp();
  });
  after(async () => {
    await Promise.all(children.map((child) => child.stop('SIGKILL')));
    await Promise.all(stores.map((store) => store.close().catch(() => {})));
    await replica?.resumeReplay().catch(() => {});
    await replica?.stop();
    await database?.drop();
    removeTempDirs();
  });

  let schemas = 0;
  /** A new schema of the test database holding block 1, replayed by the standby: its URL on each. */
  async function primaryWithBlock1(): Promise<{ primaryUrl: string; replicaUrl: string; primary: Store }> {
    const schema = `s${++schemas}`;
    await querySql(database.url, `CREATE SCHEMA ${schema}`);
    const primaryUrl = withSchema(database.url, schema);
    const primary = await openPostgresStore({ url: primaryUrl, logger });
    stores.push(primary);
    await primary.writer.applyBatch(BLOCK_1);
    await replica.catchUp();
    return { primaryUrl, replicaUrl: replica.urlOf(primaryUrl), primary };
  }

  /** Pauses the standby's replay; resumed at the end of the test `t` whatever happens. */
  async function holdReplay(t: TestContext): Promise<void> {
    t.after(() => replica.resumeReplay());
    await replica.pauseReplay();
  }

  // A skipped test, not a skipped suite: the run's summary counts it.
  if (standby.skip !== undefined)
    test('read replica: a real streaming standby', { skip: standby.skip }, () => {});
  else
    describe('read replica: a real streaming standby', () => {
      test('the standby is a second cluster in recovery, not the primary under another name', async () => {
        const identify = async (url: string) =>
          (
            await querySql<{ port: number; recovery: boolean; id: string }>(
              url,
              "SELECT current_setting('port')::int AS port, pg_is_in_recovery() AS recovery, system_identifier::text AS id FROM pg_control_system()",
            )
          )[0];
        const [onPrimary, onStandby] = [
          await identify(database.url),
          await identify(replica.urlOf(database.url)),
        ];
        assert.equal(onPrimary?.recovery, false);
        assert.equal(onStandby?.recovery, true);
        assert.equal(onStandby?.port, replica.port);
        assert.notEqual(onStandby?.port, onPrimary?.port);
        // A base backup keeps the primary's system identifier: the standby is a copy of this cluster.
        assert.equal(onStandby?.id, onPrimary?.id);
      });

      test('while the standby lags a batch, the split store answers as of the standby and keys from the primary', async (t) => {
        t.diagnostic(
          `standby made in ${replica.madeInMs} ms (pg_basebackup ${replica.backupMs} ms, ${(replica.copiedBytes / 1e6).toFixed(1)} MB copied)`,
        );
        const { replicaUrl, primary } = await primaryWithBlock1();
        const standbyStore = await openPostgresStore({ url: replicaUrl, logger, readOnly: true });
        const store = splitReads(primary, standbyStore);
        stores.push(store);
        /** What the split store answers about the chain, in one line. */
        const view = async () => {
          const [status, token, alice, bob, transfers] = await Promise.all([
            store.reader.getChainStatus('eth'),
            store.reader.getToken('eth', TOKEN),
            store.reader.getBalance('eth', TOKEN, ALICE),
            store.reader.getBalance('eth', TOKEN, BOB),
            store.reader.listTransfers('eth', TOKEN, 0, 10),
          ]);
          return `indexed ${status?.indexed} transfers ${token?.transferCount} holders ${token?.holderCount} alice ${alice} bob ${bob} list ${transfers.map((x) => x.blockNumber)}`;
        };
        const asOfBlock1 = 'indexed 1 transfers 1 holders 1 alice 5 bob 0 list 1';
        const asOfBlock2 = 'indexed 2 transfers 2 holders 2 alice 3 bob 2 list 2,1';
        assert.equal(await view(), asOfBlock1);

        await holdReplay(t);
        await primary.writer.applyBatch(BLOCK_2);
        assert.equal((await primary.reader.getChainStatus('eth'))?.indexed, 2, 'the primary has block 2');
        // The standby has received block 2's WAL and not replayed it: every answer is block 1's.
        assert.equal(await view(), asOfBlock1);
        // But the status list takes the node head from the primary, so the standby's delay shows.
        const [listed] = await store.reader.listChainStatuses();
        assert.deepEqual([listed?.head, listed?.indexed], [2, 1]);

        // Keys live on the primary: a key made now is found at once, though the standby lacks it.
        const key = { id: 'k1', hash: 'a'.repeat(64), label: '', createdAt: 1, revokedAt: null };
        await store.keys.createApiKey(key);
        assert.deepEqual(await store.keys.findApiKeyByHash(key.hash), key);
        assert.equal(await standbyStore.keys.findApiKeyByHash(key.hash), null);
        assert.equal(await store.keys.revokeApiKey('k1', 5), true);
        assert.equal((await store.keys.findApiKeyByHash(key.hash))?.revokedAt, 5);

        await replica.resumeReplay();
        const ms = await replica.catchUp();
        t.diagnostic(`the standby replayed the held-back batch ${ms} ms after replay resumed`);
        assert.equal(await view(), asOfBlock2);
        assert.equal((await standbyStore.keys.findApiKeyByHash(key.hash))?.revokedAt, 5);
      });

      test('a committed batch reaches the standby within two seconds (replication lag, measured)', async (t) => {
        const { replicaUrl, primary } = await primaryWithBlock1();
        const standbyStore = await openPostgresStore({ url: replicaUrl, logger, readOnly: true });
        stores.push(standbyStore);
        const lags: number[] = [];
        for (let block = 2; block <= 21; block++) {
          // ALICE sends BOB 0 every block: the standby's checkpoint shows each batch's arrival.
          await primary.writer.applyBatch(
            batch({
              from: block,
              to: block,
              head: block,
              transfers: moves(TOKEN, block, [[ALICE, BOB, 0n]]),
              tokens: [],
            }),
          );
          const committed = performance.now();
          await eventually(
            async () =>
              (await standbyStore.writer.getCheckpoint('eth'))?.block === block ? true : undefined,
            5_000,
            `block ${block} on the standby`,
            1,
          );
          lags.push(performance.now() - committed);
        }
        lags.sort((a, b) => a - b);
        const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))]!.toFixed(1);
        t.diagnostic(
          `commit-to-visible on the standby over ${lags.length} batches: p50 ${at(0.5)} ms, max ${at(1)} ms`,
        );
        assert.ok(lags.at(-1)! < 2_000, `a batch took ${lags.at(-1)} ms to reach the standby`);
      });

      test('a write through the standby fails and changes nothing', async () => {
        const { replicaUrl } = await primaryWithBlock1();
        const standbyStore = await openPostgresStore({ url: replicaUrl, logger, readOnly: true });
        stores.push(standbyStore);
        await assert.rejects(standbyStore.writer.applyBatch(BLOCK_2), (error: unknown) => {
          assert.ok(error instanceof pg.DatabaseError);
          assert.equal(error.code, '25006', 'read-only transaction');
          return true;
        });
        await assert.rejects(standbyStore.writer.setChainStatus('eth', { head: 9 }), pg.DatabaseError);
        assert.equal((await standbyStore.writer.getCheckpoint('eth'))?.block, 1);
        assert.equal((await standbyStore.reader.getChainStatus('eth'))?.head, 1);
      });

      test('a schema the standby has not replayed yet is waited for; it opens once replay catches up', async (t) => {
        await holdReplay(t);
        const schema = `s${++schemas}`;
        await querySql(database.url, `CREATE SCHEMA ${schema}`);
        const primaryUrl = withSchema(database.url, schema);
        // The primary migrates on open; the standby holds neither the schema nor its tables yet.
        const primary = await openPostgresStore({ url: primaryUrl, logger });
        stores.push(primary);
        const started = Date.now();
        let opened: number | null = null;
        const opening = openPostgresStore({ url: replica.urlOf(primaryUrl), logger, readOnly: true }).then(
          (store) => {
            opened = Date.now();
            stores.push(store);
            return store;
          },
        );
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        assert.equal(opened, null, 'the open waits while the standby lacks the schema');
        await replica.resumeReplay();
        const store = await opening;
        t.diagnostic(`opened ${opened! - started} ms after the primary migrated (replay held 1.5 s)`);
        assert.ok(opened! - started >= 1_500);
        assert.equal(await store.writer.getCheckpoint('eth'), null);
      });

      test('a standby whose schema is newer than this tokenquery is refused with one clear line', async () => {
        const { primaryUrl, replicaUrl } = await primaryWithBlock1();
        await querySql(primaryUrl, `INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, 'future')`, [
          MIGRATIONS.length + 1,
        ]);
        await replica.catchUp();
        await assert.rejects(
          openPostgresStore({ url: replicaUrl, logger, readOnly: true }),
          (error: unknown) => {
            assert.ok(error instanceof UserError);
            assert.match(error.shortMessage, /read replica .* has a newer schema/);
            return true;
          },
        );
      });

      test("serve --db-read: answers are the standby's, one batch at a time; keys work and are revoked at once on the primary", {
        timeout: 60_000,
      }, async (t) => {
        const { primaryUrl, replicaUrl, primary } = await primaryWithBlock1();
        const createKey = async () => {
          const result = await runCli(['keys', 'create', '--db', primaryUrl]);
          assert.equal(result.code, 0, result.stderr);
          return lines(result.stdout).at(-1)!;
        };
        const firstKey = await createKey();
        const server = spawnCli(['serve', '--db', primaryUrl, '--port', '0'], {
          env: { TOKENQUERY_DB_READ: replicaUrl },
        });
        children.push(server);
        const base = await apiUrl(server, 'tokenquery serving');
        const get = async <T>(path: string, key: string) => {
          const response = await fetch(`${base}${path}?apikey=${key}`);
          return { status: response.status, body: (await response.json()) as T };
        };
        /** What the API answers about the chain, in one line; `/status` first. */
        const view = async (key: string) => {
          const status = await get<{ chains: { eth?: { head: number; indexed: number; lag: number } } }>(
            '/status',
            key,
          );
          const info = await get<{ data?: { transferCnt: number; holderCnt: number } }>(
            `/vipapi/eth/token/${TOKEN}`,
            key,
          );
          const list = await get<{ data?: { block_no: number }[] }>(
            `/vipapi/eth/token/tokentrans/${TOKEN}/1/10`,
            key,
          );
          const balance = async (who: string) =>
            (
              await get<{ data?: { balance: string }[] }>(
                `/vipapi/eth/address/tokenbalance/${who}/${TOKEN}`,
                key,
              )
            ).body.data?.[0]?.balance;
          assert.equal(info.status, 200, JSON.stringify(info.body));
          const eth = status.body.chains.eth;
          return `head ${eth?.head} indexed ${eth?.indexed} lag ${eth?.lag} transfers ${info.body.data?.transferCnt} holders ${info.body.data?.holderCnt} alice ${await balance(ALICE)} bob ${await balance(BOB)} list ${list.body.data?.map((x) => x.block_no)}`;
        };
        const asOfBlock1 = await view(firstKey);
        assert.equal(asOfBlock1, 'head 1 indexed 1 lag 0 transfers 1 holders 1 alice 5 bob 0 list 1');

        await holdReplay(t);
        await primary.writer.applyBatch(BLOCK_2);
        // A key made on the primary now: the standby does not have it, and serve takes it at once.
        const secondKey = await createKey();
        const [onStandby] = await querySql<{ n: number }>(
          replicaUrl,
          'SELECT count(*)::int AS n FROM api_keys',
        );
        assert.equal(onStandby?.n, 1, 'the standby holds only the first key');
        // Every answer is the standby's block 1, on every request: no mix of blocks 1 and 2. Only
        // `/status`'s head is the primary's (the indexer writes it there), so the standby's delay
        // shows as `lag` (its status snapshot is at most 250 ms old: wait for the first).
        const lagging = 'head 2 indexed 1 lag 1 transfers 1 holders 1 alice 5 bob 0 list 1';
        await eventually(
          async () => ((await view(secondKey)) === lagging ? true : undefined),
          5_000,
          '/status to show the primary head over the standby checkpoint',
          50,
        );
        for (let i = 0; i < 3; i++) assert.equal(await view(secondKey), lagging);

        // Revoked on the primary, refused within a second, though the standby still holds it valid.
        const revoke = await runCli(['keys', 'revoke', firstKey, '--db', primaryUrl]);
        assert.equal(revoke.code, 0, revoke.stderr);
        const revokedAt = Date.now();
        while ((await get(`/vipapi/eth/token/${TOKEN}`, firstKey)).status !== 401) {
          assert.ok(Date.now() - revokedAt <= 1_000, 'a revoked key is refused within one second');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        t.diagnostic(`revoked key refused ${Date.now() - revokedAt} ms after the revocation, replay paused`);

        await replica.resumeReplay();
        const caughtUp = Date.now();
        const asOfBlock2 = await eventually(
          async () => {
            const now = await view(secondKey);
            return now.includes('indexed 2') ? now : undefined;
          },
          10_000,
          'serve to show block 2 once replay resumes',
          50,
        );
        t.diagnostic(`serve showed block 2 ${Date.now() - caughtUp} ms after replay resumed`);
        assert.equal(asOfBlock2, 'head 2 indexed 2 lag 0 transfers 2 holders 2 alice 3 bob 2 list 2,1');

        const stopped = await server.stop('SIGTERM');
        assert.equal(stopped.code, 0, stopped.stderr);
        assert.match(stopped.stderr, /API reads chain data from the read replica/);
      });
    });
}
