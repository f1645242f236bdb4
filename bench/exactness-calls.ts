// `node dist/bench/exactness-calls.js [steps]` (after `npm run build`): the exactness check's node
// calls per block while the indexer follows the head (issue #18: "the integrity check's node calls
// per block"), against the supply reads it follows, counted in the same run. A real anvil runs the
// random traffic of the exact-balance tests (WETH9's canonical bytecode, the Tether-style token,
// the vault, the staking pool: deposits, withdrawals, transfers, issues, redeems, blacklist burns),
// one transaction a block; the indexer follows it with the default supply refresh (a token's
// supply is read after a mint, burn or balance event, and every 1,000 blocks) and its calls are
// counted at the source: `totalSupply` reads (`readSupplies`) and the check's `balanceOf` samples
// (`readBalances`, used by nothing else). Counts, not times: the machine's load does not move them.
// Prints one JSON line; writes nothing into docs/benchmarks.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEvmSource } from '../src/chains/evm/source.js';
import type { EvmSource } from '../src/chains/evm/types.js';
import { createRpcClient } from '../src/chains/jsonrpc/rpc-client.js';
import { startAnvil } from '../src/devchain/anvil.js';
import { getBlockNumber } from '../src/devchain/chain.js';
import { createEvmIndexer } from '../src/indexer/evm-indexer.js';
import { deployExactContracts, exactTraffic } from '../src/indexer/testing/exact-traffic.js';
import { silentLogger } from '../src/internal/logger.js';
import { waitFor } from '../src/internal/testing/wait.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';

async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 300);
  const logger = silentLogger();
  const dir = mkdtempSync(join(tmpdir(), 'tq-exactness-calls-'));
  const anvil = await startAnvil();
  const store = await openSqliteStore({ path: join(dir, 'calls.sqlite'), logger });
  const controller = new AbortController();
  try {
    const contracts = await deployExactContracts(anvil.url);
    const counts = { supplyReads: 0, balanceCalls: 0, checkRounds: 0 };
    const source = createEvmSource({ rpc: createRpcClient({ url: anvil.url, logger }), logger });
    const counting: EvmSource = {
      ...source,
      readSupplies(addresses, block) {
        counts.supplyReads += addresses.length;
        return source.readSupplies(addresses, block);
      },
      readBalances(token, holders, block) {
        counts.checkRounds++;
        counts.balanceCalls += holders.length;
        return source.readBalances(token, holders, block);
      },
    };
    const first = await getBlockNumber(anvil.url);
    const running = createEvmIndexer({
      chain: { name: 'eth', rpcUrl: anvil.url, fromBlock: 0, finalityDepth: 2, pollIntervalMs: 20 },
      source: counting,
      store: store.writer,
      logger,
      signal: controller.signal,
      tty: false,
    }).run();
    // Caught up first, so that every block after it is followed at the head (the check does not run
    // while a backfill defers balances).
    await waitFor(
      'the indexer to reach the head',
      async () => (await store.writer.getCheckpoint('eth'))?.block === first,
    );
    const before = { ...counts };
    await exactTraffic(anvil.url, contracts).run(steps, 7, 3);
    const head = await getBlockNumber(anvil.url);
    await waitFor(
      'the indexer to follow',
      async () => (await store.writer.getCheckpoint('eth'))?.block === head,
      60_000,
    );
    // The last supply round settles.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    controller.abort();
    await running.catch(() => {});
    const blocks = head - first;
    const supplyReads = counts.supplyReads - before.supplyReads;
    const balanceCalls = counts.balanceCalls - before.balanceCalls;
    console.log(
      JSON.stringify({
        blocks,
        supplyReads,
        checkBalanceCalls: balanceCalls,
        checkBatches: counts.checkRounds - before.checkRounds,
        supplyReadsPerBlock: Number((supplyReads / blocks).toFixed(2)),
        checkCallsPerBlock: Number((balanceCalls / blocks).toFixed(2)),
        checkCallsPerSupplyRead: Number((balanceCalls / Math.max(1, supplyReads)).toFixed(2)),
        notExact: await store.reader.countNotExact(),
      }),
    );
  } finally {
    controller.abort();
    await store.close();
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
