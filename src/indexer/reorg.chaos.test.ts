/**
 * Reliability, reorgs: `tokenquery start` follows a live anvil chain (transactions keep coming and
 * blocks keep being mined) that goes through reorgs of depth 1, 2, 5, 12 and 30 (`anvil_reorg`,
 * with new transfers in the replacement blocks). The same node is indexed as two chains with
 * different windows (`--finality eth=40 --finality bsc=8`):
 *
 * - after each reorg, eth converges to the canonical chain: through the API (Token Info counts and
 *   supply, the transfer lists: no phantom transfer, none missing) and through the store (every
 *   holder's balance equals `balanceOf` on the node, holder and transfer counts);
 * - eth reads the node through a proxy that holds `eth_call` answers back for 150 ms, so that
 *   supply reads are often still on their way when a reorg is rolled back;
 * - bsc follows the reorgs inside its window the same way; the 12-deep one is deeper than its
 *   window, so bsc stops with a clear error in `/status` and its data stays exactly as it was
 *   before that reorg (nothing rolled back halfway, nothing from the new fork), while eth goes on.
 *
 * CI: one pass over the five depths, automine plus a block every 100 ms. `npm run chaos`: four
 * passes (twenty reorgs) with interval mining (a block every 500 ms) under heavier traffic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ChaosProxy, startChaosProxy } from '../chains/evm/testing/chaos-proxy.js';
import {
  apiUrl,
  type CliProcess,
  getJson,
  lines,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from '../cli/testing/cli-process.js';
import { encodeCall } from '../devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getAccounts, getBlock, getBlockNumber, reorg } from '../devchain/chain.js';
import { type DeployedToken, deployDemoTokens, selector } from '../devchain/deploy.js';
import { silentLogger } from '../internal/logger.js';
import { seededRandom } from '../internal/random.js';
import { waitFor } from '../internal/testing/wait.js';
import type { Store } from '../store/types.js';
import { diffApiAgainstNode } from './testing/api-view.js';
import { chaosBackends, chaosSeed, openAt, recordResult, scaled } from './testing/chaos.js';
import { diffStoreAgainstNode, readNodeTruth } from './testing/evm-truth.js';
import { dropPendingTransactions, startMiner, startTraffic, type Traffic } from './testing/live-traffic.js';
import { diffSnapshots, snapshotStore } from './testing/store-snapshots.js';

const logger = silentLogger();
const WINDOW = { eth: 40, bsc: 8 };
const DEPTHS = [1, 2, 5, 12, 30];
const SIZE = scaled(
  { passes: 1, blockTime: undefined as number | undefined, mineEveryMs: 100, trafficMs: 25, settleBlocks: 3 },
  { passes: 4, blockTime: 0.5 as number | undefined, mineEveryMs: 0, trafficMs: 10, settleBlocks: 3 },
);
const dir = tempDir('tq-reorg-');

let anvil: AnvilInstance;
let proxy: ChaosProxy;
let tokens: DeployedToken[];
let traffic: Traffic;
let miner: { stop(): Promise<void> } | undefined;

before(async () => {
  anvil = await startAnvil(SIZE.blockTime === undefined ? {} : { blockTime: SIZE.blockTime });
  proxy = await startChaosProxy({ target: anvil.url, methodDelays: { eth_call: 150 } });
  tokens = await deployDemoTokens(anvil.url);
  traffic = await startTraffic(anvil.url, tokens, { seed: 11, intervalMs: SIZE.trafficMs });
  // Automine mines only when a transaction comes; this keeps blocks coming while traffic pauses.
  if (SIZE.mineEveryMs > 0) miner = startMiner(anvil.url, SIZE.mineEveryMs);
});

after(async () => {
  await miner?.stop();
  await traffic?.stop();
  await proxy?.close();
  await anvil?.stop();
  removeTempDirs();
});

interface ChainStatus {
  head: number;
  indexed: number;
  lag: number;
  lastError: string | null;
}

/** `/status`; with a key, the operator's view (the errors' text rather than their class). */
async function status(base: string, key?: string): Promise<Record<string, ChainStatus>> {
  const answer = await getJson(`${base}/status${key === undefined ? '' : `?apikey=${key}`}`);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.chains as Record<string, ChainStatus>;
}

/**
 * The chain's checkpoint is at or above `block` and on the node's chain (its hash is the node's),
 * `block` too where its hash is still kept (inside the window), and every supply is read. On a
 * live chain `block` may have left the window by then (its ref pruned), so the tip's hash is what
 * decides: the indexer checks every block's parent, so a tip on the node's chain has its history there.
 */
async function converged(store: Store, chain: string, block: number): Promise<boolean> {
  const checkpoint = await store.writer.getCheckpoint(chain);
  if (checkpoint === null || checkpoint.block < block || checkpoint.hash === null) return false;
  const tip = await getBlock(anvil.url, checkpoint.block);
  if (tip === null || tip.hash !== checkpoint.hash) return false;
  const [ref] = await store.writer.getBlockRefs(chain, block, block);
  if (ref !== undefined && ref.hash !== (await getBlock(anvil.url, block))?.hash) return false;
  return (await store.writer.tokensNeedingSupply(chain, -1, 1)).length === 0;
}

/** What {@link converged} looks at, for a failure message. */
async function convergenceState(store: Store, chain: string, block: number) {
  const checkpoint = await store.writer.getCheckpoint(chain);
  const [ref] = await store.writer.getBlockRefs(chain, block, block);
  const node = await getBlock(anvil.url, block);
  return {
    chain,
    block,
    checkpoint,
    storedHash: ref?.hash ?? null,
    nodeHash: node?.hash ?? null,
    tokensNeedingSupply: await store.writer.tokensNeedingSupply(chain, -1, 10),
  };
}

for (const backend of chaosBackends(dir)) {
  describe(`reorgs (${backend.name})`, () => {
    after(() => backend.cleanup());

    test('reorgs of depth 1, 2, 5, 12 and 30 on a live chain: the API converges to the canonical chain', async () => {
      const seed = chaosSeed('reorg');
      const random = seededRandom(seed);
      const location = await backend.freshLocation('reorg');
      const created = await runCli(['keys', 'create', '--label', 'reorg', '--db', location]);
      assert.equal(created.code, 0, created.stderr);
      const key = lines(created.stdout).at(-1)!;
      const cli: CliProcess = spawnCli([
        'start',
        '--rpc',
        `eth=${proxy.url}`,
        '--rpc',
        `bsc=${anvil.url}`,
        '--finality',
        `eth=${WINDOW.eth}`,
        '--finality',
        `bsc=${WINDOW.bsc}`,
        '--db',
        location,
        '--port',
        '0',
        '--poll-interval',
        '50',
        '--log-level',
        'info',
      ]);
      const store = await openAt(location, logger);
      const decimals = new Map(tokens.map((t) => [t.address, t.decimals]));
      const accounts = await getAccounts(anvil.url);
      const reorgs: { depth: number; droppedTransfers: number; convergeMs: number; bscStopped: boolean }[] =
        [];
      let bscStopped = false;
      try {
        const base = await apiUrl(cli, 'tokenquery started', 30_000);
        for (let pass = 0; pass < SIZE.passes; pass++) {
          for (const depth of DEPTHS) {
            const live: string[] = bscStopped ? ['eth'] : ['eth', 'bsc'];
            // Let the chain grow past the reorg depth with traffic in it, and the indexers catch up.
            const grownTo = (await getBlockNumber(anvil.url)) + depth + SIZE.settleBlocks;
            await waitFor(
              'the chain to grow',
              async () => (await getBlockNumber(anvil.url)) >= grownTo,
              60_000,
            );
            const head = await getBlockNumber(anvil.url);
            await waitFor(
              'the indexers to reach the head',
              async () => {
                const s = await status(base);
                return live.every((c) => (s[c]?.indexed ?? -1) >= head);
              },
              60_000,
            );
            await traffic.pause();
            const deep = !bscStopped && depth > WINDOW.bsc;
            let bscBefore = null as Awaited<ReturnType<typeof snapshotStore>> | null;
            if (deep) {
              // bsc will meet a reorg deeper than its window: remember exactly what it holds now.
              // Traffic sends without waiting for its transactions to be mined: one still pending
              // would be mined after the snapshot and indexed before the reorg stops bsc.
              await dropPendingTransactions(anvil.url);
              const quiet = await getBlockNumber(anvil.url);
              await waitFor('bsc to settle', () => converged(store, 'bsc', quiet), 30_000);
              bscBefore = await snapshotStore(store, 'bsc');
            }
            // The reorg: the newest `depth` blocks are replaced; the new ones carry other transfers.
            const top = await getBlockNumber(anvil.url);
            const oldTruth = await readNodeTruth(anvil.url, top);
            const replaced = [...oldTruth.tokens.values()].reduce(
              (n, t) => n + t.transfers.filter((x) => x.blockNumber > top - depth).length,
              0,
            );
            const count = 1 + Math.floor(random() * 3);
            const txs = Array.from({ length: count }, () => {
              const token = tokens[Math.floor(random() * tokens.length)]!;
              const data = encodeCall(selector('transfer(address,uint256)'), [
                {
                  type: 'address',
                  value: `0x${'cc'.repeat(19)}${Math.floor(random() * 256)
                    .toString(16)
                    .padStart(2, '0')}`,
                },
                { type: 'uint256', value: BigInt(1 + Math.floor(random() * 1e6)) },
              ]);
              return {
                tx: { from: accounts[1 + Math.floor(random() * 9)]!, to: token.address, data, gas: 100_000 },
                blockOffset: Math.floor(random() * depth),
              };
            });
            await reorg(anvil.url, depth, txs);
            await dropPendingTransactions(anvil.url);
            const reorgedAt = Date.now();

            // Convergence: eth (and bsc inside its window) on the node's chain, then checked in full.
            const settled = await getBlockNumber(anvil.url);
            const converging: string[] = live.filter((c) => !(c === 'bsc' && deep));
            try {
              await waitFor(
                `convergence after the ${depth}-block reorg`,
                async () =>
                  (await Promise.all(converging.map((c) => converged(store, c, settled)))).every(Boolean),
                60_000,
              );
            } catch (error) {
              // A rare stall seen under load: say where each chain stands, so the next one is diagnosable.
              const where = await Promise.all(converging.map((c) => convergenceState(store, c, settled)));
              const tail = cli.stderr().split('\n').slice(-40).join('\n');
              throw new Error(
                `${String(error)}\nstate: ${JSON.stringify(where)}\n/status: ${JSON.stringify(await status(base).catch(String))}\nCLI stderr (tail):\n${tail}`,
              );
            }
            const convergeMs = Date.now() - reorgedAt;
            const truth = await readNodeTruth(anvil.url, await getBlockNumber(anvil.url));
            for (const chain of converging) {
              assert.deepEqual(
                await diffApiAgainstNode(base, key, chain, truth, decimals),
                [],
                `${chain}: the API differs from the node after a ${depth}-block reorg (seed ${seed})`,
              );
              assert.deepEqual(
                // The address and holder views too: rollbacks must undo them exactly.
                await diffStoreAgainstNode(store, chain, truth, { views: { transferSample: 20 } }),
                [],
                `${chain}: the store differs from the node after a ${depth}-block reorg (seed ${seed})`,
              );
            }
            if (deep) {
              await waitFor(
                'bsc to stop with a clear error',
                async () => (await status(base)).bsc?.lastError === 'reorg too deep',
                30_000,
              );
              assert.deepEqual(
                diffSnapshots(await snapshotStore(store, 'bsc'), bscBefore!, { checkpoint: false }),
                [],
                'bsc changed after the reorg deeper than its window',
              );
              const stopped = (await status(base, key)).bsc!;
              assert.match(stopped.lastError!, /deeper than the unfinalized window.*raise the window/);
              bscStopped = true;
            }
            reorgs.push({ depth, droppedTransfers: replaced, convergeMs, bscStopped });
            traffic.resume();
          }
        }
        // bsc stays stopped, untouched, and still served; eth still moves.
        const final = await status(base);
        assert.equal(final.bsc?.lastError, 'reorg too deep');
        assert.equal(final.eth?.lastError, null);
        const stop = await cli.stop('SIGTERM');
        assert.equal(stop.code, 0, stop.stderr);
        // The only error logged is bsc's stop.
        const errors = logLines(stop.stderr).filter((l) => typeof l.level === 'number' && l.level >= 50);
        assert.ok(
          errors.every((l) => l.chain === 'bsc' && /deeper than the unfinalized window/.test(String(l.err))),
          JSON.stringify(errors),
        );
        assert.ok(
          reorgs.filter((r) => r.depth > 1).every((r) => r.droppedTransfers > 0),
          `some reorgs dropped no transfer, proving nothing: ${JSON.stringify(reorgs)}`,
        );
        recordResult('reorg', {
          backend: backend.name,
          seed,
          reorgs: reorgs.length,
          depths: reorgs.map((r) => r.depth),
          droppedTransfers: reorgs.reduce((n, r) => n + r.droppedTransfers, 0),
          maxConvergeMs: Math.max(...reorgs.map((r) => r.convergeMs)),
          trafficSent: traffic.sent,
        });
      } finally {
        await cli.stop('SIGKILL');
        await store.close();
      }
    });
  });
}
