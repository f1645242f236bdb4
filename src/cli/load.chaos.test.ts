/**
 * Reliability, load: autocannon drives `tokenquery start` as fast as it answers (many connections,
 * every API operation in turn) while its indexer follows a live anvil chain (transfers, mints and
 * burns keep coming, blocks keep being mined). Pass: zero errors, zero timeouts, zero non-2xx
 * answers, the indexer keeps up meanwhile, memory stays bounded (the server's RSS is sampled every
 * 250 ms and reported), and afterwards the store equals the node. p50/p99 latency and the RSS go
 * into docs/reliability.md through `npm run chaos`.
 *
 * CI: 4 s at 16 connections. `npm run chaos`: 60 s at 64 connections.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import autocannon from 'autocannon';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getBlockNumber } from '../devchain/chain.js';
import { addressOf, type DeployedToken, deployDemoTokens } from '../devchain/deploy.js';
import { SPRAY_GAS_LIMIT, spray } from '../devchain/traffic.js';
import { apiPaths } from '../indexer/testing/api-view.js';
import {
  caughtUp,
  chaosBackends,
  chaosSeed,
  openAt,
  recordResult,
  rssOf,
  scaled,
} from '../indexer/testing/chaos.js';
import { diffStoreAgainstNode, readNodeTruth } from '../indexer/testing/evm-truth.js';
import { settledHead, startMiner, startTraffic } from '../indexer/testing/live-traffic.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import {
  apiUrl,
  getJson,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
  startOneChainArgs,
  tempDir,
} from './testing/cli-process.js';

const logger = silentLogger();
const SIZE = scaled(
  { seconds: 4, connections: 16, history: 5_000, maxRssMb: 600 },
  { seconds: 60, connections: 64, history: 50_000, maxRssMb: 600 },
);
const dir = tempDir('tq-load-');

let anvil: AnvilInstance;
let tokens: DeployedToken[];

before(async () => {
  anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
  tokens = await deployDemoTokens(anvil.url);
  await spray(anvil.url, tokens[0]!, { transfers: SIZE.history, holders: 1_000, seed: 8, perTx: 100 });
});

after(async () => {
  await anvil?.stop();
  removeTempDirs();
});

interface ChainStatus {
  head: number;
  indexed: number;
}

async function ethStatus(base: string): Promise<ChainStatus> {
  const { status, body } = await getJson(`${base}/status`);
  assert.equal(status, 200);
  return (body.chains as Record<string, ChainStatus>).eth!;
}

for (const backend of chaosBackends(dir)) {
  describe(`load (${backend.name})`, () => {
    after(() => backend.cleanup());

    test('the API at its maximum rate while the indexer follows a live chain: no error, bounded memory', async () => {
      const seed = chaosSeed('load');
      const location = await backend.freshLocation('load');
      const created = await runCli(['keys', 'create', '--label', 'load', '--db', location]);
      assert.equal(created.code, 0, created.stderr);
      const key = lines(created.stdout).at(-1)!;
      const cli = spawnCli(startOneChainArgs({ rpc: anvil.url, db: location, finality: 5 }));
      const store = await openAt(location, logger);
      const traffic = await startTraffic(anvil.url, tokens, { seed, intervalMs: 15 });
      const miner = startMiner(anvil.url, 250);
      const samples: number[] = [];
      let sampler: NodeJS.Timeout | undefined;
      try {
        const base = await apiUrl(cli, 'tokenquery started', 30_000).catch(() => '');
        assert.notEqual(base, '', `no API url: ${cli.stderr()}`);
        // Every token indexed (the backfill done) before the load starts.
        const head = await getBlockNumber(anvil.url);
        await waitFor('the backfill', async () => (await ethStatus(base)).indexed >= head, 120_000, 50);
        const pid = cli.child.pid!;
        const baseRss = rssOf(pid) ?? 0;
        sampler = setInterval(() => {
          const rss = rssOf(pid);
          if (rss !== undefined) samples.push(rss);
        }, 250);
        const before = await ethStatus(base);
        const paths = apiPaths(
          key,
          'eth',
          tokens.map((t) => addressOf(t)),
        );
        let next = 0;
        const result = await autocannon({
          url: base,
          connections: SIZE.connections,
          duration: SIZE.seconds,
          timeout: 10,
          requests: [
            {
              method: 'GET',
              setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }),
            },
          ],
        });
        clearInterval(sampler);
        sampler = undefined;
        const afterLoad = await ethStatus(base);
        const nodeHead = await getBlockNumber(anvil.url);
        const codes = result as unknown as Record<'2xx' | '4xx' | '5xx', number>;
        assert.equal(result.errors, 0, `${result.errors} errors`);
        assert.equal(result.timeouts, 0, `${result.timeouts} timeouts`);
        assert.equal(codes['5xx'], 0, `${codes['5xx']} answers 5xx`);
        assert.equal(result.non2xx, 0, `${result.non2xx} answers not 2xx (4xx: ${codes['4xx']})`);
        assert.ok(result.requests.total > 0, 'no request made');
        // The indexer kept following during the load.
        assert.ok(
          afterLoad.indexed > before.indexed,
          `indexed ${before.indexed} → ${afterLoad.indexed} during the load`,
        );
        const peak = Math.max(baseRss, ...samples);
        assert.ok(peak < SIZE.maxRssMb * 2 ** 20, `RSS peaked at ${Math.round(peak / 2 ** 20)} MB`);
        const third = Math.max(1, Math.floor(samples.length / 3));
        const [early, late] = [
          Math.max(0, ...samples.slice(0, third)),
          Math.max(0, ...samples.slice(-third)),
        ];
        if (samples.length >= 60) {
          // Long runs: no steady growth (a leak) once warmed up.
          assert.ok(
            late <= early * 1.25 + 32 * 2 ** 20,
            `RSS grew from ${early} to ${late} bytes over the run`,
          );
        }

        // Afterwards the store equals the node.
        await traffic.stop();
        await miner.stop();
        const finalHead = await settledHead(anvil.url);
        await waitFor('the indexer to catch up', () => caughtUp(store, anvil.url, finalHead), 60_000, 20);
        assert.deepEqual(
          await diffStoreAgainstNode(store, 'eth', await readNodeTruth(anvil.url, finalHead)),
          [],
        );
        const stopped = await cli.stop('SIGTERM');
        assert.equal(stopped.code, 0, stopped.stderr);

        const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
        recordResult('load', {
          backend: backend.name,
          seed,
          seconds: SIZE.seconds,
          connections: SIZE.connections,
          requests: result.requests.total,
          requestsPerSecond: Math.round(result.requests.average),
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          maxMs: result.latency.max,
          errors: result.errors,
          non2xx: result.non2xx,
          rssBeforeMb: mb(baseRss),
          rssPeakMb: mb(peak),
          rssFirstThirdPeakMb: mb(early),
          rssLastThirdPeakMb: mb(late),
          blocksIndexedDuringLoad: afterLoad.indexed - before.indexed,
          lagAfterLoad: nodeHead - afterLoad.indexed,
          transactionsSent: traffic.sent,
        });
      } finally {
        if (sampler) clearInterval(sampler);
        await miner.stop();
        await traffic.stop();
        await cli.stop('SIGKILL');
        await store.close();
      }
    });
  });
}
