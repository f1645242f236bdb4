// `node dist/bench/exactness-sum.js [holders] [sqlite|postgres]` (after `npm run build`): what the
// exactness check's sum of a token's stored balances costs, now (the running sum,
// `StoreWriter.getBalanceSum`: one row) and before (a scan of the token's balances through
// `HistoryScans.scanBalances`, pages of 5,000, as exactness-check.ts did), against a baseline
// measured in the same run: one Token Holders page read (`listHolders`, 50 entries) of the same
// token. Wall time per call (for PostgreSQL it includes the server's work and the round trips),
// in 5 interleaved rounds; the two sums are checked equal first. Prints one JSON line; writes
// nothing into docs/benchmarks.md.
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
    const scanned = async (): Promise<bigint> => {
      let total = 0n;
      let after: string | null = null;
      for (;;) {
        const page = await store.scans.scanBalances('eth', token, after, 5_000);
        if (page.length === 0) return total;
        for (const row of page) if (row.holder !== ZERO) total += row.amount;
        after = page[page.length - 1]!.holder;
      }
    };
    const running = async (): Promise<bigint> => (await store.writer.getBalanceSum('eth', token)) ?? 0n;
    const holderPage = () => store.writer.listHolders('eth', token, 0, 50);
    const wallMs = async (fn: () => Promise<unknown>, times: number): Promise<number> => {
      const start = performance.now();
      for (let i = 0; i < times; i++) await fn();
      return (performance.now() - start) / times;
    };
    const [viaScan, viaRunning] = [await scanned(), await running()];
    if (viaScan !== viaRunning)
      throw new Error(`running sum ${viaRunning} differs from the scan's ${viaScan}`);
    await holderPage();
    const rounds: { scanMs: number; sumMs: number; pageMs: number }[] = [];
    for (let r = 0; r < 5; r++) {
      rounds.push({
        scanMs: await wallMs(scanned, 5),
        sumMs: await wallMs(running, 200),
        pageMs: await wallMs(holderPage, 200),
      });
    }
    const fixed = (values: number[], digits: number) => values.map((v) => v.toFixed(digits));
    console.log(
      JSON.stringify({
        backend,
        holders,
        scanMs: fixed(
          rounds.map((r) => r.scanMs),
          2,
        ),
        sumMs: fixed(
          rounds.map((r) => r.sumMs),
          3,
        ),
        pageMs: fixed(
          rounds.map((r) => r.pageMs),
          3,
        ),
        scanOverPage: rounds.map((r) => Math.round(r.scanMs / r.pageMs)),
        sumOverPage: fixed(
          rounds.map((r) => r.sumMs / r.pageMs),
          2,
        ),
        scanOverSum: rounds.map((r) => Math.round(r.scanMs / r.sumMs)),
      }),
    );
  } finally {
    await store.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
