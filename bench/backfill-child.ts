// One backfill measurement in a process of its own (forked by backfill.ts): either the bare
// `eth_getLogs` baseline or the real indexer into a fresh SQLite store or PostgreSQL database.
import { statSync } from 'node:fs';
import { createEvmSource } from '../src/chains/evm/source.js';
import { type AnswerScanner, createRpcClient } from '../src/chains/jsonrpc/rpc-client.js';
import { createEvmIndexer } from '../src/indexer/evm-indexer.js';
import { silentLogger } from '../src/internal/logger.js';
import { openStore } from '../src/store/open.js';
import type { IndexBatch, StoreWriter } from '../src/store/types.js';
import { acquireWriterLease } from '../src/store/writer-lease.js';
import { childInput, childMain, rssSampler, threadCpuSeconds, threadCpuSince } from './common.js';

export interface BackfillChildInput {
  mode: 'baseline' | 'indexer';
  url: string;
  /** Blocks 0..head are fetched / indexed. */
  head: number;
  /** Blocks per `eth_getLogs` (baseline: fixed; indexer: its planner's first span). */
  chunk: number;
  /** Requests in flight. */
  concurrency: number;
  /** Indexer only: the SQLite file to create, or a `postgres://` URL of an empty database. */
  dbPath?: string;
}

export interface BackfillChildResult {
  mode: 'baseline' | 'indexer';
  /** Logs fetched (baseline) or transfers stored (indexer). */
  items: number;
  seconds: number;
  peakRssBytes: number;
  /** CPU time of this process (all its threads) over the timed part, user + system. */
  cpuSeconds: number;
  /**
   * Indexer only: SQLite file size (main file plus WAL) after closing the store; PostgreSQL:
   * tables with their indexes and TOAST, after a VACUUM.
   */
  dbBytes?: number;
  /** Indexer only: `eth_getLogs` requests the indexer made. */
  requests?: number;
  /** Indexer only: holders with a positive balance, summed over the tokens. */
  holders?: number;
  /**
   * Indexer only: `Date.now()` clock of `run()` and of the head block's commit, so that a parent can
   * time the run from the process's launch (the Ponder comparison).
   */
  startedAtEpochMs?: number;
  finishedAtEpochMs?: number;
}

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/**
 * The floor any indexer stands on: the same `eth_getLogs` calls from the same node with plain `fetch`
 * and `JSON.parse`, `concurrency` requests in flight, and nothing done with the logs but counting them.
 */
async function baseline(input: BackfillChildInput): Promise<BackfillChildResult> {
  const rss = rssSampler();
  let next = 0;
  let items = 0;
  let id = 1;
  const worker = async (): Promise<void> => {
    while (next <= input.head) {
      const from = next;
      const to = Math.min(input.head, from + input.chunk - 1);
      next = to + 1;
      const response = await fetch(input.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: id++,
          method: 'eth_getLogs',
          params: [
            {
              fromBlock: `0x${from.toString(16)}`,
              toBlock: `0x${to.toString(16)}`,
              topics: [TRANSFER_TOPIC],
            },
          ],
        }),
      });
      const answer = JSON.parse(await response.text()) as { result?: unknown[]; error?: { message: string } };
      if (!Array.isArray(answer.result)) throw new Error(`eth_getLogs failed: ${answer.error?.message}`);
      items += answer.result.length;
    }
  };
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  await Promise.all(Array.from({ length: input.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { mode: 'baseline', items, seconds, peakRssBytes: rss.stop(), cpuSeconds: cpuSince(cpuStart) };
}

/** The indexer exactly as `runIndexers` builds it, timed from `run()` to the commit of the head block. */
async function indexer(input: BackfillChildInput): Promise<BackfillChildResult> {
  if (!input.dbPath) throw new Error('indexer mode needs dbPath');
  const logger = silentLogger();
  const postgres = input.dbPath.startsWith('postgres');
  // As `tokenquery index` opens it: writes on a thread of their own (SQLite), and through the
  // chain's writer lease (PostgreSQL: elected, and every write fenced).
  const store = await openStore({ location: input.dbPath, logger, writerThread: true });
  const controller = new AbortController();
  const lease = await acquireWriterLease(store, 'eth', { signal: controller.signal });
  if (lease === null) throw new Error('no writer lease');
  let finishedAt = 0;
  let requests = 0;
  // Observe the indexer's commits without changing them: the run ends with the batch that reaches the head.
  const watched: StoreWriter = Object.create(lease.writer) as StoreWriter;
  watched.applyBatch = async (batch: IndexBatch) => {
    await lease.writer.applyBatch(batch);
    if (batch.toBlock >= input.head && finishedAt === 0) {
      finishedAt = performance.now();
      controller.abort();
    }
  };
  const rpc = createRpcClient({ url: input.url, logger });
  const counted = {
    request<T>(method: string, params: unknown[], scan?: AnswerScanner): Promise<T> {
      if (method === 'eth_getLogs') requests++;
      return rpc.request<T>(method, params, scan);
    },
    batch: rpc.batch,
  };
  const source = createEvmSource({ rpc: counted, logger });
  const run = createEvmIndexer({
    chain: { name: 'eth', rpcUrl: input.url, fromBlock: 0, finalityDepth: 0, pollIntervalMs: 50 },
    source,
    store: watched,
    logger,
    signal: controller.signal,
    concurrency: input.concurrency,
    initialRange: input.chunk,
    tty: false,
  });
  const rss = rssSampler();
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const threadsStart = threadCpuSeconds();
  const timeout = setTimeout(() => controller.abort(), 240_000);
  await run.run();
  clearTimeout(timeout);
  const peakRssBytes = rss.stop();
  const cpuSeconds = cpuSince(cpuStart);
  if (process.env.TOKENQUERY_BENCH_THREADS) {
    // Where the indexer's CPU went, by thread (Linux /proc), in CPU seconds: the main thread (the
    // indexer) first, the writer thread among the last.
    const seconds = threadCpuSince(threadsStart).filter((s) => s > 0);
    process.stderr.write(`[threads] CPU s: ${seconds.map((s) => s.toFixed(2)).join(' ')}\n`);
    // What the peak RSS held, as far as this thread sees it (the writer thread's heap and SQLite's
    // page caches are in the rest).
    const { rss: peakRss, heapTotal, heapUsed, external, arrayBuffers } = rss.atPeak();
    const mb = (bytes: number): string => `${Math.round(bytes / 2 ** 20)}`;
    process.stderr.write(
      `[memory] MiB at the peak: RSS ${mb(peakRss)}, this thread's heap ${mb(heapTotal)} (used ${mb(heapUsed)}), ` +
        `external ${mb(external)} (array buffers ${mb(arrayBuffers)}), the rest ${mb(peakRss - heapTotal - external)}\n`,
    );
  }
  if (finishedAt === 0) {
    const status = await store.reader.getChainStatus('eth');
    throw new Error(
      `the indexer stopped before reaching block ${input.head}: ${status?.lastError ?? 'timeout'}`,
    );
  }
  const page = await store.reader.listTokens('eth', 0, 1000);
  const items = page.tokens.reduce((sum, t) => sum + t.transferCount, 0);
  const holders = page.tokens.reduce((sum, t) => sum + t.holderCount, 0);
  await lease.release();
  await store.close();
  let dbBytes = 0;
  if (postgres) {
    dbBytes = await postgresTableBytes(input.dbPath);
  } else {
    for (const suffix of ['', '-wal']) {
      try {
        dbBytes += statSync(input.dbPath + suffix).size;
      } catch {
        // no WAL left after a clean close
      }
    }
  }
  return {
    mode: 'indexer',
    items,
    seconds: (finishedAt - started) / 1000,
    peakRssBytes,
    cpuSeconds,
    dbBytes,
    requests,
    holders,
    startedAtEpochMs: performance.timeOrigin + started,
    finishedAtEpochMs: performance.timeOrigin + finishedAt,
  };
}

/**
 * Bytes of the store's tables in PostgreSQL (heap, indexes, TOAST, free space map, visibility
 * map), after a VACUUM as autovacuum would leave them: what the disk holds for the data, without
 * the WAL and the server's own catalogs.
 */
async function postgresTableBytes(url: string): Promise<number> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM');
    const result = await client.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind = 'r' AND n.nspname = current_schema()`,
    );
    return Number(result.rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}

// Exit when the parent disconnects, so that a CPU profile (--cpu-prof) is written on a normal exit
// even if keep-alive sockets would hold the event loop open.
process.on('disconnect', () => process.exit(0));

const input = childInput<BackfillChildInput>();
await childMain(() => (input.mode === 'baseline' ? baseline(input) : indexer(input)));

function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}
