/**
 * Measures applyBatch throughput and on-disk size per transfer of the SQLite store.
 * Usage (after `npx tsc`):
 *   node dist/src/store/sqlite/bench-apply-batch.js [transfers] [tokens] [holders] [batch] [uniform|skewed]
 * Defaults: 200 000 transfers over 500 tokens and 50 000 holders, in batches of 5 000, holders
 * picked uniformly (the worst case for the balances B-tree: nearly every balance page changes in
 * every batch). `skewed` picks holders with a power law, closer to real chains where exchanges,
 * routers and pools take part in a large share of transfers.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { silentLogger } from '../../internal/logger.js';
import type { IndexBatch, TransferRecord } from '../types.js';
import { openSqliteStore } from './sqlite-store.js';

const [transferCount = 200_000, tokenCount = 500, holderCount = 50_000, batchSize = 5_000] = process.argv
  .slice(2, 6)
  .map(Number);
const skewed = process.argv[6] === 'skewed';

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const tokens = Array.from({ length: tokenCount }, (_, i) => `0x${hex(0xee000000 + i, 40)}`);
const holders = Array.from({ length: holderCount }, (_, i) => `0x${hex(0x11000000 + i * 7919, 40)}`);

// mulberry32: a fixed seed keeps runs comparable.
let seed = 1;
const rand = (n: number): number => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
};

const pickHolder = (): string =>
  holders[skewed ? Math.floor(holderCount * (rand(1_000_000) / 1_000_000) ** 3) : rand(holderCount)]!;

const PER_BLOCK = 100;
const batchCount = Math.ceil(transferCount / batchSize);
/** Backfill far behind the head, as the indexer runs most of the time: only the newest blocks fall inside the 64-block unfinalized window. */
const finalHead = (batchCount * batchSize) / PER_BLOCK + 64;
function makeBatch(index: number): IndexBatch {
  const firstBlock = 1 + (index * batchSize) / PER_BLOCK;
  const transfers: TransferRecord[] = [];
  for (let i = 0; i < batchSize; i++) {
    const block = firstBlock + Math.floor(i / PER_BLOCK);
    const log = i % PER_BLOCK;
    // Skewed token choice (a few tokens are busy), 5% mints, amounts in 18-decimal units.
    const token = tokens[Math.min(rand(tokenCount), rand(tokenCount))]!;
    transfers.push({
      token,
      blockNumber: block,
      logIndex: log,
      txIndex: log >> 1,
      txHash: `0x${hex(block, 32)}${hex(log, 32)}`,
      from: rand(20) === 0 ? ZERO_ADDRESS : pickHolder(),
      to: pickHolder(),
      value: BigInt(rand(1_000_000)) * 10n ** BigInt(12 + rand(8)),
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
    tokens: [...new Set(transfers.map((t) => t.token))].map((address) => ({
      address,
      name: 'Bench',
      symbol: 'BEN',
      decimals: 18,
    })),
    blocks: [],
    head: finalHead,
    pruneBlocksBelow: finalHead - 64,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'tokenquery-bench-'));
const path = join(dir, 'bench.sqlite');
const store = await openSqliteStore({ path, logger: silentLogger() });
const batches = Array.from({ length: batchCount }, (_, i) => makeBatch(i));

const started = process.hrtime.bigint();
const cpuStarted = process.cpuUsage();
for (const batch of batches) await store.applyBatch(batch);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const cpu = process.cpuUsage(cpuStarted);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const applied = batches.length * batchSize;

const readStarted = process.hrtime.bigint();
const reads = 20_000;
for (let i = 0; i < reads; i++) {
  const token = tokens[i % 50]!;
  await store.getToken('eth', token);
  await store.listTransfers('eth', token, (i % 5) * 10, 10);
}
const readSeconds = Number(process.hrtime.bigint() - readStarted) / 1e9;
await store.close();

// Checkpoint the WAL so the main file holds everything, then measure with dbstat.
const raw = new Database(path);
raw.pragma('wal_checkpoint(TRUNCATE)');
const sizes = raw
  .prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC')
  .all() as { name: string; bytes: number }[];
raw.close();
const transferBytes = sizes.find((s) => s.name === 'transfers')?.bytes ?? 0;

console.log(
  JSON.stringify(
    {
      transfers: applied,
      tokens: tokenCount,
      holders: holderCount,
      batchSize,
      holderPick: skewed ? 'skewed' : 'uniform',
      seconds: Number(seconds.toFixed(3)),
      transfersPerSecond: Math.round(applied / seconds),
      cpuSeconds: Number(cpuSeconds.toFixed(3)),
      transfersPerCpuSecond: Math.round(applied / cpuSeconds),
      readPairsPerSecond: Math.round(reads / readSeconds),
      fileBytes: statSync(path).size,
      transferTableBytesPerTransfer: Number((transferBytes / applied).toFixed(1)),
      fileBytesPerTransfer: Number((statSync(path).size / applied).toFixed(1)),
      tables: Object.fromEntries(sizes.map((s) => [s.name, s.bytes])),
    },
    null,
    2,
  ),
);
rmSync(dir, { recursive: true, force: true });
