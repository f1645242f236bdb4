// `node dist/bench/reconcile.js [holders,...] [reps]` (after `npm run build`): what reconcile mode
// (src/indexer/reconcile.ts) costs to read a token in full, for N touched addresses, through
// Multicall3's `aggregate3` against the JSON-RPC batch fallback (the baseline, measured in the same
// run, interleaved). A real anvil with a sprayed demo token of N holders, indexed into a SQLite
// store by the real indexer; then, per repetition and path, every stored balance is put 1 off
// (one batch that adds no block, not timed) and a fresh reconcile takes the token up and runs
// rounds until it has nothing left: wall time, JSON-RPC calls (its own count), HTTP requests (the
// RPC client's observer), corrections written. The fallback is the real one, chosen by answering
// "no code" for Multicall3. Prints one JSON line per N; writes nothing into docs/benchmarks.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MULTICALL3_ADDRESS } from '../src/chains/evm/abi.js';
import { createEvmSource } from '../src/chains/evm/source.js';
import type { EvmSource } from '../src/chains/evm/types.js';
import { createRpcClient } from '../src/chains/jsonrpc/rpc-client.js';
import { getAccounts, getBlockNumber } from '../src/devchain/chain.js';
import { createEvmIndexer } from '../src/indexer/evm-indexer.js';
import { createReconcile } from '../src/indexer/reconcile.js';
import { deployMulticall3 } from '../src/indexer/testing/multicall3.js';
import { ZERO_ADDRESS } from '../src/internal/chains.js';
import { silentLogger } from '../src/internal/logger.js';
import { waitFor } from '../src/internal/testing/wait.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { BalanceChange, Store } from '../src/store/types.js';
import { prepareChain } from './chain.js';

const logger = silentLogger();
/** Log indexes of the drift's changes: each once, below reconcile's range. */
let driftIndex = 1_000_000_000;

interface Run {
  ms: number;
  nodeCalls: number;
  requests: number;
  corrections: number;
  rounds: number;
}

/** Puts every stored balance of `token` 1 above what it is (one batch at the checkpoint). */
async function drift(store: Store, token: string): Promise<number> {
  const checkpoint = (await store.writer.getCheckpoint('eth'))!;
  const changes: BalanceChange[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await store.writer.scanHoldings('eth', token, after, 5_000);
    if (page.length === 0) break;
    for (const row of page) {
      if (row.holder === ZERO_ADDRESS) continue; // never a holder, never reconciled
      changes.push({
        token,
        blockNumber: checkpoint.block,
        logIndex: driftIndex++,
        holder: row.holder,
        amount: 1n,
      });
    }
    after = page[page.length - 1]!.holder;
  }
  await store.writer.applyBatch({
    chain: 'eth',
    fromBlock: checkpoint.block + 1,
    continues: checkpoint.block,
    toBlock: checkpoint.block,
    toBlockHash: checkpoint.hash,
    transfers: [],
    balanceChanges: changes,
    tokens: [],
    blocks: [],
    head: checkpoint.block,
    pruneBlocksBelow: 0,
  });
  return changes.length;
}

async function measure(url: string, store: Store, token: string, multicall: boolean): Promise<Run> {
  let requests = 0;
  const source = createEvmSource({
    rpc: createRpcClient({ url, logger, observe: () => requests++ }),
    logger,
  });
  const forced: EvmSource = multicall
    ? source
    : {
        ...source,
        // The chain "has no Multicall3": the reads take the JSON-RPC batch path.
        hasCode: async (addresses, block) =>
          (await source.hasCode(addresses, block)).map(
            (has, i) => has && addresses[i] !== MULTICALL3_ADDRESS,
          ),
      };
  const reconcile = createReconcile({
    chain: 'eth',
    store: store.writer,
    source: forced,
    logger,
    finalityDepth: 1e9,
  });
  reconcile.adopt([token]);
  const started = performance.now();
  while (await reconcile.round()) {}
  const ms = performance.now() - started;
  const { nodeCalls, corrections, rounds } = reconcile.stats;
  return { ms, nodeCalls, requests, corrections, rounds };
}

async function main(): Promise<void> {
  const sizes = (process.argv[2] ?? '1000,10000').split(',').map(Number);
  const reps = Number(process.argv[3] ?? 3);
  for (const holders of sizes) {
    const chain = await prepareChain({ transfers: holders * 2, holders, perBlock: 1_000 });
    const dir = mkdtempSync(join(tmpdir(), 'tq-reconcile-bench-'));
    const store = await openSqliteStore({ path: join(dir, 'r.sqlite'), logger });
    try {
      const url = chain.anvil.url;
      const [from] = await getAccounts(url);
      await deployMulticall3(url, from!);
      const controller = new AbortController();
      const running = createEvmIndexer({
        chain: { name: 'eth', rpcUrl: url, fromBlock: 0, finalityDepth: 0, pollIntervalMs: 50 },
        source: createEvmSource({ rpc: createRpcClient({ url, logger }), logger }),
        store: store.writer,
        logger,
        signal: controller.signal,
        tty: false,
      }).run();
      const head = await getBlockNumber(url);
      await waitFor(
        'the index',
        async () => (await store.writer.getCheckpoint('eth'))?.block === head,
        600_000,
        200,
      );
      controller.abort();
      await running.catch(() => {});
      const token = chain.sprayed.address;
      const touched = (await store.writer.getToken('eth', token))!.holderCount;
      const runs: { multicall: Run; batch: Run }[] = [];
      for (let r = 0; r < reps; r++) {
        const pair: Partial<{ multicall: Run; batch: Run }> = {};
        // Interleaved, the order alternating: neither path always runs on a warmer node.
        for (const path of r % 2 === 0
          ? (['batch', 'multicall'] as const)
          : (['multicall', 'batch'] as const)) {
          const drifted = await drift(store, token);
          const run = await measure(url, store, token, path === 'multicall');
          if (run.corrections !== drifted)
            throw new Error(`${path}: ${run.corrections} corrections of ${drifted}`);
          pair[path] = run;
        }
        runs.push(pair as { multicall: Run; batch: Run });
      }
      console.log(
        JSON.stringify({
          holders: touched,
          batch: runs.map((r) => r.batch),
          multicall: runs.map((r) => r.multicall),
          timeRatio: runs.map((r) => (r.multicall.ms / r.batch.ms).toFixed(3)),
        }),
      );
    } finally {
      await store.close();
      await chain.anvil.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
