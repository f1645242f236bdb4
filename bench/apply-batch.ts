/**
 * Measures applyBatch throughput, read latency and storage per transfer of either backend on
 * the same generated history (a fixed seed), so the two figures are comparable. Usage (after `npx tsc`):
 *   node dist/bench/apply-batch.js <sqlite|postgres|both> [transfers] [tokens] [holders] [batch] [uniform|skewed|spray]
 * BENCH_COPY_FROM_ROWS=<n> opens the PostgreSQL store with that `copyFromRows` (Infinity: no COPY).
 * BENCH_DEFER=1 defers balances like a backfill (`IndexBatch.deferBalances`). BENCH_CHANGES=<n>
 * (`spray` only) makes n % of the logs balance changes without a transfer (`IndexBatch.balanceChanges`:
 * half deposits to a holder, half withdrawals of the sender), as on a chain busy with WETH9;
 * "transfers" in the figures then counts both kinds of log.
 * Defaults: 200 000 transfers over 500 tokens and 50 000 holders, in batches of 5 000.
 * `spray` is the backfill benchmark's shape: each token minted once to one sender, who then sends
 * to holders picked uniformly, so no balance goes negative (every row takes the writer's hex fast
 * path). `sqlite 400000 1 20000 20000 spray` is the backfill's writer thread alone.
 * PostgreSQL: a throwaway database on TOKENQUERY_TEST_POSTGRES (default the local server) is
 * created and dropped.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZERO_ADDRESS } from '../src/internal/chains.js';
import { silentLogger } from '../src/internal/logger.js';
import { seededRandomInt } from '../src/internal/random.js';
import { openStore } from '../src/store/open.js';
import { encodeHex } from '../src/store/postgres/codec.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { LIST_TRANSFERS_SQL } from '../src/store/postgres/statements.js';
import {
  createTestDatabase,
  querySql,
  TEST_POSTGRES_URL,
} from '../src/store/postgres/testing/test-database.js';
import type { BalanceChange, IndexBatch, Store, TransferRecord } from '../src/store/types.js';

const backendArg = process.argv[2] ?? 'both';
if (!['sqlite', 'postgres', 'both'].includes(backendArg)) {
  console.error(
    'usage: apply-batch.js <sqlite|postgres|both> [transfers] [tokens] [holders] [batch] [uniform|skewed|spray]',
  );
  process.exit(2);
}
const [transferCount = 200_000, tokenCount = 500, holderCount = 50_000, batchSize = 5_000] = process.argv
  .slice(3, 7)
  .map(Number);
const holderPick = process.argv[7] ?? 'uniform';
if (!['uniform', 'skewed', 'spray'].includes(holderPick)) {
  console.error(`unknown holder pick "${holderPick}": use uniform, skewed or spray`);
  process.exit(2);
}
const skewed = holderPick === 'skewed';
const spray = holderPick === 'spray';
/** Percent of the logs that are balance changes (BENCH_CHANGES, `spray` only). */
const changePercent = spray ? Number(process.env.BENCH_CHANGES ?? 0) : 0;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const tokens = Array.from({ length: tokenCount }, (_, i) => `0x${hex(0xee000000 + i, 40)}`);
const holders = Array.from({ length: holderCount }, (_, i) => `0x${hex(0x11000000 + i * 7919, 40)}`);
const PER_BLOCK = 100;
const batchCount = Math.ceil(transferCount / batchSize);
/** Backfill far behind the head: only the newest blocks fall inside the 64-block unfinalized window. */
const finalHead = (batchCount * batchSize) / PER_BLOCK + 64;

/** The same batches on every call (mulberry32 with a fixed seed). */
function makeBatches(): IndexBatch[] {
  const rand = seededRandomInt(1);
  const pickHolder = (): string =>
    holders[skewed ? Math.floor(holderCount * (rand(1_000_000) / 1_000_000) ** 3) : rand(holderCount)]!;
  const minted = new Set<string>();
  const makeBatch = (index: number): IndexBatch => {
    const firstBlock = 1 + (index * batchSize) / PER_BLOCK;
    const transfers: TransferRecord[] = [];
    const balanceChanges: BalanceChange[] = [];
    for (let i = 0; i < batchSize; i++) {
      const block = firstBlock + Math.floor(i / PER_BLOCK);
      const log = i % PER_BLOCK;
      // Skewed token choice (a few tokens are busy), 5% mints, amounts in 18-decimal units.
      const token = tokens[Math.min(rand(tokenCount), rand(tokenCount))]!;
      // `spray`: the token's first transfer mints to the sender, who then sends to the others.
      const mint = spray && !minted.has(token);
      if (spray) minted.add(token);
      // Drawn only with BENCH_CHANGES, so that the default history stays the same.
      if (!mint && changePercent > 0 && rand(100) < changePercent) {
        const deposit = rand(2) === 0;
        balanceChanges.push({
          token,
          blockNumber: block,
          logIndex: log,
          holder: deposit ? holders[1 + rand(holderCount - 1)]! : holders[0]!,
          amount: (deposit ? 1n : -1n) * BigInt(1 + rand(1_000_000)) * 10n ** 12n,
        });
        continue;
      }
      const parties = spray
        ? {
            from: mint ? ZERO_ADDRESS : holders[0]!,
            to: mint ? holders[0]! : holders[1 + rand(holderCount - 1)]!,
            value: mint ? 10n ** 40n : BigInt(1 + rand(1_000_000)) * 10n ** 12n,
          }
        : {
            from: rand(20) === 0 ? ZERO_ADDRESS : pickHolder(),
            to: pickHolder(),
            value: BigInt(rand(1_000_000)) * 10n ** BigInt(12 + rand(8)),
          };
      transfers.push({
        token,
        blockNumber: block,
        logIndex: log,
        txIndex: log >> 1,
        txHash: `0x${hex(block, 32)}${hex(log, 32)}`,
        ...parties,
        time: 1_700_000_000 + block * 12,
      });
    }
    const lastBlock = firstBlock + batchSize / PER_BLOCK - 1;
    return {
      chain: 'eth',
      fromBlock: firstBlock,
      toBlock: lastBlock,
      toBlockHash: `0x${hex(lastBlock, 64)}`,
      transfers,
      ...(balanceChanges.length === 0 ? {} : { balanceChanges }),
      tokens: [...new Set([...transfers, ...balanceChanges].map((t) => t.token))].map((address) => ({
        address,
        name: 'Bench',
        symbol: 'BEN',
        decimals: 18,
      })),
      blocks: [],
      head: finalHead,
      pruneBlocksBelow: finalHead - 64,
      // BENCH_DEFER=1: balances written behind the checkpoint, as a backfill's are; the last
      // batch writes them, so that their cost is measured.
      deferBalances: process.env.BENCH_DEFER === '1' && index < batchCount - 1,
    };
  };
  return Array.from({ length: batchCount }, (_, i) => makeBatch(i));
}

/**
 * CPU seconds used so far by the server processes serving `database` (PostgreSQL on this
 * machine only: read from /proc), or null when they cannot be seen. With other work on the
 * machine, CPU per transfer is steadier than wall time.
 */
async function serverCpuSeconds(url: string, database: string): Promise<number | null> {
  const rows = await querySql<{ pid: number }>(
    url,
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [database],
  );
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      // Fields 14 and 15 (utime, stime), after the parenthesized command name.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return ticks / 100; // USER_HZ is 100 on Linux
}

async function measure(store: Store, server?: () => Promise<number | null>) {
  const batches = makeBatches();
  const serverStarted = (await server?.()) ?? null;
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  for (const batch of batches) await store.writer.applyBatch(batch);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuStarted);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const serverEnded = (await server?.()) ?? null;
  const serverSeconds = serverStarted === null || serverEnded === null ? null : serverEnded - serverStarted;
  const applied = batches.length * batchSize;

  const readStarted = process.hrtime.bigint();
  const reads = 20_000;
  for (let i = 0; i < reads; i++) {
    const token = tokens[i % 50]!;
    await store.reader.getToken('eth', token);
    await store.reader.listTransfers('eth', token, (i % 5) * 10, 10);
  }
  const readSeconds = Number(process.hrtime.bigint() - readStarted) / 1e9;
  return {
    transfers: applied,
    seconds: Number(seconds.toFixed(3)),
    transfersPerSecond: Math.round(applied / seconds),
    /** CPU of this process (SQLite: all of the work, writer thread included). */
    clientCpuSeconds: Number(cpuSeconds.toFixed(3)),
    /** PostgreSQL: CPU of the server processes during the batches. */
    serverCpuSeconds: serverSeconds === null ? null : Number(serverSeconds.toFixed(2)),
    transfersPerCpuSecond: Math.round(applied / (cpuSeconds + (serverSeconds ?? 0))),
    readPairsPerSecond: Math.round(reads / readSeconds),
  };
}

async function benchSqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'tokenquery-bench-'));
  const path = join(dir, 'bench.sqlite');
  try {
    // As the indexer opens it (a variable, so that an option this tree's open.ts lacks is ignored).
    const options = { location: path, logger: silentLogger(), writerThread: true };
    const store = await openStore(options);
    const figures = await measure(store);
    await store.close();
    const { default: Database } = await import('better-sqlite3');
    const raw = new Database(path);
    raw.pragma('wal_checkpoint(TRUNCATE)');
    const sizes = raw
      .prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC')
      .all() as { name: string; bytes: number }[];
    raw.close();
    const transferBytes = sizes.find((s) => s.name === 'transfers')?.bytes ?? 0;
    const fileBytes = statSync(path).size;
    return {
      backend: 'sqlite',
      ...figures,
      transferTableBytesPerTransfer: Number((transferBytes / figures.transfers).toFixed(1)),
      totalBytesPerTransfer: Number((fileBytes / figures.transfers).toFixed(1)),
      tables: Object.fromEntries(sizes.map((s) => [s.name, s.bytes])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchPostgres() {
  const database = await createTestDatabase();
  try {
    // BENCH_COPY_FROM_ROWS sets the store's `copyFromRows` (Infinity: no COPY), for A/B runs.
    const copyFromRows = process.env.BENCH_COPY_FROM_ROWS;
    const store =
      copyFromRows === undefined
        ? await openStore({ location: database.url, logger: silentLogger() })
        : await openPostgresStore({
            url: database.url,
            logger: silentLogger(),
            copyFromRows: Number(copyFromRows),
          });
    // The pool's first connection is open (migrations ran on it); batches run on it alone.
    const figures = await measure(store, () => serverCpuSeconds(TEST_POSTGRES_URL, database.name));
    await store.close();
    // Sizes after VACUUM (visibility maps, no dead tuples counted as live data).
    await querySql(database.url, 'VACUUM ANALYZE');
    const sizes = await querySql<{ name: string; bytes: string }>(
      database.url,
      `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 't') ORDER BY 2 DESC`,
    );
    const total = await querySql<{ transfers: string; all: string }>(
      database.url,
      `SELECT (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('transfers')) AS transfers,
        (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind = 'r') AS "all"`,
    );
    const [balanceRows] = await querySql<{ n: string }>(database.url, 'SELECT count(*) AS n FROM balances');
    // B-tree leaves split half-and-half when a token's range fills up in the middle of the index,
    // so the live primary key is looser than a freshly built one; show both.
    // transfers_pkey is partitioned (one partition per chain): its size is its partitions'.
    const pkeyBytes = async () =>
      Number(
        (
          await querySql<{ bytes: string }>(
            database.url,
            "SELECT sum(pg_relation_size(relid)) AS bytes FROM pg_partition_tree('transfers_pkey')",
          )
        )[0]!.bytes,
      );
    const livePkey = await pkeyBytes();
    await querySql(database.url, 'REINDEX INDEX transfers_pkey');
    const rebuiltPkey = await pkeyBytes();
    // The plan of a deep page (page 11 of size 50) of the busiest token.
    const plan = await querySql<{ 'QUERY PLAN': string }>(
      database.url,
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${LIST_TRANSFERS_SQL}`,
      ['eth', encodeHex(tokens[0]!), 50, 500],
    );
    return {
      backend: 'postgres',
      ...figures,
      transferTableBytesPerTransfer: Number((Number(total[0]!.transfers) / figures.transfers).toFixed(1)),
      totalBytesPerTransfer: Number((Number(total[0]!.all) / figures.transfers).toFixed(1)),
      balanceRows: Number(balanceRows!.n),
      transfersPkeyBytesPerTransfer: Number((livePkey / figures.transfers).toFixed(1)),
      transfersPkeyRebuiltBytesPerTransfer: Number((rebuiltPkey / figures.transfers).toFixed(1)),
      relations: Object.fromEntries(sizes.map((s) => [s.name, Number(s.bytes)])),
      listTransfersPlan: plan.map((row) => row['QUERY PLAN']),
    };
  } finally {
    await database.drop();
  }
}

const results = [];
if (backendArg !== 'postgres') results.push(await benchSqlite());
if (backendArg !== 'sqlite') results.push(await benchPostgres());
console.log(
  JSON.stringify(
    {
      transfers: batchCount * batchSize,
      tokens: tokenCount,
      holders: holderCount,
      batchSize,
      holderPick,
      results,
    },
    null,
    2,
  ),
);
