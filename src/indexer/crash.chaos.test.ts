/**
 * Reliability, crashes: the `tokenquery index` CLI is killed with SIGKILL at random moments of a
 * backfill (seeded; the seed is printed) and restarted each time; the final store must equal a
 * clean, uninterrupted run token by token, transfer by transfer and balance by balance, and both
 * must equal the node's own logs and `balanceOf` state, the address and holder views included (every
 * token's holder list, every address's holdings and balance entries, a sample of address transfer
 * lists).
 *
 * Kill moments (by the pace of the clean run): one run in ten at 0–400 ms after spawn (start-up,
 * migrations, first requests); about half of the rest before the run's first commit would be due
 * (fetching, decoding, the first merged batch on the writer thread); the others anywhere in what
 * is left of the backfill. A kill counts as mid-backfill when the run was past start-up and its
 * checkpoint was still below the backfill's last block. Once a run gets through, a last run
 * finishes and the store must equal the clean run; such episodes repeat on fresh stores until
 * enough kills have landed mid-backfill.
 *
 * CI: ~10k transfers, at least 10 kills mid-backfill. `npm run chaos`: ~50k transfers, at least 25.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CliProcess, logLines, removeTempDirs, spawnCli, tempDir } from '../cli/testing/cli-process.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getBlockNumber } from '../devchain/chain.js';
import { burnToken, type DeployedToken, deployDemoTokens, mintToken } from '../devchain/deploy.js';
import { SPRAY_GAS_LIMIT, sendTransfers, spray } from '../devchain/traffic.js';
import { silentLogger } from '../internal/logger.js';
import { seededRandom } from '../internal/random.js';
import { waitFor } from '../internal/testing/wait.js';
import type { Store } from '../store/types.js';
import {
  type ChaosBackend,
  chaosBackends,
  chaosSeed,
  openAt,
  recordResult,
  scaled,
} from './testing/chaos.js';
import { diffStoreAgainstNode, readNodeTruth } from './testing/evm-truth.js';
import { diffSnapshots, snapshotStore, transferTotal } from './testing/store-snapshots.js';

const logger = silentLogger();
const FINALITY = 3;
const SIZE = scaled(
  { main: 8_000, second: 2_000, perTx: 20, kills: 10, maxRuns: 60 },
  { main: 40_000, second: 10_000, perTx: 50, kills: 25, maxRuns: 150 },
);

/** The address views compared with the node: every address's holdings, 40 addresses' transfer lists. */
const VIEWS = { transferSample: 40 };

let anvil: AnvilInstance;
let tokens: DeployedToken[];
const dir = tempDir('tq-crash-');

before(async () => {
  anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
  tokens = await deployDemoTokens(anvil.url);
  // Two sprayed tokens (dense blocks), ordinary transfers of all four, a mint and a burn.
  await spray(anvil.url, tokens[0]!, { transfers: SIZE.main, holders: 1_500, seed: 5, perTx: SIZE.perTx });
  await spray(anvil.url, tokens[3]!, { transfers: SIZE.second, holders: 400, seed: 6, perTx: SIZE.perTx });
  await sendTransfers(anvil.url, tokens, { count: 40, seed: 9 });
  await mintToken(anvil.url, tokens[1]!, {
    to: '0x00000000000000000000000000000000000000aa',
    amount: 77n * 10n ** 6n,
  });
  await burnToken(anvil.url, tokens[0]!, { amount: 3n * 10n ** 18n });
});

after(async () => {
  await anvil?.stop();
  removeTempDirs();
});

function indexArgs(location: string): string[] {
  return [
    'index',
    '--rpc',
    `eth=${anvil.url}`,
    '--db',
    location,
    '--finality',
    `eth=${FINALITY}`,
    '--poll-interval',
    '50',
    '--log-level',
    'info',
  ];
}

/** True once the run has logged that its indexer starts (start-up is over: the store is open, the node answered). */
const indexing = (_out: string, err: string) => logLines(err).some((l) => l.msg === 'indexer starting');

/** Checkpoint at the node head and every supply read: what a finished run leaves. */
async function caughtUp(store: Store, head: number): Promise<boolean> {
  return (
    (await store.writer.getCheckpoint('eth'))?.block === head &&
    (await store.writer.tokensNeedingSupply('eth', -1, 1)).length === 0
  );
}

/**
 * Runs `index` until it has caught up, then stops it with SIGTERM. Returns how long its backfill
 * took to its first commit and to a checkpoint at `target`, from "indexer starting".
 */
async function runToCompletion(
  location: string,
  head: number,
  target: number,
): Promise<{ firstCommitMs: number; backfillMs: number }> {
  // Opening migrates the store if no run has yet.
  const store = await openAt(location, logger);
  const before = (await store.writer.getCheckpoint('eth'))?.block ?? -1;
  const cli = spawnCli(indexArgs(location));
  try {
    await cli.waitFor(indexing, 30_000, 'the indexer to start');
    const started = Date.now();
    // A store whose backfill a killed run already finished may see no further commit at all.
    const progressed = async () => {
      const block = (await store.writer.getCheckpoint('eth'))?.block ?? -1;
      return block > before || block >= target;
    };
    await waitFor('a first commit', progressed, 120_000, 5);
    const firstCommitMs = Date.now() - started;
    await waitFor(
      'the backfill',
      async () => ((await store.writer.getCheckpoint('eth'))?.block ?? -1) >= target,
      120_000,
      5,
    );
    const backfillMs = Date.now() - started;
    await waitFor('the run to catch up', () => caughtUp(store, head), 60_000, 10);
    const result = await cli.stop('SIGTERM');
    assert.equal(result.code, 0, `index exited ${result.code}: ${result.stderr}`);
    assertNoErrorLogged(result.stderr);
    return { firstCommitMs, backfillMs };
  } finally {
    await cli.stop('SIGKILL');
    await store.close();
  }
}

function assertNoErrorLogged(stderr: string): void {
  const errors = logLines(stderr).filter((l) => typeof l.level === 'number' && l.level >= 50);
  assert.deepEqual(errors, [], 'error log lines');
}

for (const backend of chaosBackends(dir)) {
  describe(`crashes (${backend.name})`, () => {
    after(() => backend.cleanup());

    test('SIGKILL at random moments of a backfill, restarting each time: the result equals a clean run', async () => {
      await crashScenario(backend);
    });
  });
}

async function crashScenario(backend: ChaosBackend): Promise<void> {
  const seed = chaosSeed('crash');
  const random = seededRandom(seed);
  const head = await getBlockNumber(anvil.url);
  const target = head - FINALITY; // the backfill's last block; above it the indexer follows

  // The clean run: the same CLI, never interrupted.
  const cleanLocation = await backend.freshLocation('clean');
  const { firstCommitMs, backfillMs } = await runToCompletion(cleanLocation, head, target);
  const clean = await openAt(cleanLocation, logger);
  const expected = await snapshotStore(clean, 'eth');
  await clean.close();
  assert.ok(
    transferTotal(expected) >= SIZE.main + SIZE.second,
    `only ${transferTotal(expected)} transfers indexed`,
  );
  const truth = await readNodeTruth(anvil.url, head);
  assert.deepEqual(
    await withStore(cleanLocation, async (store) =>
      diffStoreAgainstNode(store, 'eth', truth, { views: VIEWS }),
    ),
    [],
    `the clean run differs from the node (seed ${seed})`,
  );

  // Episodes: a fresh store, runs killed one after another until one gets through the backfill,
  // then a last run to finish and the comparison with the clean run. Episodes repeat until enough
  // kills have landed mid-backfill (a small chain may be backfilled by the few commits of one run).
  const kills: { episode: number; how: string; before: number; after: number; counted: boolean }[] = [];
  let midBackfill = 0;
  let runs = 0;
  let episode = 0;
  while (midBackfill < SIZE.kills) {
    episode++;
    const location = await backend.freshLocation(`crash${episode}`);
    let reader: Store | null = null;
    try {
      for (;;) {
        const before = reader === null ? -1 : ((await reader.writer.getCheckpoint('eth'))?.block ?? -1);
        if (before >= target || midBackfill >= SIZE.kills) break;
        runs++;
        assert.ok(
          runs <= SIZE.maxRuns,
          `only ${midBackfill} kills landed mid-backfill in ${SIZE.maxRuns} runs (seed ${seed})`,
        );
        const cli: CliProcess = spawnCli(indexArgs(location));
        let how: string;
        const roll = random();
        let delay: number;
        if (roll < 0.1) {
          // Any moment of the first 400 ms: start-up, migrations, the first requests (counted only if past start-up).
          delay = Math.floor(random() * 400);
          how = `${delay} ms after spawn`;
        } else {
          await cli.waitFor(indexing, 30_000, 'the indexer to start');
          // By the clean run's pace: half the kills before the run's first commit would be due
          // (fetching, decoding, the first merged commit), the others anywhere in what is left.
          const share = (target - before) / (target + 1);
          const span = roll < 0.55 ? firstCommitMs : firstCommitMs + (backfillMs - firstCommitMs) * share;
          delay = Math.floor(random() * 0.9 * span);
          how = `${delay} ms into the backfill`;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        const wasIndexing = indexing('', cli.stderr());
        const result = await cli.stop('SIGKILL');
        assert.equal(result.signal, 'SIGKILL', `the run ended by itself: ${result.stderr}`);
        reader ??= await openAt(location, logger);
        const after = (await reader.writer.getCheckpoint('eth'))?.block ?? -1;
        const counted = wasIndexing && after < target;
        if (counted) midBackfill++;
        kills.push({ episode, how, before, after, counted });
      }
    } finally {
      await reader?.close();
    }
    // A last run is left alone to finish; the result must equal the clean run exactly.
    await runToCompletion(location, head, target);
    const actual = await withStore(location, (store) => snapshotStore(store, 'eth'));
    assert.deepEqual(
      diffSnapshots(actual, expected),
      [],
      `episode ${episode}: the crashed store differs from a clean run (seed ${seed}); kills: ${JSON.stringify(kills)}`,
    );
    assert.deepEqual(
      await withStore(location, (store) => diffStoreAgainstNode(store, 'eth', truth, { views: VIEWS })),
      [],
      `episode ${episode}: the crashed store's address and holder views differ from the node (seed ${seed})`,
    );
  }

  recordResult('crash', {
    backend: backend.name,
    seed,
    transfers: transferTotal(expected),
    blocks: head,
    episodes: episode,
    runs: runs + episode,
    killsMidBackfill: midBackfill,
    cleanBackfillMs: backfillMs,
    cleanFirstCommitMs: firstCommitMs,
    kills: kills.map(
      (k) => `#${k.episode} ${k.how}: ${k.before}->${k.after}${k.counted ? '' : ' (not counted)'}`,
    ),
  });
}

async function withStore<T>(location: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openAt(location, logger);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
