/**
 * Reliability, PostgreSQL restarted: `tokenquery start` (indexer + API) on a private PostgreSQL
 * cluster of its own (never the shared one on 5432: other tests use it), while loops of HTTP
 * requests load every API operation. The cluster is restarted (`pg_ctlcluster … restart`, fast
 * mode: every session is cut) once mid-backfill and once while the indexer follows a live chain
 * under load. Pass:
 *
 * - the process never exits and is never restarted: indexer and API reconnect by themselves (the
 *   checkpoint moves on after each restart, every operation answers 200 again);
 * - no HTTP 500, ever. While the database is down an API operation answers the Tokenview envelope
 *   `{"code":40001,"msg":"server is busy"}` with HTTP 503 and `Retry-After`, and `/healthz`
 *   answers 503 `{"status":"unavailable"}`; no 5xx outside the restart's window (from the restart
 *   until the cluster accepts connections again, plus 5 s);
 * - afterwards the store equals the node exactly: every transfer once, every balance, holder
 *   count, transfer count and supply.
 *
 * Needs root for `pg_createcluster` (Debian's postgresql-common). Without it the test fails with a
 * message saying so, unless `TOKENQUERY_CHAOS_SKIP_PG_CLUSTER=1` opts out (the test is then skipped).
 *
 * CI: ~20k transfers, 8 connections. `npm run chaos`: ~60k transfers, 32 connections, 3 restarts
 * under load.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { AnvilInstance } from '../devchain/anvil.js';
import { addressOf, type DeployedToken } from '../devchain/deploy.js';
import { apiPaths } from '../indexer/testing/api-view.js';
import { caughtUp, chaosSeed, openAt, recordResult, scaled } from '../indexer/testing/chaos.js';
import { diffStoreAgainstNode, readNodeTruth } from '../indexer/testing/evm-truth.js';
import {
  settledHead,
  startSprayedChain,
  startTraffic,
  type Traffic,
} from '../indexer/testing/live-traffic.js';
import { silentLogger } from '../internal/logger.js';
import { seededRandom } from '../internal/random.js';
import { waitFor } from '../internal/testing/wait.js';
import {
  apiUrl,
  freePort,
  lines,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
  startOneChainArgs,
} from './testing/cli-process.js';

const logger = silentLogger();
const FINALITY = 3;
const SIZE = scaled(
  { transfers: 30_000, perTx: 100, connections: 8, liveRestarts: 1, downMs: 1_500 },
  { transfers: 60_000, perTx: 100, connections: 32, liveRestarts: 3, downMs: 5_000 },
);
const SKIP = process.env.TOKENQUERY_CHAOS_SKIP_PG_CLUSTER === '1';
/** How long after the cluster accepts connections again a 5xx is still tolerated. */
const GRACE_MS = 5_000;

let anvil: AnvilInstance;
let tokens: DeployedToken[];
let cluster: { version: string; name: string; port: number } | undefined;

function pgctl(...args: string[]): void {
  execFileSync(args[0]!, args.slice(1), { stdio: 'pipe' });
}

/** As `pgctl`, without blocking the event loop: the load and the CLI's output go on meanwhile. */
async function pgctlAsync(...args: string[]): Promise<void> {
  await promisify(execFile)(args[0]!, args.slice(1));
}

async function createCluster(): Promise<{ version: string; name: string; port: number }> {
  let versions: string[];
  try {
    versions = readdirSync('/etc/postgresql').filter((v) => /^\d+$/.test(v));
  } catch {
    versions = [];
  }
  const version = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (version === undefined)
    throw new Error(
      'the postgres-restart scenario needs a PostgreSQL server installed with pg_createcluster (/etc/postgresql/<version>); ' +
        'set TOKENQUERY_CHAOS_SKIP_PG_CLUSTER=1 to skip it',
    );
  const name = `tq${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const port = await freePort();
  try {
    pgctl('pg_createcluster', version, name, '-p', String(port), '--', '--auth=trust');
    const created = { version, name, port };
    cluster = created;
    pgctl('pg_ctlcluster', version, name, 'start');
    return created;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `the postgres-restart scenario could not create a private cluster (it needs root): ${stderr || String(error)}; ` +
        'set TOKENQUERY_CHAOS_SKIP_PG_CLUSTER=1 to skip it',
    );
  }
}

before(async () => {
  if (SKIP) return;
  ({ anvil, tokens } = await startSprayedChain({
    transfers: SIZE.transfers,
    perTx: SIZE.perTx,
    second: 3,
    seeds: [21, 22],
  }));
});

after(async () => {
  try {
    if (cluster) pgctl('pg_dropcluster', '--stop', cluster.version, cluster.name);
  } finally {
    await anvil?.stop();
    removeTempDirs();
  }
});

interface Answer {
  at: number;
  path: string;
  status: number;
  body: string;
  retryAfter: string | null;
}

/** `connections` loops requesting `paths` in turn until stopped; every answer is kept (but 200 bodies). */
function startLoad(base: string, paths: readonly string[], connections: number) {
  const answers: Answer[] = [];
  const failures: { at: number; path: string; error: string }[] = [];
  let stopped = false;
  let next = 0;
  const loops = Array.from({ length: connections }, async () => {
    while (!stopped) {
      const path = paths[next++ % paths.length]!;
      try {
        const response = await fetch(base + path, { signal: AbortSignal.timeout(20_000) });
        const body = await response.text();
        answers.push({
          at: Date.now(),
          path,
          status: response.status,
          body: response.status === 200 ? '' : body,
          retryAfter: response.headers.get('retry-after'),
        });
      } catch (error) {
        failures.push({ at: Date.now(), path, error: String(error) });
      }
      // A down database answers at once: do not spin.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  });
  return {
    answers,
    failures,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

describe('PostgreSQL restarted (postgres)', () => {
  test('the cluster restarts mid-backfill and under load: everything reconnects, no 500, nothing lost or doubled', {
    skip: SKIP ? 'TOKENQUERY_CHAOS_SKIP_PG_CLUSTER=1' : false,
  }, async () => {
    const seed = chaosSeed('postgres-restart');
    const random = seededRandom(seed);
    const { version, name, port } = await createCluster();
    const location = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const created = await runCli(['keys', 'create', '--label', 'pg-restart', '--db', location]);
    assert.equal(created.code, 0, created.stderr);
    const key = lines(created.stdout).at(-1)!;
    const paths = apiPaths(
      key,
      'eth',
      tokens.map((t) => addressOf(t)),
    );
    const cli = spawnCli(startOneChainArgs({ rpc: anvil.url, db: location, finality: FINALITY }));
    const store = await openAt(location, logger);
    const checkpoint = async () => (await store.writer.getCheckpoint('eth'))?.block ?? -1;
    let traffic: Traffic | undefined;
    const windows: { phase: string; from: number; to: number; checkpointBefore: number }[] = [];
    /** Restarts the cluster, then waits until the indexer commits again and every operation answers 200. */
    const restart = async (phase: string) => {
      const checkpointBefore = await checkpoint();
      const from = Date.now();
      // A restart that keeps the server down a while: every session cut (fast mode), then no
      // server at all for `downMs`, as a restart of a busy or slow machine would.
      await pgctlAsync('pg_ctlcluster', version, name, 'stop', '-m', 'fast');
      await new Promise((resolve) => setTimeout(resolve, SIZE.downMs));
      await pgctlAsync('pg_ctlcluster', version, name, 'start');
      const to = Date.now();
      windows.push({ phase, from, to, checkpointBefore });
      await waitFor(
        `the indexer to commit after the restart (${phase})`,
        async () => (await checkpoint()) > checkpointBefore,
        60_000,
        50,
      );
      for (const path of paths)
        await waitFor(
          `${path.replace(/apikey=\w+/, 'apikey=…')} to answer 200 after the restart`,
          async () => {
            const response = await fetch(base + path);
            await response.arrayBuffer();
            return response.status === 200;
          },
          GRACE_MS,
          50,
        );
    };
    let base = '';
    let load: ReturnType<typeof startLoad> | undefined;
    try {
      base = await apiUrl(cli, 'tokenquery started', 30_000);
      load = startLoad(base, paths, SIZE.connections);
      const head0 = await settledHead(anvil.url);
      // Mid-backfill: soon after the indexer starts, while it fetches and writes its first batches.
      await cli.waitFor(
        (_out, err) => logLines(err).some((l) => l.msg === 'indexer starting'),
        30_000,
        'the indexer to start',
      );
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(random() * 300)));
      assert.ok(
        (await checkpoint()) < head0 - FINALITY,
        'the backfill ended before the restart: make it bigger',
      );
      await restart('mid-backfill');
      await waitFor('the backfill', async () => (await checkpoint()) >= head0 - FINALITY, 180_000, 50);

      // Following a live chain, under load.
      traffic = await startTraffic(anvil.url, tokens, { seed, intervalMs: 20 });
      for (let i = 0; i < SIZE.liveRestarts; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await restart(`live ${i + 1}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await traffic.stop();
      traffic = undefined;
      await load.stop();

      const head = await settledHead(anvil.url);
      await waitFor('the index to catch up', () => caughtUp(store, anvil.url, head), 120_000, 50);
      assert.equal(cli.child.exitCode, null, 'start exited');
      const result = await cli.stop('SIGTERM');
      assert.equal(result.code, 0, `exit ${result.code}: ${result.stderr.slice(-2000)}`);

      // The answers: no 500; 5xx only inside a restart's window, and then the documented ones.
      const inWindow = (at: number) => windows.some((w) => at >= w.from && at <= w.to + GRACE_MS);
      const fivexx = load.answers.filter((a) => a.status >= 500);
      const outside = fivexx.filter((a) => !inWindow(a.at));
      assert.deepEqual(outside.slice(0, 5), [], `${outside.length} 5xx outside the restarts' windows`);
      for (const a of fivexx) {
        if (a.path === '/healthz') {
          assert.equal(a.status, 503, `/healthz: ${a.status} ${a.body}`);
          assert.equal(a.body, '{"status":"unavailable"}');
        } else {
          assert.equal(
            a.status,
            503,
            `${a.path.replace(/apikey=\w+/, 'apikey=…')}: HTTP ${a.status} ${a.body}`,
          );
          assert.deepEqual(JSON.parse(a.body), { code: 40001, msg: 'server is busy', data: null });
          assert.ok(a.retryAfter !== null, 'a 503 without Retry-After');
        }
      }
      const other = load.answers.filter((a) => a.status !== 200 && a.status < 500);
      assert.deepEqual(other.slice(0, 5), [], 'answers other than 200 and the documented 503s');
      assert.deepEqual(load.failures.slice(0, 5), [], 'requests that got no answer');
      assert.ok(fivexx.length > 0, 'no request ever met the database down: the scenario proves nothing');
      const logs = logLines(result.stderr);
      assert.doesNotMatch(result.stderr, /^\s+at /m, 'a stack trace was written');

      // The store equals the node: nothing lost, nothing doubled.
      assert.deepEqual(
        await diffStoreAgainstNode(store, 'eth', await readNodeTruth(anvil.url, head)),
        [],
        `the store differs from the node after the restarts (seed ${seed})`,
      );
      const indexerRetries = logs.filter((l) => l.msg === 'indexing step failed; retrying').length;
      const transfers = (await store.reader.listTokens('eth', 0, 100)).tokens.reduce(
        (n, t) => n + t.transferCount,
        0,
      );
      recordResult('postgres-restart', {
        backend: 'postgres',
        seed,
        transfers,
        blocks: head,
        restarts: windows.length,
        requests: load.answers.length,
        unavailable: fivexx.length,
        maxRestartMs: Math.max(...windows.map((w) => w.to - w.from)),
        indexerRetries,
        detail: windows.map((w) => `${w.phase} at block ${w.checkpointBefore}, ${w.to - w.from} ms`),
      });
    } finally {
      await traffic?.stop();
      await load?.stop();
      await cli.stop('SIGKILL');
      await store.close();
    }
  });
});
