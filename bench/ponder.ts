// tokenquery against Ponder (issue #5: tokenquery ≥ 10 × Ponder's transfers/s) on the same anvil chain.
// Ponder is not a dependency of the project: the benchmark installs the pinned versions from the npm
// registry into a cache directory of its own, writes a minimal Ponder app that does tokenquery's work
// (store every transfer, keep every balance), runs `ponder start` on its default PGlite database and
// times it from launch to its `/ready` signal. The install and the app are in ponder-app.ts, the
// process-tree measurements in process-tree.ts.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBlockNumber, mine } from '../src/devchain/chain.js';
import { freePort } from '../src/internal/testing/net.js';
import type { BackfillChildInput, BackfillChildResult } from './backfill-child.js';
import type { BenchChain } from './chain.js';
import { fixed, int, median, mib, startChild } from './common.js';
import { ensurePonderInstalled, PONDER_PACKAGES, writePonderApp } from './ponder-app.js';
import { lines, stopGroup, treeCpuSeconds, treeRssSampler } from './process-tree.js';

/**
 * Ponder 1.0.0 treats blocks as final `finalityBlockCount` blocks below the head (30 for a chain id
 * it does not know, such as anvil's 31337) and indexes only the finalized range in its historical
 * (batched) mode; newer blocks go through its realtime path one block per database transaction.
 * The benchmark mines this many empty blocks on top of the sprayed chain so that every transfer is
 * in Ponder's historical range, its fast path. tokenquery indexes the same, longer chain.
 */
export const PONDER_FINALITY_BLOCKS = 30;

export interface PonderBenchOptions {
  /** Repetitions; each runs Ponder, then tokenquery, each from a cold start. */
  reps: number;
  /** tokenquery's first `eth_getLogs` span and requests in flight (as the backfill benchmark). */
  chunk: number;
  concurrency: number;
  /** Temporary directory for the Ponder apps and SQLite files (removed by the caller). */
  workDir: string;
  /** Where Ponder is installed; reused while it holds the pinned versions. */
  cacheDir?: string;
  /** Gives up on a Ponder run after this long. */
  timeoutMs?: number;
}

/** One indexer run, timed from the launch of its process. */
export interface IndexerRun {
  transfers: number;
  /** Holders with a positive balance, all tokens together. */
  holders: number;
  /** Launch of the process until the head is indexed (tokenquery) or `/ready` (Ponder). */
  seconds: number;
  /** Launch until indexing work starts: `run()` (tokenquery), "Started historical sync" (Ponder). */
  startupSeconds: number;
  /** Peak RSS of the process and its descendants (/proc VmRSS, sampled every 100 ms). */
  peakRssBytes: number;
  /** User + system CPU of the process tree from launch to the end of the run. */
  cpuSeconds: number;
}

export interface PonderRep {
  ponder: IndexerRun;
  tokenquery: IndexerRun;
  /** tokenquery transfers/s over Ponder transfers/s, both from launch. */
  ratio: number;
}

export interface PonderReport {
  reps: PonderRep[];
  ponderTransfersPerSecond: number;
  tokenqueryTransfersPerSecond: number;
  ratio: number;
  /** Blocks 0..head; transfers up to sprayHead, then the empty blocks of PONDER_FINALITY_BLOCKS. */
  head: number;
  sprayHead: number;
  /** Seconds `npm install` took, or null when the cache was reused. */
  installSeconds: number | null;
  cacheDir: string;
  options: { reps: number; chunk: number; concurrency: number };
}

export async function runPonderBench(
  chain: BenchChain,
  options: PonderBenchOptions,
  log: (line: string) => void,
): Promise<PonderReport> {
  const cacheDir = options.cacheDir ?? join(tmpdir(), `tokenquery-bench-ponder-${PONDER_PACKAGES.ponder}`);
  const installSeconds = await ensurePonderInstalled(cacheDir, log);

  const sprayHead = chain.head;
  await mine(chain.anvil.url, PONDER_FINALITY_BLOCKS);
  const head = await getBlockNumber(chain.anvil.url);
  // Each demo token mints its supply once at construction: one Transfer log each beside the spray.
  const expected = chain.options.transfers + chain.tokens.length;
  log(`ponder: ${PONDER_FINALITY_BLOCKS} empty blocks mined on top of block ${sprayHead}, head ${head}`);

  const reps: PonderRep[] = [];
  for (let i = 0; i < options.reps; i++) {
    const appDir = join(options.workDir, `ponder-app-${i}`);
    writePonderApp(appDir, cacheDir, chain);
    const ponder = await runPonder(appDir, cacheDir, sprayHead, options.timeoutMs ?? 900_000, log);
    rmSync(appDir, { recursive: true, force: true });
    const dbPath = join(options.workDir, `ponder-tokenquery-${i}.sqlite`);
    const tokenquery = await runTokenquery(chain.anvil.url, head, dbPath, options);
    for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
    for (const [name, run] of [
      ['Ponder', ponder],
      ['tokenquery', tokenquery],
    ] as const) {
      if (run.transfers !== expected) {
        throw new Error(`${name} indexed ${run.transfers} transfers; the chain has ${expected}`);
      }
    }
    if (ponder.holders !== tokenquery.holders) {
      throw new Error(`Ponder counts ${ponder.holders} holders, tokenquery ${tokenquery.holders}`);
    }
    const rep = {
      ponder,
      tokenquery,
      ratio: tokenquery.transfers / tokenquery.seconds / (ponder.transfers / ponder.seconds),
    };
    reps.push(rep);
    log(
      `ponder rep ${i + 1}/${options.reps}: Ponder ${int(ponder.transfers / ponder.seconds)} transfers/s ` +
        `(${fixed(ponder.seconds)} s from launch, start-up ${fixed(ponder.startupSeconds)} s, peak RSS ${mib(ponder.peakRssBytes)}), ` +
        `tokenquery ${int(tokenquery.transfers / tokenquery.seconds)} transfers/s (${fixed(tokenquery.seconds)} s, ` +
        `peak RSS ${mib(tokenquery.peakRssBytes)}), ratio ${fixed(rep.ratio, 1)}`,
    );
  }
  return {
    reps,
    ponderTransfersPerSecond: median(reps.map((r) => r.ponder.transfers / r.ponder.seconds)),
    tokenqueryTransfersPerSecond: median(reps.map((r) => r.tokenquery.transfers / r.tokenquery.seconds)),
    ratio: median(reps.map((r) => r.ratio)),
    head,
    sprayHead,
    installSeconds,
    cacheDir,
    options: { reps: options.reps, chunk: options.chunk, concurrency: options.concurrency },
  };
}

interface PonderLine {
  time?: number;
  msg?: string;
  level?: number;
}

/** `ponder start` on a fresh PGlite database, timed from its launch to its `/ready` signal. */
async function runPonder(
  appDir: string,
  cacheDir: string,
  sprayHead: number,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<IndexerRun> {
  const port = await freePort();
  const bin = join(cacheDir, 'node_modules', 'ponder', 'dist', 'esm', 'bin', 'ponder.js');
  const tail: string[] = [];
  const launchedAt = Date.now();
  const child = spawn(
    process.execPath,
    [
      bin,
      'start',
      '--schema',
      'bench',
      '--log-format',
      'json',
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    {
      cwd: appDir,
      // Its own process group, so that whatever it starts (esbuild's service) stops with it.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Telemetry off: nothing but anvil and the loopback is reachable, and nothing else is wanted.
      env: { ...process.env, PONDER_TELEMETRY_DISABLED: 'true', PONDER_LOG_LEVEL: 'info', NO_COLOR: '1' },
    },
  );
  // Its own process group does not get the terminal's Ctrl-C: take it down with the benchmark.
  const killOnExit = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killOnExit);
  const sampler = treeRssSampler(child.pid!);
  try {
    const { syncStartedAt, readyAt } = await new Promise<{ syncStartedAt: number; readyAt: number }>(
      (resolve, reject) => {
        let syncStartedAt = 0;
        const timer = setTimeout(
          () =>
            reject(new Error(`Ponder not ready within ${timeoutMs} ms; its last lines:\n${tail.join('\n')}`)),
          timeoutMs,
        );
        const onLine = (line: string): void => {
          tail.push(line);
          if (tail.length > 40) tail.shift();
          let entry: PonderLine;
          try {
            entry = JSON.parse(line) as PonderLine;
          } catch {
            return; // its sync-store migrations print plain lines
          }
          const at = entry.time ?? Date.now();
          if (entry.msg?.startsWith('Started') && entry.msg.includes('historical sync')) syncStartedAt = at;
          if (entry.level !== undefined && entry.level >= 50) log(`ponder: ${entry.msg}`);
          if (entry.msg === 'Started returning 200 responses from /ready endpoint') {
            clearTimeout(timer);
            resolve({ syncStartedAt: syncStartedAt || at, readyAt: at });
          }
        };
        lines(child, 'stdout', onLine);
        lines(child, 'stderr', onLine);
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          reject(
            new Error(
              `Ponder exited (${signal ?? `code ${code}`}) before it was ready; its last lines:\n${tail.join('\n')}`,
            ),
          );
        });
      },
    );
    const cpuSeconds = treeCpuSeconds(child.pid!);
    const peakRssBytes = sampler.stop();
    const base = `http://127.0.0.1:${port}`;
    const status = (await (await fetch(`${base}/status`)).json()) as Record<
      string,
      { block?: { number: number } }
    >;
    const indexedTo = status.anvil?.block?.number ?? -1;
    if (indexedTo < sprayHead) {
      throw new Error(`Ponder was ready at block ${indexedTo}, below the last transfer's block ${sprayHead}`);
    }
    const counts = (await (await fetch(`${base}/bench-counts`)).json()) as {
      transfers: number;
      holders: number;
    };
    return {
      transfers: Number(counts.transfers),
      holders: Number(counts.holders),
      seconds: (readyAt - launchedAt) / 1000,
      startupSeconds: (syncStartedAt - launchedAt) / 1000,
      peakRssBytes,
      cpuSeconds,
    };
  } finally {
    sampler.stop();
    await stopGroup(child);
    process.off('exit', killOnExit);
  }
}

/** tokenquery's indexer in a fresh process (bench/backfill-child.ts), timed from the fork. */
async function runTokenquery(
  url: string,
  head: number,
  dbPath: string,
  options: PonderBenchOptions,
): Promise<IndexerRun> {
  const launchedAt = Date.now();
  // The child's first message is its result; it stays alive until stopped, so its CPU can be read.
  const handle = await startChild<BackfillChildResult>('./backfill-child.js', {
    mode: 'indexer',
    url,
    head,
    chunk: options.chunk,
    concurrency: options.concurrency,
    dbPath,
  } satisfies BackfillChildInput);
  const cpuSeconds = treeCpuSeconds(handle.pid);
  await handle.stop();
  const r = handle.value;
  return {
    transfers: r.items,
    holders: r.holders ?? 0,
    seconds: (r.finishedAtEpochMs! - launchedAt) / 1000,
    startupSeconds: (r.startedAtEpochMs! - launchedAt) / 1000,
    // Its own samples of the same figure (VmRSS, every 10 ms from `run()`): the parent learns the pid
    // only from the fork's answer.
    peakRssBytes: r.peakRssBytes,
    cpuSeconds,
  };
}

export function renderPonder(r: PonderReport, machine: string): string {
  const m = (pick: (rep: PonderRep) => number): number => median(r.reps.map(pick));
  const withoutStartup = (x: IndexerRun): number => x.transfers / (x.seconds - x.startupSeconds);
  const n = r.reps[0]!.ponder.transfers;
  const perTransfer = (pick: (rep: PonderRep) => IndexerRun): string =>
    `${fixed(
      m((x) => (pick(x).cpuSeconds * 1e6) / pick(x).transfers),
      0,
    )} µs per transfer`;
  return [
    machine,
    '',
    `Chain: as the backfill benchmark's (${int(n)} Transfer logs of the 4 demo tokens up to block ${r.sprayHead}), ` +
      `plus ${PONDER_FINALITY_BLOCKS} empty blocks mined on top (head ${r.head}) so that every transfer lies in ` +
      "Ponder's finalized, historical range. " +
      `Ponder ${PONDER_PACKAGES.ponder} with viem ${PONDER_PACKAGES.viem} and hono ${PONDER_PACKAGES.hono}, \`ponder start\`, ` +
      'default PGlite database; tokenquery: the indexer into a fresh SQLite file, ' +
      `${r.options.chunk}-block \`eth_getLogs\` ranges, ${r.options.concurrency} in flight. Both from a cold start in a ` +
      `fresh process, timed from its launch; both checked to hold all ${int(n)} transfers and the same ` +
      `${int(r.reps[0]!.ponder.holders)} holders with a positive balance. Median of ${r.reps.length} ` +
      `repetition${r.reps.length === 1 ? '' : 's'}, each Ponder then tokenquery. ` +
      (r.installSeconds === null
        ? 'Ponder was already installed in the cache directory.'
        : `Installing Ponder took ${fixed(r.installSeconds, 0)} s (not counted).`),
    '',
    '| | Ponder | tokenquery | ratio tokenquery / Ponder |',
    '|---|---|---|---|',
    `| throughput from launch (median) | ${int(r.ponderTransfersPerSecond)} transfers/s | ${int(r.tokenqueryTransfersPerSecond)} transfers/s | **${fixed(r.ratio, 1)}** (target ≥ 10) |`,
    `| throughput after start-up (median) | ${int(m((x) => withoutStartup(x.ponder)))} transfers/s | ${int(m((x) => withoutStartup(x.tokenquery)))} transfers/s | ${fixed(
      m((x) => withoutStartup(x.tokenquery) / withoutStartup(x.ponder)),
      1,
    )} |`,
    ...r.reps.map(
      (rep, i) =>
        `| repetition ${i + 1} | ${fixed(rep.ponder.seconds)} s (start-up ${fixed(rep.ponder.startupSeconds)} s) | ` +
        `${fixed(rep.tokenquery.seconds)} s (start-up ${fixed(rep.tokenquery.startupSeconds)} s) | ${fixed(rep.ratio, 1)} |`,
    ),
    `| CPU time, user + system (median) | ${fixed(m((x) => x.ponder.cpuSeconds))} s (${perTransfer((x) => x.ponder)}) | ` +
      `${fixed(m((x) => x.tokenquery.cpuSeconds))} s (${perTransfer((x) => x.tokenquery)}) | ` +
      `${fixed(
        m((x) => x.ponder.cpuSeconds / x.tokenquery.cpuSeconds),
        1,
      )} (Ponder CPU / tokenquery CPU) |`,
    `| peak RSS (median) | ${mib(m((x) => x.ponder.peakRssBytes))} | ${mib(m((x) => x.tokenquery.peakRssBytes))} | |`,
  ].join('\n');
}
