// `node dist/bench/exactness-sum.js [holders] [sqlite|postgres]` (after `npm run build`): what the
// exactness check's sum of a token's stored balances costs (src/indexer/exactness-check.ts: a scan
// of the token's balances through `StoreWriter.scanBalances`, pages of 5,000), against a baseline
// measured in the same run: one Token Holders page read (`listHolders`, 50 entries) of the same
// token. CPU time of this process (for PostgreSQL the server's is not in it), in 5 interleaved
// rounds. Prints one JSON line; writes nothing into docs/benchmarks.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../src/internal/logger.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createTestDatabase } from '../src/store/postgres/testing/test-database.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { batch, holder, tokenAddress, transferRecord } from '../src/store/testing/batches.js';
import type { Store, TransferRecord } from '../src/store/types.js';

const ZERO = '0x0000000000000000000000000000000000000000';
const PER_BATCH = 5_000;

async function main(): Promise<void> {
  const holders = Number(process.argv[2] ?? 20_000);
  const backend = process.argv[3] ?? 'sqlite';
  const dir = mkdtempSync(join(tmpdir(), 'tq-exactness-sum-'));
  const database = backend === 'postgres' ? await createTestDatabase() : null;
  const store: Store =
    database === null
      ? await openSqliteStore({ path: join(dir, 'sum.sqlite'), logger: silentLogger() })
      : await openPostgresStore({ url: database.url, logger: silentLogger(), maxConnections: 2 });
  try {
    const token = tokenAddress(1);
    for (let first = 0, block = 1; first < holders; first += PER_BATCH, block++) {
      const transfers: TransferRecord[] = [];
      for (let i = first; i < Math.min(holders, first + PER_BATCH); i++) {
        transfers.push(
          transferRecord({
            token,
            blockNumber: block,
            logIndex: i - first,
            from: ZERO,
            to: holder(i + 1),
            value: BigInt(i + 1) * 10n ** 18n,
          }),
        );
      }
      await store.writer.applyBatch(batch({ from: block, to: block, transfers }));
    }
    const sum = async (): Promise<bigint> => {
      let total = 0n;
      let after: string | null = null;
      for (;;) {
        const page = await store.writer.scanBalances('eth', token, after, 5_000);
        if (page.length === 0) return total;
        for (const row of page) if (row.holder !== ZERO) total += row.amount;
        after = page[page.length - 1]!.holder;
      }
    };
    const holderPage = () => store.writer.listHolders('eth', token, 0, 50);
    const cpuMs = async (fn: () => Promise<unknown>, times: number): Promise<number> => {
      const start = process.cpuUsage();
      for (let i = 0; i < times; i++) await fn();
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000 / times;
    };
    await sum();
    await holderPage();
    const rounds: { sumMs: number; pageMs: number }[] = [];
    for (let r = 0; r < 5; r++)
      rounds.push({ sumMs: await cpuMs(sum, 5), pageMs: await cpuMs(holderPage, 200) });
    console.log(
      JSON.stringify({
        backend,
        holders,
        sumMs: rounds.map((r) => r.sumMs.toFixed(2)),
        pageMs: rounds.map((r) => r.pageMs.toFixed(3)),
        ratio: rounds.map((r) => Math.round(r.sumMs / r.pageMs)),
      }),
    );
  } finally {
    await store.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
