/**
 * Scale-out on one PostgreSQL database, as real processes against a real anvil chain: two `serve`
 * replicas (one of them reading chain data through `--db-read` from a real streaming standby of
 * the database's cluster, testing/streaming-replica.ts) and two `index` processes that elect one
 * writer. The writer is SIGKILLed in the middle of the backfill; the standby index process takes
 * over and finishes, and the result must equal a clean single-process run into another database,
 * through the Store (every transfer, every balance, every count) and through HTTP on both
 * replicas. The streaming standby replays the whole backfill meanwhile; its lag is sampled. A key
 * revoked with `keys revoke` must be refused by both replicas within one second.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  apiUrl,
  type CliProcess,
  eventually,
  lines,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
} from '../../cli/testing/cli-process.js';
import { type AnvilInstance, startAnvil } from '../../devchain/anvil.js';
import { getBlockNumber } from '../../devchain/chain.js';
import { type DeployedToken, deployDemoTokens } from '../../devchain/deploy.js';
import { SPRAY_GAS_LIMIT, sendTransfers, spray } from '../../devchain/traffic.js';
import { silentLogger } from '../../internal/logger.js';
import type { Store, TransferRecord } from '../types.js';
import { openPostgresStore } from './postgres-store.js';
import { requireTestServer } from './testing/require-server.js';
import { type StreamingReplica, streamingReplicaOrSkip } from './testing/streaming-replica.js';
import { createTestDatabase, type TestDatabase } from './testing/test-database.js';

/** Sprayed transfers: enough for a backfill of several batches and seconds on 2 busy cores. */
const SPRAYED = 200_000;
const logger = silentLogger();

const children: CliProcess[] = [];
const databases: TestDatabase[] = [];
let anvil: AnvilInstance | undefined;

function spawn(args: string[]): CliProcess {
  const child = spawnCli(args);
  children.push(child);
  return child;
}

after(async () => {
  await Promise.all(children.map((child) => child.stop('SIGKILL')));
  await anvil?.stop();
  await Promise.all(databases.map((db) => db.drop()));
  removeTempDirs();
});

/** The first JSON log line of `child` with message `msg`. */
function logLine(child: CliProcess, msg: string): Record<string, unknown> | undefined {
  return logLines(child.stderr()).find((line) => line.msg === msg);
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** Equal lists, reported by the first difference rather than a diff of 200,000 entries. */
function assertSameList<T>(actual: readonly T[], expected: readonly T[], what: string): void {
  const show = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    if (show(actual[i]) !== show(expected[i])) {
      assert.fail(
        `${what}: entry ${i} differs:\n  got      ${show(actual[i])}\n  expected ${show(expected[i])}`,
      );
    }
  }
  assert.equal(
    actual.length,
    expected.length,
    `${what}: ${actual.length} entries, expected ${expected.length}`,
  );
}

interface StoreState {
  checkpoint: number | null;
  total: number;
  tokens: {
    address: string;
    record: unknown;
    transfers: TransferRecord[];
    /** `holder=amount` for every address in the token's transfers, sorted. */
    balances: string[];
  }[];
}

/** Everything the Store answers about the chain: every token, transfer and balance. */
async function storeState(store: Store): Promise<StoreState> {
  const page = await store.reader.listTokens('eth', 0, 1000);
  const tokens: StoreState['tokens'] = [];
  for (const token of page.tokens) {
    const transfers: TransferRecord[] = [];
    for (let offset = 0; ; offset += 25_000) {
      const chunk = await store.reader.listTransfers('eth', token.address, offset, 25_000);
      transfers.push(...chunk);
      if (chunk.length < 25_000) break;
    }
    const holders = new Set<string>();
    for (const t of transfers) holders.add(t.from).add(t.to);
    const sorted = [...holders].sort();
    const amounts = await mapLimit(sorted, 8, (holder) =>
      store.reader.getBalance('eth', token.address, holder),
    );
    tokens.push({
      address: token.address,
      record: await store.reader.getToken('eth', token.address),
      transfers,
      balances: sorted.map((holder, i) => `${holder}=${amounts[i]}`),
    });
  }
  return { checkpoint: (await store.writer.getCheckpoint('eth'))?.block ?? null, total: page.total, tokens };
}

/** What the API answers on `base`: token list, info and supplies of each token, every transfer page. */
async function httpState(base: string, key: string, tokens: readonly DeployedToken[]): Promise<string[]> {
  const paths = ['/vipapi/eth/tokens/1/50'];
  for (const { address } of tokens) {
    paths.push(`/vipapi/eth/token/${address}`);
    for (const kind of ['totalsupply', 'maxsupply', 'circulatingsupply']) {
      paths.push(`/vipapi/token/${kind}/eth/${address}`);
    }
    // The API pages up to page 50 of 50: the newest 2,500 transfers of each token.
    for (let page = 1; page <= 50; page++) paths.push(`/vipapi/eth/token/tokentrans/${address}/${page}/50`);
  }
  return mapLimit(paths, 8, async (path) => {
    const response = await fetch(`${base}${path}?apikey=${key}`);
    const body = await response.text();
    assert.equal(response.status, 200, `${path}: ${body}`);
    return `${path} ${body}`;
  });
}

const digest = (texts: readonly string[]) => createHash('sha256').update(texts.join('\n')).digest('hex');

if (await requireTestServer()) {
  let tokens: DeployedToken[];
  let head: number;
  let expectedTransfers: number;
  // Made before the databases: it streams and replays the whole backfill, as a real one would.
  const standby = await streamingReplicaOrSkip();
  const replica = standby.replica as StreamingReplica;
  after(() => replica?.stop());

  before(async () => {
    anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
    tokens = await deployDemoTokens(anvil.url);
    // All four tokens with ordinary traffic, then one token with many transfers among many holders.
    const sent = await sendTransfers(anvil.url, tokens, { count: 40, seed: 4 });
    await spray(anvil.url, tokens[0]!, { transfers: SPRAYED, holders: 5_000, perTx: 1_000, seed: 2 });
    head = await getBlockNumber(anvil.url);
    // Each demo token mints its supply once, at construction.
    expectedTransfers = tokens.length + sent.length + SPRAYED;
  });

  describe('scale-out on PostgreSQL', () => {
    test('SIGKILL of the elected indexer mid-backfill: the standby finishes, and both replicas serve what one clean process indexes', {
      timeout: 240_000,
    }, async (t) => {
      const [shared, reference] = await Promise.all([createTestDatabase(), createTestDatabase()]);
      databases.push(shared, reference);
      const indexArgs = (db: string) => [
        'index',
        '--rpc',
        `eth=${anvil!.url}`,
        '--db',
        db,
        '--finality',
        'eth=0',
        '--poll-interval',
        '100',
      ];

      // The clean single-process run, into its own database, side by side.
      const clean = spawn(indexArgs(reference.url));
      // Two index processes on one database: the first to take the lock writes, the other waits.
      const first = spawn(indexArgs(shared.url));
      await first.waitFor(
        () => logLine(first, 'elected writer of the chain') !== undefined,
        30_000,
        'an election',
      );
      const second = spawn(indexArgs(shared.url));
      await second.waitFor(
        () =>
          logLine(second, 'standby: another process writes this chain; this one takes over when it stops') !==
          undefined,
        30_000,
        'the second index process standing by',
      );
      assert.equal(
        logLine(first, 'standby: another process writes this chain; this one takes over when it stops'),
        undefined,
      );
      const standbyLine = logLine(
        second,
        'standby: another process writes this chain; this one takes over when it stops',
      )!;
      assert.equal((standbyLine.writer as { id: string }).id.endsWith(`:${first.child.pid}`), true);

      // Kill the writer once a quarter of the chain is in, with no chance to clean up.
      const store = await openPostgresStore({ url: shared.url, logger, maxConnections: 4 });
      const referenceStore = await openPostgresStore({ url: reference.url, logger, maxConnections: 4 });
      // The streaming standby's lag, as the primary sees it, every 200 ms while the chain goes in.
      const lagSamples: { bytesBehind: number; replayLagMs: number | null }[] = [];
      let sampling = replica !== undefined;
      const sampler = (async () => {
        while (sampling) {
          lagSamples.push(await replica.lag());
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      try {
        const killedAt = await eventually(
          async () => {
            const block = (await store.writer.getCheckpoint('eth'))?.block ?? -1;
            return block >= head / 4 ? block : undefined;
          },
          60_000,
          'a quarter of the backfill',
          20,
        );
        first.child.kill('SIGKILL');
        const killedTime = Date.now();
        await first.exited;
        assert.ok(killedAt < head, `the kill must land mid-backfill (checkpoint ${killedAt}, head ${head})`);

        // The standby takes over within seconds: its session polls the lock every second.
        await second.waitFor(
          () => logLine(second, 'elected writer of the chain') !== undefined,
          10_000,
          'the takeover',
        );
        const takeoverMs = Date.now() - killedTime;
        assert.ok(takeoverMs < 5_000, `takeover took ${takeoverMs} ms`);
        const elected = logLine(second, 'elected writer of the chain')!;
        t.diagnostic(
          `killed the writer at checkpoint ${killedAt} of ${head}; standby elected after ${takeoverMs} ms`,
        );
        assert.equal(elected.epoch, 2);
        // The killed one comes back as a standby.
        const third = spawn(indexArgs(shared.url));
        await third.waitFor(
          () =>
            logLine(
              third,
              'standby: another process writes this chain; this one takes over when it stops',
            ) !== undefined,
          30_000,
          'the restarted process standing by',
        );

        // Both runs finish the chain and read every supply.
        for (const s of [store, referenceStore]) {
          await eventually(
            async () =>
              (await s.writer.getCheckpoint('eth'))?.block === head &&
              (await s.writer.tokensNeedingSupply('eth', 0, 10)).length === 0
                ? true
                : undefined,
            120_000,
            'the chain fully indexed',
            100,
          );
        }

        sampling = false;
        await sampler;
        if (replica !== undefined) {
          const maxBytes = Math.max(...lagSamples.map((sample) => sample.bytesBehind));
          const maxLag = Math.max(...lagSamples.map((sample) => sample.replayLagMs ?? 0));
          t.diagnostic(
            `streaming standby during the backfill: ${lagSamples.length} samples, at most ${(maxBytes / 1e6).toFixed(1)} MB of WAL behind, replay lag at most ${maxLag.toFixed(0)} ms`,
          );
        }

        // Two API replicas on the shared database: A reads it, B reads chain data from the standby.
        const replicaA = spawn(['serve', '--db', shared.url, '--port', '0']);
        const cleanApi = spawn(['serve', '--db', reference.url, '--port', '0']);
        const [baseA, baseClean] = await Promise.all([
          apiUrl(replicaA, 'tokenquery serving'),
          apiUrl(cleanApi, 'tokenquery serving'),
        ]);

        // The Store: every transfer, every balance, every count.
        const [got, want] = await Promise.all([storeState(store), storeState(referenceStore)]);
        assert.equal(got.checkpoint, head);
        assert.equal(got.total, want.total);
        assert.equal(
          want.tokens.reduce((sum, t) => sum + t.transfers.length, 0),
          expectedTransfers,
          'the clean run holds every Transfer log of the chain',
        );
        assertSameList(
          got.tokens.map((t) => t.address),
          want.tokens.map((t) => t.address),
          'tokens',
        );
        for (const [i, token] of got.tokens.entries()) {
          const expected = want.tokens[i]!;
          assert.deepEqual(token.record, expected.record, `token ${token.address}`);
          assertSameList(token.transfers, expected.transfers, `transfers of ${token.address}`);
          assertSameList(token.balances, expected.balances, `balances of ${token.address}`);
        }

        // HTTP, on both replicas, against the clean run's answers.
        const keys = await Promise.all(
          [shared.url, reference.url].map(async (db) => {
            const created = await runCli(['keys', 'create', '--db', db]);
            assert.equal(created.code, 0, created.stderr);
            return lines(created.stdout).at(-1)!;
          }),
        );
        const [answersA, answersClean] = await Promise.all([
          httpState(baseA, keys[0]!, tokens),
          httpState(baseClean, keys[1]!, tokens),
        ]);
        assertSameList(answersA, answersClean, 'replica A against the clean run');
        assert.equal(digest(answersA), digest(answersClean));

        // Replica B: `serve --db-read` on the streaming standby, once it has replayed the chain.
        const bases = [baseA];
        let replicaB: CliProcess | undefined;
        await t.test(
          'replica B reads chain data from a streaming standby (--db-read)',
          {
            skip: standby.skip ?? false,
          },
          async (sub) => {
            sub.diagnostic(
              `standby made in ${replica.madeInMs} ms (pg_basebackup ${replica.backupMs} ms, ${(replica.copiedBytes / 1e6).toFixed(1)} MB copied)`,
            );
            sub.diagnostic(`standby caught up ${await replica.catchUp()} ms after the chain was in`);
            replicaB = spawn([
              'serve',
              '--db',
              shared.url,
              '--db-read',
              replica.urlOf(shared.url),
              '--port',
              '0',
            ]);
            const baseB = await apiUrl(replicaB, 'tokenquery serving');
            bases.push(baseB);
            const answersB = await httpState(baseB, keys[0]!, tokens);
            assertSameList(answersB, answersClean, 'replica B against the clean run');
          },
        );

        // /status on either replica names the new writer (to a key holder: anyone sees the epoch only).
        for (const base of bases) {
          const status = (await (await fetch(`${base}/status?apikey=${keys[0]}`)).json()) as {
            chains: { eth: { indexed: number; writer: { id: string; epoch: number } } };
          };
          assert.equal(status.chains.eth.indexed, head);
          assert.equal(status.chains.eth.writer.epoch, 2);
          assert.ok(
            status.chains.eth.writer.id.endsWith(`:${second.child.pid}`),
            status.chains.eth.writer.id,
          );
        }

        // A key revoked against the database is refused by both replicas within one second. The
        // key is in use on both until then, so each replica holds a fresh cached lookup of it.
        const sharedKey = keys[0]!;
        let revokeStarted = false;
        let revokedAt: number | null = null;
        const pollers = bases.map(async (base) => {
          let accepted = 0;
          for (;;) {
            const response = await fetch(`${base}/vipapi/eth/tokens/1/1?apikey=${sharedKey}`);
            await response.arrayBuffer();
            if (response.status === 200) {
              accepted++;
            } else {
              assert.equal(response.status, 401);
              assert.ok(revokeStarted && accepted > 0, 'refused before the revocation');
              // Refused before the command even exited: 0 ms after it.
              return revokedAt === null ? 0 : Date.now() - revokedAt;
            }
            assert.ok(revokedAt === null || Date.now() - revokedAt < 3_000, `${base} still accepts the key`);
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        revokeStarted = true;
        const revoke = await runCli(['keys', 'revoke', sharedKey, '--db', shared.url]);
        // The revocation committed before the command exited.
        revokedAt = Date.now();
        assert.equal(revoke.code, 0, revoke.stderr);
        const refusedAfter = await Promise.all(pollers);
        for (const ms of refusedAfter) assert.ok(ms <= 1_000, `refused ${ms} ms after the revocation`);
        t.diagnostic(`revoked key refused by the replicas after ${refusedAfter.join(' and ')} ms`);

        const stopped = await Promise.all(
          [second, third, clean, replicaA, cleanApi, ...(replicaB ? [replicaB] : [])].map((c) =>
            c.stop('SIGTERM'),
          ),
        );
        for (const result of stopped) assert.equal(result.code, 0, result.stderr);
      } finally {
        sampling = false;
        await sampler.catch(() => {});
        await store.close();
        await referenceStore.close();
      }
    });

    test('start on PostgreSQL: /status shows whether its own indexer writes or stands by', {
      timeout: 120_000,
    }, async () => {
      const db = await createTestDatabase();
      databases.push(db);
      const startArgs = [
        'start',
        '--rpc',
        `eth=${anvil!.url}`,
        '--from-block',
        `eth=${head - 3}`,
        '--db',
        db.url,
        '--port',
        '0',
        '--poll-interval',
        '100',
      ];
      type Status = { chains: { eth: { role?: string; writer?: { id: string; epoch: number } } } };
      // A key shows the writer's host and pid (anyone sees the election's epoch only).
      const created = await runCli(['keys', 'create', '--db', db.url]);
      assert.equal(created.code, 0, created.stderr);
      const key = lines(created.stdout).at(-1)!;
      const status = async (base: string) =>
        (await (await fetch(`${base}/status?apikey=${key}`)).json()) as Status;
      const first = spawn(startArgs);
      const baseFirst = await apiUrl(first, 'tokenquery started');
      await eventually(
        async () => ((await status(baseFirst)).chains.eth.role === 'writer' ? true : undefined),
        20_000,
        'writer',
      );
      const second = spawn(startArgs);
      const baseSecond = await apiUrl(second, 'tokenquery started');
      await eventually(
        async () => ((await status(baseSecond)).chains.eth.role === 'standby' ? true : undefined),
        20_000,
        'standby',
      );
      const seen = await status(baseSecond);
      assert.equal(seen.chains.eth.writer?.epoch, 1);
      assert.ok(seen.chains.eth.writer?.id.endsWith(`:${first.child.pid}`));

      first.child.kill('SIGKILL');
      await first.exited;
      const after = await eventually(
        async () => {
          const now = await status(baseSecond);
          return now.chains.eth.role === 'writer' ? now : undefined;
        },
        5_000,
        'the standby taking over',
        50,
      );
      assert.equal(after.chains.eth.writer?.epoch, 2);
      assert.ok(after.chains.eth.writer?.id.endsWith(`:${second.child.pid}`));
      const stopped = await second.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
    });
  });
}
