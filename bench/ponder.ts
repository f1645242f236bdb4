// tokenquery against Ponder (issue #5: tokenquery ≥ 10 × Ponder's transfers/s) on the same anvil chain.
// Ponder is not a dependency of the project: the benchmark installs the pinned versions from the npm
// registry into a cache directory of its own, writes a minimal Ponder app that does tokenquery's work
// (store every transfer, keep every balance), runs `ponder start` on its default PGlite database and
// times it from launch to its `/ready` signal.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBlockNumber, mine } from '../src/devchain/chain.js';
import { freePort } from '../src/internal/testing/net.js';
import type { BackfillChildInput, BackfillChildResult } from './backfill-child.js';
import type { BenchChain } from './chain.js';
import { fixed, int, median, mib, startChild } from './common.js';

/** Exactly what is installed (issue #5); hono is Ponder's peer dependency for its HTTP server. */
export const PONDER_PACKAGES = { ponder: '1.0.0', viem: '2.40.0', hono: '4.7.4' } as const;

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

/**
 * Installs the pinned packages into `cacheDir` unless a finished install of them is there already.
 * Returns the seconds `npm install` took, or null when reused. Ponder's own dependencies resolve to
 * the newest versions its ranges allow on the day of the install.
 */
async function ensurePonderInstalled(cacheDir: string, log: (line: string) => void): Promise<number | null> {
  const marker = join(cacheDir, '.installed.json');
  const wanted = JSON.stringify(PONDER_PACKAGES);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) {
    log(`ponder: reusing ${cacheDir}`);
    return null;
  }
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(
    join(cacheDir, 'package.json'),
    `${JSON.stringify({ name: 'tokenquery-bench-ponder', private: true, type: 'module', dependencies: PONDER_PACKAGES }, null, 2)}\n`,
  );
  log(
    `ponder: npm install ${Object.entries(PONDER_PACKAGES)
      .map(([n, v]) => `${n}@${v}`)
      .join(' ')} into ${cacheDir}`,
  );
  const started = performance.now();
  // No install scripts: the only one in the tree is esbuild's check of its binary, which comes in
  // its platform package (npm 11 skips it by default anyway).
  await new Promise<void>((resolve, reject) => {
    execFile(
      'npm',
      ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-update-notifier', '--loglevel=error'],
      { cwd: cacheDir, maxBuffer: 16 * 2 ** 20, timeout: 900_000 },
      (error, _stdout, stderr) =>
        error ? reject(new Error(`npm install of Ponder failed: ${error.message}\n${stderr}`)) : resolve(),
    );
  });
  const seconds = (performance.now() - started) / 1000;
  writeFileSync(marker, wanted);
  log(`ponder: installed in ${seconds.toFixed(1)} s`);
  return seconds;
}

/**
 * A minimal Ponder app doing tokenquery's indexing work: every Transfer of the four demo tokens
 * stored (token, block, log index, transaction index and hash, from, to, value, block time), and
 * every holder's balance kept up to date (the zero address excluded, as tokenquery does).
 */
function writePonderApp(appDir: string, cacheDir: string, chain: BenchChain): void {
  mkdirSync(join(appDir, 'src', 'api'), { recursive: true });
  symlinkSync(join(cacheDir, 'node_modules'), join(appDir, 'node_modules'), 'dir');
  writeFileSync(
    join(appDir, 'package.json'),
    '{ "name": "bench-ponder-app", "private": true, "type": "module" }\n',
  );
  const addresses = JSON.stringify(chain.tokens.map((t) => t.address));
  writeFileSync(
    join(appDir, 'ponder.config.ts'),
    `import { createConfig } from 'ponder';
import { http } from 'viem';

const transfer = {
  type: 'event',
  name: 'Transfer',
  inputs: [
    { indexed: true, name: 'from', type: 'address' },
    { indexed: true, name: 'to', type: 'address' },
    { indexed: false, name: 'value', type: 'uint256' },
  ],
} as const;

export default createConfig({
  networks: {
    // A local node has no rate limit: Ponder's default of 50 requests/s would throttle it.
    anvil: { chainId: 31337, transport: http('${chain.anvil.url}'), maxRequestsPerSecond: 100_000 },
  },
  contracts: { Token: { network: 'anvil', abi: [transfer], address: ${addresses}, startBlock: 0 } },
});
`,
  );
  writeFileSync(
    join(appDir, 'ponder.schema.ts'),
    `import { onchainTable, primaryKey } from 'ponder';

export const transfer = onchainTable(
  'transfer',
  (t) => ({
    token: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    txIndex: t.integer().notNull(),
    txHash: t.hex().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    value: t.bigint().notNull(),
    time: t.bigint().notNull(),
  }),
  (table) => ({ pk: primaryKey({ columns: [table.token, table.blockNumber, table.logIndex] }) }),
);

export const balance = onchainTable(
  'balance',
  (t) => ({ token: t.hex().notNull(), holder: t.hex().notNull(), amount: t.bigint().notNull() }),
  (table) => ({ pk: primaryKey({ columns: [table.token, table.holder] }) }),
);
`,
  );
  writeFileSync(
    join(appDir, 'src', 'index.ts'),
    `import { ponder } from 'ponder:registry';
import { balance, transfer } from 'ponder:schema';

const ZERO = '0x0000000000000000000000000000000000000000';

ponder.on('Token:Transfer', async ({ event, context }) => {
  const token = event.log.address;
  const { from, to, value } = event.args;
  await context.db.insert(transfer).values({
    token,
    blockNumber: event.block.number,
    logIndex: event.log.logIndex,
    txIndex: event.transaction.transactionIndex,
    txHash: event.transaction.hash,
    from,
    to,
    value,
    time: event.block.timestamp,
  });
  if (from !== ZERO) {
    await context.db
      .insert(balance)
      .values({ token, holder: from, amount: -value })
      .onConflictDoUpdate((row) => ({ amount: row.amount - value }));
  }
  if (to !== ZERO) {
    await context.db
      .insert(balance)
      .values({ token, holder: to, amount: value })
      .onConflictDoUpdate((row) => ({ amount: row.amount + value }));
  }
});
`,
  );
  // Ponder 1.0 requires an API file; this one answers the benchmark's check of what was stored.
  writeFileSync(
    join(appDir, 'src', 'api', 'index.ts'),
    `import { db } from 'ponder:api';
import { balance, transfer } from 'ponder:schema';
import { count, gt } from 'ponder';
import { Hono } from 'hono';

const app = new Hono();
app.get('/bench-counts', async (c) => {
  const [transfers] = await db.select({ n: count() }).from(transfer);
  const [holders] = await db.select({ n: count() }).from(balance).where(gt(balance.amount, 0n));
  return c.json({ transfers: transfers?.n ?? 0, holders: holders?.n ?? 0 });
});
export default app;
`,
  );
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

/** Peak RSS of a process and its descendants (/proc VmRSS, the descendants listed anew every second). */
function treeRssSampler(root: number): { stop(): number } {
  let pids = [root];
  let peak = 0;
  let listedAt = 0;
  const sample = (): void => {
    if (Date.now() - listedAt > 1000) {
      pids = descendants(root);
      listedAt = Date.now();
    }
    let sum = 0;
    for (const pid of pids) sum += vmRss(pid);
    peak = Math.max(peak, sum);
  };
  sample();
  const timer = setInterval(sample, 100);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/** User + system CPU seconds of a process and its live descendants, and of the children they reaped. */
function treeCpuSeconds(root: number): number {
  let ticks = 0;
  for (const pid of descendants(root)) {
    const fields = statFields(pid);
    // utime, stime, cutime, cstime: fields 14–17 of /proc/<pid>/stat.
    if (fields) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks / CLOCK_TICKS;
}

/** `getconf CLK_TCK`: 100 on every Linux build that matters here. */
const CLOCK_TICKS = 100;

/** Fields after the command name of /proc/<pid>/stat (field 3, the state, first). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (!fields) continue;
    const ppid = Number(fields[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

function vmRss(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function lines(child: ChildProcess, stream: 'stdout' | 'stderr', onLine: (line: string) => void): void {
  let rest = '';
  child[stream]!.setEncoding('utf8');
  child[stream]!.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) if (part.trim() !== '') onLine(part);
  });
}

/** SIGTERM to the child's process group (Ponder shuts down cleanly on it), SIGKILL after 15 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
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
