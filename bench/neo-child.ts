// The NEO indexing benchmark's processes (forked by neo.ts): the fake NEO node serving the busy
// window, the bare-fetch baseline, or the real NEO indexer into a fresh SQLite store.
import { statSync } from 'node:fs';
import { createRpcClient } from '../src/chains/jsonrpc/rpc-client.js';
import { createNeoSource } from '../src/chains/neo/source.js';
import { startFakeNeoNode } from '../src/chains/neo/testing/fake-neo-node.js';
import { createNeoIndexer } from '../src/indexer/neo-indexer.js';
import { silentLogger } from '../src/internal/logger.js';
import { openStore } from '../src/store/open.js';
import type { IndexBatch, StoreWriter } from '../src/store/types.js';
import { childInput, childMain, rssSampler, sendToParent } from './common.js';
import { busyNeoWindow } from './neo-window.js';

/** A measured run over blocks `from..to` of the node at `url`. */
export interface NeoRunInput {
  mode: 'baseline' | 'indexer';
  url: string;
  from: number;
  to: number;
  /** Indexer only: the SQLite file to create. */
  dbPath?: string;
}

export type NeoChildInput = { mode: 'node'; copies: number } | NeoRunInput;

export interface NeoNodeReady {
  url: string;
  from: number;
  to: number;
  transactions: number;
}

export interface NeoChildResult {
  mode: 'baseline' | 'indexer';
  blocks: number;
  /** Indexer: NEP-5 plus asset transfers stored; baseline: 0. */
  transfers: number;
  seconds: number;
  peakRssBytes: number;
  cpuSeconds: number;
  /** JSON-RPC calls made. */
  calls: number;
  dbBytes?: number;
}

/** As `NeoSource` fetches: 20 verbose blocks per batch, then their logs; 6 batches in flight (2 ranges × 3). */
const BLOCKS_PER_BATCH = 20;
const IN_FLIGHT = 6;

/**
 * The floor of any NEO indexer: the same verbose `getblock` and `getapplicationlog` batches from the
 * same node with plain `fetch` and `JSON.parse`, nothing done with the answers but finding the
 * invocations whose logs to ask for.
 */
async function baseline(input: NeoRunInput): Promise<NeoChildResult> {
  const rss = rssSampler();
  let next = input.from;
  let calls = 0;
  let id = 1;
  const post = async (batch: { method: string; params: unknown[] }[]): Promise<{ result?: unknown }[]> => {
    calls += batch.length;
    const response = await fetch(input.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch.map((call) => ({ jsonrpc: '2.0', id: id++, ...call }))),
    });
    return JSON.parse(await response.text()) as { result?: unknown }[];
  };
  const worker = async (): Promise<void> => {
    while (next <= input.to) {
      const from = next;
      const to = Math.min(input.to, from + BLOCKS_PER_BATCH - 1);
      next = to + 1;
      const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
      const blocks = await post(heights.map((n) => ({ method: 'getblock', params: [n, 1] })));
      const invocations = blocks.flatMap((b) =>
        ((b.result as { tx: { txid: string; type: string }[] }).tx ?? [])
          .filter((tx) => tx.type === 'InvocationTransaction')
          .map((tx) => tx.txid.slice(2)),
      );
      if (invocations.length > 0) {
        await post(invocations.map((txid) => ({ method: 'getapplicationlog', params: [txid] })));
      }
    }
  };
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return {
    mode: 'baseline',
    blocks: input.to - input.from + 1,
    transfers: 0,
    seconds: (performance.now() - started) / 1000,
    peakRssBytes: rss.stop(),
    cpuSeconds: cpuSince(cpuStart),
    calls,
  };
}

/** The NEO indexer as `runIndexers` builds it, timed from `run()` to the commit of the last block. */
async function indexer(input: NeoRunInput): Promise<NeoChildResult> {
  if (!input.dbPath) throw new Error('indexer mode needs dbPath');
  const logger = silentLogger();
  const store = await openStore({ location: input.dbPath, logger, writerThread: true });
  const controller = new AbortController();
  let finishedAt = 0;
  let transfers = 0;
  const watched: StoreWriter = Object.create(store.writer) as StoreWriter;
  watched.applyBatch = async (batch: IndexBatch) => {
    await store.writer.applyBatch(batch);
    transfers += batch.transfers.length + (batch.neo?.assetTransfers.length ?? 0);
    if (batch.toBlock >= input.to && finishedAt === 0) {
      finishedAt = performance.now();
      controller.abort();
    }
  };
  let calls = 0;
  const rpc = createRpcClient({ url: input.url, logger });
  const counted = {
    request<T>(method: string, params: unknown[]): Promise<T> {
      calls++;
      return rpc.request<T>(method, params);
    },
    batch(batch: Parameters<typeof rpc.batch>[0]) {
      calls += batch.length;
      return rpc.batch(batch);
    },
  };
  const run = createNeoIndexer({
    chain: { name: 'neo', rpcUrl: input.url, fromBlock: input.from, finalityDepth: 0, pollIntervalMs: 50 },
    source: createNeoSource({ rpc: counted as typeof rpc, logger }),
    store: watched,
    logger,
    signal: controller.signal,
    tty: false,
  });
  const rss = rssSampler();
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const timeout = setTimeout(() => controller.abort(), 240_000);
  await run.run();
  clearTimeout(timeout);
  const peakRssBytes = rss.stop();
  const cpuSeconds = cpuSince(cpuStart);
  if (finishedAt === 0) {
    const status = await store.reader.getChainStatus('neo');
    throw new Error(`the indexer stopped before block ${input.to}: ${status?.lastError ?? 'timeout'}`);
  }
  await store.close();
  let dbBytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      dbBytes += statSync(input.dbPath + suffix).size;
    } catch {
      // no WAL left after a clean close
    }
  }
  return {
    mode: 'indexer',
    blocks: input.to - input.from + 1,
    transfers,
    seconds: (finishedAt - started) / 1000,
    peakRssBytes,
    cpuSeconds,
    calls,
    dbBytes,
  };
}

/** Serves the busy window until the parent disconnects. */
async function node(copies: number): Promise<void> {
  const window = busyNeoWindow(copies);
  const fake = await startFakeNeoNode(window.options);
  process.on('disconnect', () => {
    void fake.close().finally(() => process.exit(0));
  });
  await sendToParent<NeoNodeReady>({
    type: 'ready',
    value: { url: fake.url, from: window.from, to: window.to, transactions: window.transactions },
  });
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

const input = childInput<NeoChildInput>();
if (input.mode === 'node') {
  await node(input.copies);
} else {
  const run = input;
  process.on('disconnect', () => process.exit(0));
  await childMain(() => (run.mode === 'baseline' ? baseline(run) : indexer(run)));
}
