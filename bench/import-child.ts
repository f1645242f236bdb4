// One import measurement in a process of its own (forked by import.ts): either the baseline (the
// importer's own reader over the file: gunzip, UTF-8, CSV, row checks, nothing stored) or the
// real `importTransfers` into a fresh SQLite store, as `tokenquery import` runs it.
import { statSync } from 'node:fs';
import { createEvmSource } from '../src/chains/evm/source.js';
import { createRpcClient } from '../src/chains/jsonrpc/rpc-client.js';
import { importTransfers } from '../src/importer/importer.js';
import { readExport } from '../src/importer/input.js';
import { createImportNode } from '../src/importer/node-reader.js';
import { silentLogger } from '../src/internal/logger.js';
import { openStore } from '../src/store/open.js';
import { childInput, childMain, rssSampler } from './common.js';

export interface ImportChildInput {
  mode: 'parse' | 'import';
  path: string;
  /** Import only: node for token metadata, store to create, directory of the sort file. */
  url?: string;
  dbPath?: string;
  tmpDir?: string;
  sorted?: boolean;
  /** Transfers per batch (default: the importer's). */
  batchTransfers?: number;
}

export interface ImportChildResult {
  rows: number;
  seconds: number;
  peakRssBytes: number;
  cpuSeconds: number;
  /** Import only. */
  readSeconds?: number;
  writeSeconds?: number;
  stagingBytes?: number;
  dbBytes?: number;
}

async function parse(input: ImportChildInput): Promise<ImportChildResult> {
  const rss = rssSampler();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let rows = 0;
  for await (const chunk of readExport({ path: input.path, fileIndex: 0 })) rows += chunk.rows.length;
  const seconds = (performance.now() - started) / 1000;
  return { rows, seconds, peakRssBytes: rss.stop(), cpuSeconds: cpuSeconds(cpu) };
}

async function runImport(input: ImportChildInput): Promise<ImportChildResult> {
  const logger = silentLogger();
  const rss = rssSampler();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const store = await openStore({ location: input.dbPath!, logger, writerThread: true });
  const rpc = createRpcClient({ url: input.url!, logger });
  const summary = await importTransfers({
    store,
    chain: 'eth',
    inputs: [input.path],
    node: createImportNode({ rpc, source: createEvmSource({ rpc, logger }) }),
    logger,
    tmpDir: input.tmpDir!,
    sorted: input.sorted === true,
    tty: false,
    ...(input.batchTransfers === undefined ? {} : { batchTransfers: input.batchTransfers }),
  });
  await store.close();
  const seconds = (performance.now() - started) / 1000;
  let dbBytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      dbBytes += statSync(input.dbPath! + suffix).size;
    } catch {
      // no WAL left after a clean close
    }
  }
  return {
    rows: summary.imported,
    seconds,
    peakRssBytes: rss.stop(),
    cpuSeconds: cpuSeconds(cpu),
    readSeconds: summary.readSeconds,
    writeSeconds: summary.writeSeconds,
    stagingBytes: summary.stagingBytes,
    dbBytes,
  };
}

function cpuSeconds(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

const input = childInput<ImportChildInput>();
await childMain(() => (input.mode === 'parse' ? parse(input) : runImport(input)));
