/**
 * Reliability, graceful shutdown: `tokenquery start` gets SIGTERM at random moments (seeded) while
 * it indexes — first mid-backfill, then while it follows a live chain — and serves a steady
 * load of every API operation on fresh connections. Each time:
 *
 * - it exits 0 within 5 s, after logging that its indexer stopped (no forced exit);
 * - every request it accepted was answered in full, none with a 5xx (connections made after
 *   the listener closed are refused: that is the only failure allowed, and only after the signal);
 * - the store it leaves is consistent: at its checkpoint, every transfer, balance (against
 *   `balanceOf` at that block), holder and transfer count equals the node's.
 *
 * The first stop comes during start-up, as soon as the indexer has started (the API may not listen
 * yet). Restarted each time, the final store equals a clean run. CI: 4 stops under load; `npm run
 * chaos`: 15.
 */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { addressOf, type DeployedToken, deployDemoTokens } from '../devchain/deploy.js';
import { SPRAY_GAS_LIMIT, spray } from '../devchain/traffic.js';
import { apiPaths } from '../indexer/testing/api-view.js';
import {
  caughtUp,
  chaosBackends,
  chaosSeed,
  openAt,
  recordResult,
  scaled,
} from '../indexer/testing/chaos.js';
import { diffStoreAgainstNode, readNodeTruth } from '../indexer/testing/evm-truth.js';
import { settledHead, startTraffic, type Traffic } from '../indexer/testing/live-traffic.js';
import { diffSnapshots, snapshotStore } from '../indexer/testing/store-snapshots.js';
import { silentLogger } from '../internal/logger.js';
import { seededRandom } from '../internal/random.js';
import { waitFor } from '../internal/testing/wait.js';
import {
  apiUrl,
  lines,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
  startOneChainArgs,
  tempDir,
} from './testing/cli-process.js';

const logger = silentLogger();
const FINALITY = 3;
const SIZE = scaled(
  { transfers: 6_000, perTx: 20, stops: 4, connections: 12, maxDelayMs: 700 },
  { transfers: 30_000, perTx: 25, stops: 15, connections: 32, maxDelayMs: 2_500 },
);
const dir = tempDir('tq-shutdown-');

let anvil: AnvilInstance;
let tokens: DeployedToken[];

before(async () => {
  anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
  tokens = await deployDemoTokens(anvil.url);
  await spray(anvil.url, tokens[0]!, { transfers: SIZE.transfers, holders: 800, seed: 4, perTx: SIZE.perTx });
});

after(async () => {
  await anvil?.stop();
  removeTempDirs();
});

/** One request on a connection of its own; a refused or reset connection before any answer is `refused`. */
function request(
  url: string,
): Promise<{ status: number; bytes: number } | { refused: string } | { broken: string }> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('aborted', () =>
        resolve({ broken: `answer cut after ${bytes} bytes (HTTP ${res.statusCode})` }),
      );
      res.on('error', (error) => resolve({ broken: `answer failed: ${error.message}` }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ refused: error.code ?? error.message }));
  });
}

interface LoadReport {
  answered: number;
  answeredAfterSignal: number;
  statuses: Record<number, number>;
  refusedBeforeSignal: string[];
  broken: string[];
}

/** `connections` loops requesting `paths` in turn until `stop()`, or until refused after `signalledAt` is set. */
function startLoad(base: string, paths: readonly string[], connections: number) {
  const report: LoadReport = {
    answered: 0,
    answeredAfterSignal: 0,
    statuses: {},
    refusedBeforeSignal: [],
    broken: [],
  };
  let signalledAt: number | null = null;
  let stopped = false;
  let next = 0;
  const loops = Array.from({ length: connections }, async () => {
    while (!stopped) {
      const sentAt = Date.now();
      const outcome = await request(base + paths[next++ % paths.length]!);
      if ('status' in outcome) {
        report.answered++;
        report.statuses[outcome.status] = (report.statuses[outcome.status] ?? 0) + 1;
        if (signalledAt !== null && sentAt <= signalledAt) report.answeredAfterSignal++;
      } else if ('broken' in outcome) {
        report.broken.push(outcome.broken);
      } else if (signalledAt === null) {
        report.refusedBeforeSignal.push(outcome.refused);
      } else {
        return; // the listener is closed: this loop is done
      }
    }
  });
  return {
    report,
    signalled() {
      signalledAt = Date.now();
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

function startArgs(location: string): string[] {
  return startOneChainArgs({ rpc: anvil.url, db: location, finality: FINALITY });
}

for (const backend of chaosBackends(dir)) {
  describe(`graceful shutdown (${backend.name})`, () => {
    after(() => backend.cleanup());

    test('SIGTERM under load while indexing: exit 0 within seconds, every accepted request answered, the store consistent', async () => {
      const seed = chaosSeed('shutdown');
      const random = seededRandom(seed);
      const location = await backend.freshLocation('shutdown');
      const created = await runCli(['keys', 'create', '--label', 'shutdown', '--db', location]);
      assert.equal(created.code, 0, created.stderr);
      const key = lines(created.stdout).at(-1)!;
      const paths = apiPaths(
        key,
        'eth',
        tokens.map((t) => addressOf(t)),
      );
      const stops: {
        phase: string;
        checkpoint: number;
        exitMs: number;
        answered: number;
        drained: number;
      }[] = [];
      let traffic: Traffic | undefined;
      try {
        // First a SIGTERM during start-up: the indexer has started writing, the API may not listen yet.
        {
          const cli = spawnCli(startArgs(location));
          await cli.waitFor(
            (_out, err) => logLines(err).some((l) => l.msg === 'indexer starting'),
            30_000,
            'the indexer to start',
          );
          const signalled = Date.now();
          const result = await cli.stop('SIGTERM', 15_000);
          assert.equal(
            result.code,
            0,
            `start-up stop: exit ${result.code} ${result.signal}: ${result.stderr}`,
          );
          assert.ok(Date.now() - signalled < 5_000, 'start-up stop took too long');
        }
        for (let i = 0; i < SIZE.stops; i++) {
          // The first half stop on a quiet chain (mid-backfill, as far as it goes), the rest with
          // live traffic (still backfilling, or following the head).
          const live = i >= Math.ceil(SIZE.stops / 2);
          if (live && traffic === undefined)
            traffic = await startTraffic(anvil.url, tokens, { seed, intervalMs: 20 });
          const cli = spawnCli(startArgs(location));
          const base = await apiUrl(cli, 'tokenquery started', 30_000);
          // The indexer thread starts beside the API and, on a loaded machine, may not have begun
          // yet: these stops are meant to land while it indexes (start-up stops are tested above).
          await cli.waitFor(
            (_out, err) => logLines(err).some((l) => l.msg === 'indexer starting'),
            30_000,
            'the indexer to start',
          );
          const load = startLoad(base, paths, SIZE.connections);
          await new Promise((resolve) =>
            setTimeout(resolve, 100 + Math.floor(random() * (SIZE.maxDelayMs - 100))),
          );
          load.signalled();
          const signalled = Date.now();
          const result = await cli.stop('SIGTERM', 15_000);
          const exitMs = Date.now() - signalled;
          await load.stop();
          const { report } = load;
          assert.equal(result.code, 0, `exit ${result.code} ${result.signal}: ${result.stderr}`);
          assert.ok(exitMs < 5_000, `shutdown took ${exitMs} ms`);
          const logs = logLines(result.stderr);
          assert.ok(
            logs.some((l) => l.msg === 'indexer stopped'),
            `the indexer did not stop by itself: ${result.stderr.split('\n').slice(-15).join('\n')}`,
          );
          const errors = logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
          assert.deepEqual(errors, [], 'error log lines');
          assert.deepEqual(report.broken, [], 'answers cut short');
          assert.deepEqual(report.refusedBeforeSignal, [], 'requests refused before the signal');
          const statuses = Object.keys(report.statuses).map(Number);
          assert.ok(
            statuses.every((s) => s < 500),
            `5xx answers: ${JSON.stringify(report.statuses)}`,
          );
          assert.ok(report.answered > 0, 'no request was answered');

          // The store as left: exact at its checkpoint.
          const store = await openAt(location, logger);
          try {
            const checkpoint = (await store.writer.getCheckpoint('eth'))?.block ?? -1;
            if (checkpoint >= 0) {
              const truth = await readNodeTruth(anvil.url, checkpoint);
              assert.deepEqual(
                await diffStoreAgainstNode(store, 'eth', truth, { supply: false }),
                [],
                `the store is inconsistent at its checkpoint ${checkpoint} after stop ${i + 1} (seed ${seed})`,
              );
            }
            stops.push({
              phase: live ? 'live traffic' : 'quiet chain',
              checkpoint,
              exitMs,
              answered: report.answered,
              drained: report.answeredAfterSignal,
            });
          } finally {
            await store.close();
          }
        }
        await traffic?.stop();
        traffic = undefined;

        // Resume to the end, then compare with a clean run of the same chain.
        const head = await settledHead(anvil.url);
        const finish = async (at: string) => {
          const cli = spawnCli(startArgs(at));
          const store = await openAt(at, logger);
          try {
            await waitFor('the run to catch up', () => caughtUp(store, anvil.url, head), 120_000, 20);
            assert.equal((await cli.stop('SIGTERM')).code, 0);
            return await snapshotStore(store, 'eth');
          } finally {
            await cli.stop('SIGKILL');
            await store.close();
          }
        };
        const actual = await finish(location);
        const expected = await finish(await backend.freshLocation('clean'));
        assert.deepEqual(
          diffSnapshots(actual, expected),
          [],
          `the resumed store differs from a clean run (seed ${seed})`,
        );
        const final = await openAt(location, logger);
        try {
          assert.deepEqual(
            await diffStoreAgainstNode(final, 'eth', await readNodeTruth(anvil.url, head)),
            [],
          );
        } finally {
          await final.close();
        }
        assert.ok(
          stops.some((s) => s.drained > 0),
          `no request in flight at a SIGTERM was ever answered: ${JSON.stringify(stops)}`,
        );
        recordResult('shutdown', {
          backend: backend.name,
          seed,
          stops: stops.length,
          maxExitMs: Math.max(...stops.map((s) => s.exitMs)),
          answered: stops.reduce((n, s) => n + s.answered, 0),
          answeredAfterSignal: stops.reduce((n, s) => n + s.drained, 0),
          detail: stops,
        });
      } finally {
        await traffic?.stop();
      }
    });
  });
}
