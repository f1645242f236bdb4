/**
 * Reliability, faulty nodes: `tokenquery start` indexes a real anvil through the chaos proxy
 * (src/chains/evm/testing/chaos-proxy.ts), which injects HTTP 429 and 503, dropped connections
 * (before and in the middle of an answer), slow answers, malformed JSON, "query returned more
 * than 10000 results" and "block range is too large" refusals, rate-limited calls inside batches,
 * fixed provider limits (a maximum `eth_getLogs` span and result count), and a head that goes
 * backwards: half the requests are answered by a node some blocks behind, which also leaves the
 * newest blocks out of `eth_getLogs` without saying so. Then a full outage (every request 503).
 *
 * Throughout: the process never exits, `/status` shows the chain's lag and its last error while
 * faults happen, and at the end the store equals a clean run (the same CLI straight on the node)
 * and the node's own logs and `balanceOf` state.
 *
 * CI: ~3k transfers of history, 3 s of live traffic, a 2 s outage, half the fault rates.
 * `npm run chaos`: ~20k transfers, 30 s, a 15 s outage, full rates.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ChaosProxy, MIXED_FAULTS, startChaosProxy } from '../chains/evm/testing/chaos-proxy.js';
import {
  apiUrl,
  type CliProcess,
  getJson,
  logLines,
  removeTempDirs,
  spawnCli,
  startOneChainArgs,
  tempDir,
} from '../cli/testing/cli-process.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { type DeployedToken, deployDemoTokens } from '../devchain/deploy.js';
import { SPRAY_GAS_LIMIT, sendTransfers, spray } from '../devchain/traffic.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { caughtUp, chaosBackends, chaosSeed, openAt, recordResult, scaled } from './testing/chaos.js';
import { diffStoreAgainstNode, readNodeTruth } from './testing/evm-truth.js';
import { settledHead, startMiner, startTraffic } from './testing/live-traffic.js';
import { diffSnapshots, snapshotStore } from './testing/store-snapshots.js';

const logger = silentLogger();
const FINALITY = 6;
const LAG = 4;
const SIZE = scaled(
  // CI: half the fault rates and fewer lagging answers, so that the step backoff (up to 30 s after
  // many failures in a row) does not blow the time budget; most kinds still occur.
  { history: 3_000, perTx: 30, liveMs: 3_000, outageMs: 2_000, faultScale: 0.5, lagShare: 0.3, minKinds: 5 },
  {
    history: 20_000,
    perTx: 40,
    liveMs: 30_000,
    outageMs: 15_000,
    faultScale: 1,
    lagShare: 0.5,
    minKinds: 12,
  },
);
const FAULTS = Object.fromEntries(Object.entries(MIXED_FAULTS).map(([k, v]) => [k, v * SIZE.faultScale]));
const dir = tempDir('tq-faulty-');

let anvil: AnvilInstance;
let tokens: DeployedToken[];

before(async () => {
  anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
  tokens = await deployDemoTokens(anvil.url);
  await spray(anvil.url, tokens[0]!, { transfers: SIZE.history, holders: 500, seed: 3, perTx: SIZE.perTx });
});

after(async () => {
  await anvil?.stop();
  removeTempDirs();
});

interface ChainStatus {
  head: number;
  indexed: number;
  lag: number;
  lastError: string | null;
}

function startArgs(rpc: string, location: string): string[] {
  return startOneChainArgs({ rpc, db: location, finality: FINALITY, logLevel: 'debug' });
}

for (const backend of chaosBackends(dir)) {
  describe(`faulty node (${backend.name})`, () => {
    let proxy: ChaosProxy | undefined;
    after(async () => {
      await proxy?.close();
      await backend.cleanup();
    });

    test('429/503, drops, slow and malformed answers, range refusals and a lagging head: never stuck, the result equals a clean run', async () => {
      const seed = chaosSeed('faulty-node');
      proxy = await startChaosProxy({
        target: anvil.url,
        seed,
        faults: FAULTS,
        limits: { maxBlockRange: 40, maxResults: 500 },
        lag: { blocks: LAG, share: SIZE.lagShare },
        slowMs: 400,
      });
      const location = await backend.freshLocation('faulty');
      const cli: CliProcess = spawnCli(startArgs(proxy.url, location));
      const store = await openAt(location, logger);
      const seen = {
        errors: new Set<string>(),
        maxLag: 0,
        polls: 0,
        errorsDuringOutage: 0,
        pollFailures: [] as string[],
      };
      let outage = false;
      let polling = true;
      let base = '';
      const poller = (async () => {
        while (polling) {
          if (base !== '') {
            try {
              const { status, body } = await getJson(`${base}/status`);
              assert.equal(status, 200);
              const eth = (body.chains as Record<string, ChainStatus>).eth!;
              seen.polls++;
              seen.maxLag = Math.max(seen.maxLag, eth.lag);
              if (eth.lastError !== null) {
                seen.errors.add(eth.lastError);
                if (outage) seen.errorsDuringOutage++;
              }
            } catch (error) {
              seen.pollFailures.push(String((error as { cause?: unknown }).cause ?? error));
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      let traffic: Awaited<ReturnType<typeof startTraffic>> | undefined;
      let miner: { stop(): Promise<void> } | undefined;
      try {
        base = await apiUrl(cli, 'tokenquery started', 60_000);
        // Backfill of the history under faults; then live traffic and blocks while faults go on.
        traffic = await startTraffic(anvil.url, tokens, { seed, intervalMs: 30 });
        miner = startMiner(anvil.url, 150);
        // Halfway, new tokens appear (their metadata is read while half the answers lag behind).
        await new Promise((resolve) => setTimeout(resolve, SIZE.liveMs / 2));
        // The traffic sends from the same dev accounts: pause it, or anvil may hand a deployment
        // the nonce of a traffic transaction sent at the same moment ("replacement underpriced").
        await traffic.pause();
        const fresh = await deployDemoTokens(anvil.url);
        await sendTransfers(anvil.url, fresh, { count: 8, seed });
        traffic.resume();
        await new Promise((resolve) => setTimeout(resolve, SIZE.liveMs / 2));
        // A full outage: every request answered 503.
        outage = true;
        proxy.setOutage(true);
        await new Promise((resolve) => setTimeout(resolve, SIZE.outageMs));
        proxy.setOutage(false);
        outage = false;
        await traffic.stop();
        await miner.stop();
        assert.equal(cli.child.exitCode, null, `the process exited: ${cli.stderr()}`);

        // The chain stands still; the indexer, still behind faults, must reach it exactly.
        const head = await settledHead(anvil.url);
        const catchUpStarted = Date.now();
        await waitFor(
          'the indexer to catch up through the faults',
          () => caughtUp(store, anvil.url, head),
          120_000,
          50,
        ).catch(async (error: unknown) => {
          const warnings = logLines(cli.stderr())
            .filter((l) => l.msg !== 'request')
            .map((l) => `${l.time} ${l.level} ${l.msg} ${l.method ?? ''} ${l.reason ?? l.err ?? ''}`);
          throw new Error(
            `${String(error)}; head ${head}, checkpoint ${JSON.stringify(await store.writer.getCheckpoint('eth'))}, ` +
              `supplies pending ${JSON.stringify(await store.writer.tokensNeedingSupply('eth', -1, 5))}, last warnings: ` +
              warnings.slice(-40).join('\n'),
          );
        });
        const catchUpMs = Date.now() - catchUpStarted;
        polling = false;
        await poller;
        const stopped = await cli.stop('SIGTERM');
        assert.equal(stopped.code, 0, stopped.stderr);
        const errors = logLines(stopped.stderr).filter((l) => typeof l.level === 'number' && l.level >= 50);
        assert.deepEqual(errors, [], 'error log lines');

        // Enough kinds of fault happened (12 in all: nine random ones, two fixed limits, the outage), and lagging answers.
        const kinds = Object.keys(proxy.stats.faults);
        assert.ok(
          kinds.length >= SIZE.minKinds,
          `only these faults happened: ${JSON.stringify(proxy.stats.faults)}`,
        );
        assert.ok(proxy.stats.lagged > 0, 'no lagging answer');
        // /status showed the lag and the last error while faults happened.
        assert.ok(seen.maxLag > 0, `no lag ever shown in ${seen.polls} polls`);
        assert.ok(
          seen.errorsDuringOutage > 0,
          `no error shown during the outage: ${[...seen.errors].join(' | ')}`,
        );
        assert.deepEqual(seen.pollFailures, [], '/status failed while the node was faulty');

        // A clean run of the same CLI straight on the node.
        const cleanLocation = await backend.freshLocation('clean');
        const clean = spawnCli(startArgs(anvil.url, cleanLocation));
        const cleanStore = await openAt(cleanLocation, logger);
        try {
          await waitFor('the clean run', () => caughtUp(cleanStore, anvil.url, head), 120_000, 50);
          assert.equal((await clean.stop('SIGTERM')).code, 0);
          const [expected, actual] = [
            await snapshotStore(cleanStore, 'eth'),
            await snapshotStore(store, 'eth'),
          ];
          assert.deepEqual(
            diffSnapshots(actual, expected),
            [],
            `the store differs from a clean run (seed ${seed})`,
          );
          const truth = await readNodeTruth(anvil.url, head);
          assert.deepEqual(
            await diffStoreAgainstNode(store, 'eth', truth),
            [],
            `the store differs from the node (seed ${seed})`,
          );
        } finally {
          await clean.stop('SIGKILL');
          await cleanStore.close();
        }
        recordResult('faulty-node', {
          backend: backend.name,
          seed,
          requests: proxy.stats.requests,
          faults: proxy.faultCount(),
          byFault: proxy.stats.faults,
          lagged: proxy.stats.lagged,
          methods: proxy.stats.methods,
          maxLagShown: seen.maxLag,
          errorsShown: [...seen.errors].slice(0, 8),
          trafficSent: traffic.sent,
          catchUpMs,
        });
      } finally {
        polling = false;
        await poller;
        await miner?.stop();
        await traffic?.stop();
        await cli.stop('SIGKILL');
        await store.close();
      }
    });
  });
}
