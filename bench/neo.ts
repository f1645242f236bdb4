// NEO benchmarks: decoding throughput (neo-decode.ts, in this process) and indexing
// throughput over the fake NEO node serving a busy window (neo-window.ts), against a bare-fetch
// baseline of the same getblock/getapplicationlog calls. Node, baseline and indexer each run in a
// process of their own.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { median, runChild, startChild } from './common.js';
import type { NeoChildInput, NeoChildResult, NeoNodeReady } from './neo-child.js';
import { type NeoDecodeReport, runNeoDecodeBench } from './neo-decode.js';

export interface NeoBenchOptions {
  reps: number;
  /** Copies of block 1444843 in the indexed window. */
  copies: number;
  /** Seconds each decoding part is measured for. */
  decodeSeconds: number;
  workDir: string;
}

export interface NeoRep {
  baseline: NeoChildResult;
  indexer: NeoChildResult;
  /** Indexer blocks/s over baseline blocks/s. */
  ratio: number;
}

export interface NeoReport {
  decode: NeoDecodeReport;
  window: NeoNodeReady;
  reps: NeoRep[];
  baselineBlocksPerSecond: number;
  indexerBlocksPerSecond: number;
  indexerTransfersPerSecond: number;
  ratio: number;
  dbBytesPerTransfer: number;
  options: Omit<NeoBenchOptions, 'workDir'>;
}

const CHILD = './neo-child.js';

export async function runNeoBench(options: NeoBenchOptions, log: (line: string) => void): Promise<NeoReport> {
  log(`neo: decoding (${options.decodeSeconds} s per part)`);
  const decode = runNeoDecodeBench({ minSeconds: options.decodeSeconds });
  const node = await startChild<NeoNodeReady>(CHILD, {
    mode: 'node',
    copies: options.copies,
  } satisfies NeoChildInput);
  const window = node.value;
  log(
    `neo: fake node serving ${window.to - window.from + 1} busy blocks (${window.transactions} transactions)`,
  );
  const reps: NeoRep[] = [];
  try {
    for (let i = 0; i < options.reps; i++) {
      const range = { url: window.url, from: window.from, to: window.to };
      const baseline = await runChild<NeoChildResult>(CHILD, {
        ...range,
        mode: 'baseline',
      } satisfies NeoChildInput);
      const dbPath = join(options.workDir, `neo-${i}.sqlite`);
      const indexer = await runChild<NeoChildResult>(CHILD, {
        ...range,
        mode: 'indexer',
        dbPath,
      } satisfies NeoChildInput);
      for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
      const rep = {
        baseline,
        indexer,
        ratio: indexer.blocks / indexer.seconds / (baseline.blocks / baseline.seconds),
      };
      reps.push(rep);
      log(
        `neo rep ${i + 1}: baseline ${(baseline.blocks / baseline.seconds).toFixed(0)} blocks/s, ` +
          `indexer ${(indexer.blocks / indexer.seconds).toFixed(0)} blocks/s ` +
          `(${(indexer.transfers / indexer.seconds).toFixed(0)} transfers/s), ratio ${rep.ratio.toFixed(2)}`,
      );
    }
  } finally {
    await node.stop();
  }
  const last = reps[reps.length - 1]!;
  return {
    decode,
    window,
    reps,
    baselineBlocksPerSecond: median(reps.map((r) => r.baseline.blocks / r.baseline.seconds)),
    indexerBlocksPerSecond: median(reps.map((r) => r.indexer.blocks / r.indexer.seconds)),
    indexerTransfersPerSecond: median(reps.map((r) => r.indexer.transfers / r.indexer.seconds)),
    ratio: median(reps.map((r) => r.ratio)),
    dbBytesPerTransfer: (last.indexer.dbBytes ?? 0) / last.indexer.transfers,
    options: { reps: options.reps, copies: options.copies, decodeSeconds: options.decodeSeconds },
  };
}
