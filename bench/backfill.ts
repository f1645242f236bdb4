import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackfillChildInput, BackfillChildResult } from './backfill-child.js';
import type { BenchChain } from './chain.js';
import { median, processCpuSeconds, runChild } from './common.js';
import { isMainThreadProfile, type ProfileSummary, summarizeProfiles } from './profile.js';

export interface BackfillBenchOptions {
  /** Repetitions; each is one baseline run and one indexer run, back to back. */
  reps: number;
  /** Blocks per `eth_getLogs`: the baseline's fixed span and the indexer's first span. */
  chunk: number;
  /** Requests in flight, for both (the indexer's default is 4). */
  concurrency: number;
  /** Also run the indexer once under `node --cpu-prof` and summarize where its time goes. */
  profile: boolean;
  /** Directory for the SQLite files; the last one is kept for the API benchmark. */
  workDir: string;
}

export interface BackfillRep {
  baseline: BackfillChildResult;
  indexer: BackfillChildResult;
  /** CPU seconds the node (anvil) used while serving each side; null where /proc cannot be read. */
  nodeCpuSeconds: { baseline: number | null; indexer: number | null };
  /** Indexer transfers/s over baseline logs/s. */
  ratio: number;
}

export interface BackfillReport {
  reps: BackfillRep[];
  /** Medians over the repetitions. */
  baselineLogsPerSecond: number;
  indexerTransfersPerSecond: number;
  ratio: number;
  peakRssBytes: number;
  dbBytesPerTransfer: number;
  /** SQLite file of the last indexer run, filled with the whole chain. */
  dbPath: string;
  /** The indexer's thread, and the store's writer thread. */
  profile?: { indexer: ProfileSummary; writer: ProfileSummary };
  options: Omit<BackfillBenchOptions, 'workDir'>;
}

/**
 * Extra `node` flags for the indexer's process only, for looking into it (`--trace-gc`,
 * `--perf-basic-prof`, …), space-separated in TOKENQUERY_BENCH_INDEXER_FLAGS.
 */
const INDEXER_NODE_FLAGS = (process.env.TOKENQUERY_BENCH_INDEXER_FLAGS ?? '').split(' ').filter(Boolean);
const CHILD = './backfill-child.js';

function microsPerItem(seconds: number | null, items: number): string {
  return seconds === null ? '?' : ((seconds * 1e6) / items).toFixed(2);
}

export async function runBackfillBench(
  chain: BenchChain,
  options: BackfillBenchOptions,
  log: (line: string) => void,
): Promise<BackfillReport> {
  const base = {
    url: chain.anvil.url,
    head: chain.head,
    chunk: options.chunk,
    concurrency: options.concurrency,
  };
  const reps: BackfillRep[] = [];
  let dbPath = '';
  for (let i = 0; i < options.reps; i++) {
    const nodeCpu = (): number | null => processCpuSeconds(chain.anvil.pid);
    const nodeBefore = nodeCpu();
    const baseline = await runChild<BackfillChildResult>(CHILD, {
      ...base,
      mode: 'baseline',
    } satisfies BackfillChildInput);
    const nodeBetween = nodeCpu();
    if (dbPath) rmSqlite(dbPath);
    dbPath = join(options.workDir, `backfill-${i}.sqlite`);
    const indexer = await runChild<BackfillChildResult>(
      CHILD,
      { ...base, mode: 'indexer', dbPath } satisfies BackfillChildInput,
      INDEXER_NODE_FLAGS,
    );
    const nodeAfter = nodeCpu();
    const spent = (from: number | null, to: number | null): number | null =>
      from === null || to === null ? null : to - from;
    if (indexer.items !== baseline.items) {
      throw new Error(
        `the indexer stored ${indexer.items} transfers but the node has ${baseline.items} logs`,
      );
    }
    const rep: BackfillRep = {
      baseline,
      indexer,
      nodeCpuSeconds: { baseline: spent(nodeBefore, nodeBetween), indexer: spent(nodeBetween, nodeAfter) },
      ratio: indexer.items / indexer.seconds / (baseline.items / baseline.seconds),
    };
    reps.push(rep);
    log(
      `backfill rep ${i + 1}/${options.reps}: baseline ${Math.round(baseline.items / baseline.seconds)} logs/s, ` +
        `indexer ${Math.round(indexer.items / indexer.seconds)} transfers/s, ratio ${rep.ratio.toFixed(2)}; ` +
        `CPU µs per log/transfer: baseline ${((baseline.cpuSeconds * 1e6) / baseline.items).toFixed(2)}, ` +
        `indexer ${((indexer.cpuSeconds * 1e6) / indexer.items).toFixed(2)}; ` +
        `node ${microsPerItem(rep.nodeCpuSeconds.baseline, baseline.items)} / ${microsPerItem(rep.nodeCpuSeconds.indexer, indexer.items)}`,
    );
  }

  let profile: BackfillReport['profile'];
  if (options.profile) {
    // TOKENQUERY_BENCH_PROFILE_DIR keeps the raw `.cpuprofile` files there (for a flame graph).
    const keptDir = process.env.TOKENQUERY_BENCH_PROFILE_DIR;
    const profileDir = keptDir ?? mkdtempSync(join(tmpdir(), 'tokenquery-prof-'));
    const profileDb = join(options.workDir, 'profile.sqlite');
    try {
      await runChild<BackfillChildResult>(
        CHILD,
        { ...base, mode: 'indexer', dbPath: profileDb } satisfies BackfillChildInput,
        ['--cpu-prof', '--cpu-prof-dir', profileDir],
      );
      profile = {
        indexer: summarizeProfiles(profileDir, 15, isMainThreadProfile),
        writer: summarizeProfiles(profileDir, 15, (file) => !isMainThreadProfile(file)),
      };
    } finally {
      if (keptDir === undefined) rmSync(profileDir, { recursive: true, force: true });
      rmSqlite(profileDb);
    }
  }

  const transfers = reps[0]!.indexer.items;
  return {
    reps,
    baselineLogsPerSecond: median(reps.map((r) => r.baseline.items / r.baseline.seconds)),
    indexerTransfersPerSecond: median(reps.map((r) => r.indexer.items / r.indexer.seconds)),
    ratio: median(reps.map((r) => r.ratio)),
    peakRssBytes: median(reps.map((r) => r.indexer.peakRssBytes)),
    dbBytesPerTransfer: median(reps.map((r) => r.indexer.dbBytes ?? 0)) / transfers,
    dbPath,
    ...(profile ? { profile } : {}),
    options: {
      reps: options.reps,
      chunk: options.chunk,
      concurrency: options.concurrency,
      profile: options.profile,
    },
  };
}

function rmSqlite(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
}
