// The growth benchmark (issue #5): the same API, start-up and memory figures on a store of
// `baseTransfers` and on one of `shape.transfers` (100,000 and 10,000,000 by default), made by the
// same synthetic generator and the real `tokenquery import`, served by the real `tokenquery serve`.
// Every figure is a ratio to a baseline of the same run: the small store for growth, a bare
// `node -e` HTTP server for start-up and memory.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSyntheticExport } from '../src/importer/testing/synthetic-export.js';
import { freePort } from '../src/internal/testing/net.js';
import { combine, cpuSecondsOf, type LoadResult, load, type Slice, type Target } from './api.js';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import { type ChildHandle, fixed, int, median, startChild } from './common.js';
import {
  BIN,
  type BuiltStore,
  buildStore,
  cacheDirFor,
  cachedStore,
  cleanEnv,
  type StoreShape,
  storeBytes,
} from './growth-store.js';

export interface GrowthBenchOptions {
  /** The large store (cached in the OS temporary directory). */
  shape: StoreShape;
  /** Transfers of the baseline store: the same generator's first rows, built fresh every run. */
  baseTransfers: number;
  connections: number;
  /** Measured seconds per store and operation, in `rounds` turns. */
  durationSeconds: number;
  rounds: number;
  warmupSeconds: number;
  /** Seconds of load for each memory measurement. */
  memorySeconds: number;
  /** Cold starts per server in the start-up measurement. */
  startupReps: number;
  workDir: string;
}

/** One operation's load on both stores. */
export interface GrowthCase {
  name: string;
  /** `serve`: the real `tokenquery serve`, response cache on; `uncached`: `startApiServer` with the cache off. */
  server: 'serve' | 'uncached';
  /** Distinct requests the paths rotate over. */
  distinct: number;
  small: LoadResult;
  big: LoadResult;
  /** Medians of the per-round ratios, large store ÷ small store. */
  p50Ratio: number;
  rpsRatio: number;
}

export interface StoreReport {
  transfers: number;
  bytes: number;
  built: BuiltStore;
}

export interface GrowthReport {
  options: GrowthBenchOptions;
  small: StoreReport;
  big: StoreReport;
  /** Milliseconds from spawn to the first 200 answer, one entry per repetition. */
  startup: { bare: number[]; small: number[]; big: number[] };
  /** CPU time (user + system) of the process when it first answered 200, in ms; same order. */
  startupCpu: { bare: number[]; small: number[]; big: number[] };
  cases: GrowthCase[];
  memory: { bare: MemoryResult; small: MemoryResult; big: MemoryResult };
  /** `serve` on the large store: its peak RSS over the whole API measurement. */
  bigServePeakDuringApi: number;
  /** The body the bare server answers in the memory measurement. */
  bareBodyBytes: number;
  cacheDir: string;
  loadAtEnd: number;
}

export interface MemoryResult {
  /** VmRSS once answering, before the load. */
  idleBytes: number;
  /** VmHWM after the load: the peak RSS over the process's life. */
  peakBytes: number;
  requestsPerSecond: number;
  errors: number;
}

/** The response cache's limits (src/api/response-cache.ts): a rotation longer than these misses every time. */
const CACHE_MAX_BYTES = 32 * 1024 * 1024;
const CACHE_MAX_ENTRIES = 16_384;

interface Server {
  url: string;
  pid: number;
  apiKey: string;
  stop(): Promise<void>;
}

export async function runGrowthBench(
  options: GrowthBenchOptions,
  log: (line: string) => void,
): Promise<GrowthReport> {
  const { shape, workDir } = options;
  const started = performance.now();
  const built = await cachedStore(shape, log);
  log(
    built.reused
      ? `growth: reusing the ${int(shape.transfers)}-transfer store built ${built.facts.builtAt} (${cacheDirFor(shape)})`
      : `growth: ${int(shape.transfers)}-transfer store imported in ${fixed(built.facts.importSeconds, 0)} s`,
  );
  const smallShape = { ...shape, transfers: options.baseTransfers };
  const smallPath = join(workDir, 'growth-small.sqlite');
  const smallFacts = await buildStore(smallPath, smallShape, log);
  log(
    `growth: ${int(options.baseTransfers)}-transfer store imported in ${fixed(smallFacts.importSeconds, 1)} s`,
  );
  const small: StoreReport = {
    transfers: options.baseTransfers,
    bytes: storeBytes(smallPath),
    built: { path: smallPath, facts: smallFacts, reused: false },
  };
  const big: StoreReport = { transfers: shape.transfers, bytes: storeBytes(built.path), built };
  log(
    `growth: SQLite ${fixed(small.bytes / small.transfers, 0)} bytes/transfer (small), ${fixed(big.bytes / big.transfers, 0)} (large), after ${fixed((performance.now() - started) / 1000, 0)} s`,
  );
  // Both files are read once, so that both start from the OS page cache: the figures leave out the disk.
  for (const path of [small.built.path, big.built.path]) await readThrough(path);

  const tokens = createSyntheticExport(shape).tokenAddresses;
  const busiest = tokens[0]!;
  const keys = { small: createKey(small.built.path, workDir), big: createKey(big.built.path, workDir) };
  const bareBodyPath = join(workDir, 'bare-body.json');

  // ---- start-up: spawn to first 200, bare node -e, serve on each store, taking turns ----
  const startup = { bare: [] as number[], small: [] as number[], big: [] as number[] };
  const startupCpu = { bare: [] as number[], small: [] as number[], big: [] as number[] };
  const infoPath = `/vipapi/eth/token/${busiest}`;
  writeFileSync(bareBodyPath, '{"code":1}');
  const starters = {
    bare: () => startBare(bareBodyPath, workDir),
    small: () => startServe(small.built.path, keys.small, infoPath, workDir),
    big: () => startServe(big.built.path, keys.big, infoPath, workDir),
  };
  for (let rep = 0; rep < options.startupReps; rep++) {
    const order = (['bare', 'small', 'big'] as const).slice();
    for (let i = 0; i < rep % 3; i++) order.push(order.shift()!);
    for (const which of order) {
      const { server, ms, cpuMs } = await starters[which]();
      await server.stop();
      startup[which].push(ms);
      startupCpu[which].push(cpuMs);
    }
  }
  log(
    `growth: start-up medians: bare ${fixed(median(startup.bare), 0)} ms, serve small ${fixed(median(startup.small), 0)} ms, serve large ${fixed(median(startup.big), 0)} ms ` +
      `(CPU ${fixed(median(startupCpu.bare), 0)}, ${fixed(median(startupCpu.small), 0)}, ${fixed(median(startupCpu.big), 0)} ms)`,
  );

  // ---- API under load ----
  const txPath = (token: string, page: number, size: number) =>
    `/vipapi/eth/token/tokentrans/${token}/${page}/${size}`;
  // Page 1 of the 200 busiest tokens, sizes 31–50 (every one has 50+ transfers in the small store
  // too), and pages 26–50 × sizes 26–50 of the 4 busiest (each has 2,500+ there): rotations far
  // beyond the response cache's 32 MiB, so every request is a miss and reads the store.
  const variedFirst: string[] = [];
  for (let size = 31; size <= 50; size++)
    for (const token of tokens.slice(0, 200)) variedFirst.push(txPath(token, 1, size));
  const variedDeep: string[] = [];
  for (let size = 26; size <= 50; size++)
    for (let page = 26; page <= 50; page++)
      for (const token of tokens.slice(0, 4)) variedDeep.push(txPath(token, page, size));
  const infoAll = tokens.map((t) => `/vipapi/eth/token/${t}`);
  const listPages = Array.from({ length: 20 }, (_, i) => `/vipapi/eth/tokens/${i + 1}/50`);
  const specs: { name: string; server: 'serve' | 'uncached'; paths: string[] }[] = [
    { name: 'Token Info, busiest token', server: 'serve', paths: [infoPath] },
    {
      name: 'Transaction List, busiest token, page 1 (size 50)',
      server: 'serve',
      paths: [txPath(busiest, 1, 50)],
    },
    {
      name: 'Transaction List, busiest token, page 50 (size 50, offset 2,450)',
      server: 'serve',
      paths: [txPath(busiest, 50, 50)],
    },
    { name: 'Token List, page 1 (size 50)', server: 'serve', paths: ['/vipapi/eth/tokens/1/50'] },
    {
      name: 'Transaction List, page 1 of the 200 busiest tokens × sizes 31–50 (varied)',
      server: 'serve',
      paths: variedFirst,
    },
    {
      name: 'Transaction List, pages 26–50 × sizes 26–50 of the 4 busiest tokens (varied)',
      server: 'serve',
      paths: variedDeep,
    },
    { name: 'Token Info, all 1,000 tokens in turn', server: 'uncached', paths: infoAll },
    {
      name: 'Transaction List, busiest token, page 1 (size 50)',
      server: 'uncached',
      paths: [txPath(busiest, 1, 50)],
    },
    {
      name: 'Transaction List, busiest token, page 50 (size 50, offset 2,450)',
      server: 'uncached',
      paths: [txPath(busiest, 50, 50)],
    },
    { name: 'Token List, pages 1–20 (size 50) in turn', server: 'uncached', paths: listPages },
  ];

  const children: ChildHandle<ApiServerChildReady>[] = [];
  const serves: Server[] = [];
  const cases: GrowthCase[] = [];
  let bigServePeakDuringApi = 0;
  let pageBody = '';
  try {
    const serve = {
      small: (await startServe(small.built.path, keys.small, infoPath, workDir)).server,
      big: (await startServe(big.built.path, keys.big, infoPath, workDir)).server,
    };
    serves.push(serve.small, serve.big);
    const uncachedServer = async (dbPath: string): Promise<Server> => {
      const child = await startChild<ApiServerChildReady>('./api-server-child.js', {
        mode: 'tokenquery',
        dbPath,
        cache: false,
      } satisfies ApiServerChildInput);
      children.push(child);
      return { url: child.value.url, pid: child.pid, apiKey: child.value.apiKey!, stop: child.stop };
    };
    const uncached = {
      small: await uncachedServer(small.built.path),
      big: await uncachedServer(big.built.path),
    };
    const withKey = (server: Server, paths: string[]) => paths.map((p) => `${p}?apikey=${server.apiKey}`);

    // Sanity: every server answers every operation, the two servers of a store answer alike, and
    // the varied rotations hold the same number of entries on both stores (same work) and cannot
    // fit in the response cache.
    for (const spec of specs) {
      const bodies: Record<string, string[]> = { small: [], big: [] };
      for (const size of ['small', 'big'] as const) {
        for (const server of [serve[size], uncached[size]]) {
          for (const path of [spec.paths[0]!, spec.paths.at(-1)!]) {
            bodies[size]!.push(await answer(server.url + withKey(server, [path])[0]!));
          }
        }
        if (bodies[size]![0] !== bodies[size]![2])
          throw new Error(`${spec.name}: serve and the uncached server answer differently`);
      }
      const entries = (body: string) => countEntries(body);
      for (const i of [0, 1]) {
        if (entries(bodies.small![i]!) !== entries(bodies.big![i]!))
          throw new Error(
            `${spec.name}: the two stores answer ${spec.paths[i === 0 ? 0 : spec.paths.length - 1]} with different numbers of entries`,
          );
      }
      if (spec.paths.length > 1 && spec.server === 'serve') {
        const approxBytes = (Buffer.byteLength(bodies.big![0]!) + Buffer.byteLength(bodies.big![1]!)) / 2;
        if (
          spec.paths.length <= CACHE_MAX_ENTRIES &&
          spec.paths.length * approxBytes <= CACHE_MAX_BYTES * 1.2
        )
          throw new Error(`${spec.name}: the rotation may fit in the response cache`);
      }
    }

    pageBody = await answer(`${serve.big.url}${withKey(serve.big, [txPath(busiest, 1, 50)])[0]!}`);

    for (const spec of specs) {
      const servers = spec.server === 'serve' ? serve : uncached;
      const targets: Record<'small' | 'big', Target> = {
        small: { url: servers.small.url, paths: withKey(servers.small, spec.paths), pid: servers.small.pid },
        big: { url: servers.big.url, paths: withKey(servers.big, spec.paths), pid: servers.big.pid },
      };
      // Each run goes on in the rotation where the last one stopped (skipping the requests that
      // may have been in flight): starting over would ask for its first paths again soon after,
      // and the response cache would keep them.
      const position = { small: 0, big: 0 };
      const run = async (which: 'small' | 'big', seconds: number): Promise<Slice> => {
        const { paths } = targets[which];
        const k = position[which] % paths.length;
        const slice = await load(
          { ...targets[which], paths: [...paths.slice(k), ...paths.slice(0, k)] },
          seconds,
          options.connections,
        );
        position[which] += slice.requests + options.connections;
        return slice;
      };
      if (options.warmupSeconds > 0) {
        await run('small', options.warmupSeconds);
        await run('big', options.warmupSeconds);
      }
      const slices: Record<'small' | 'big', Slice[]> = { small: [], big: [] };
      const sliceSeconds = Math.max(1, Math.round(options.durationSeconds / options.rounds));
      for (let round = 0; round < options.rounds; round++) {
        const order = round % 2 === 0 ? (['small', 'big'] as const) : (['big', 'small'] as const);
        for (const which of order) slices[which].push(await run(which, sliceSeconds));
      }
      const ratio = (pick: (s: Slice) => number) =>
        median(slices.big.map((s, r) => pick(s) / pick(slices.small[r]!)));
      const row: GrowthCase = {
        name: spec.name,
        server: spec.server,
        distinct: spec.paths.length,
        small: combine(slices.small),
        big: combine(slices.big),
        p50Ratio: ratio((s) => s.p50Ms),
        rpsRatio: ratio((s) => s.perSecond),
      };
      cases.push(row);
      log(
        `growth ${spec.server} ${spec.name}: small ${int(row.small.requestsPerSecond)} req/s p50 ${row.small.p50Ms} ms, ` +
          `large ${int(row.big.requestsPerSecond)} req/s p50 ${row.big.p50Ms} ms; p50 ratio ${fixed(row.p50Ratio)}`,
      );
    }
    bigServePeakDuringApi = procStatus(serve.big.pid, 'VmHWM');
  } finally {
    await Promise.all([...serves.map((s) => s.stop()), ...children.map((c) => c.stop())]);
  }

  // ---- memory: a fresh process per server, loaded with every operation's varied requests ----
  // Half of it a crawl through every token's pages 1–50 (page by page across the tokens, so it
  // reaches all over the file and fills SQLite's page cache), half the rotations measured above.
  const mixed: string[] = [];
  const others = [variedFirst, variedDeep, infoAll, listPages];
  for (let page = 1, i = 0; page <= 50; page++) {
    for (const token of tokens) {
      mixed.push(txPath(token, page, 50));
      const list = others[i % others.length]!;
      mixed.push(list[Math.floor(i / others.length) % list.length]!);
      i++;
    }
  }
  // The bare server answers every request with the largest body in the mix: a full page of 50 transfers.
  writeFileSync(bareBodyPath, pageBody);
  const memory = {
    bare: await measureMemory(() => startBare(bareBodyPath, workDir), mixed, options),
    small: await measureMemory(
      () => startServe(small.built.path, keys.small, infoPath, workDir),
      mixed,
      options,
    ),
    big: await measureMemory(() => startServe(big.built.path, keys.big, infoPath, workDir), mixed, options),
  };
  log(
    `growth: peak RSS under load: bare ${mb(memory.bare.peakBytes)}, serve small ${mb(memory.small.peakBytes)}, serve large ${mb(memory.big.peakBytes)}`,
  );
  return {
    options,
    small,
    big,
    startup,
    startupCpu,
    cases,
    memory,
    bigServePeakDuringApi,
    bareBodyBytes: Buffer.byteLength(pageBody),
    cacheDir: cacheDirFor(shape),
    loadAtEnd: loadavg()[0] ?? 0,
  };
}

function mb(bytes: number): string {
  return `${fixed(bytes / 1e6, 0)} MB`;
}

/** Reads a file to the end (into the OS page cache). */
async function readThrough(path: string): Promise<void> {
  for await (const _ of createReadStream(path, { highWaterMark: 1 << 20 })) {
    // nothing: reading is the point
  }
}

/** `tokenquery keys create`, as a user runs it; the key is the last line of its output. */
function createKey(db: string, cwd: string): string {
  const out = execFileSync(process.execPath, [BIN, 'keys', 'create', '--db', db, '--label', 'bench-growth'], {
    env: cleanEnv(),
    cwd,
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop()!.trim();
}

/** GET over a fresh connection: the status code, or null when nothing listens yet. */
function status(url: string): Promise<number | null> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? null));
    });
    request.once('error', () => resolve(null));
    request.setTimeout(5_000, () => request.destroy());
  });
}

async function answer(url: string): Promise<string> {
  const response = await fetch(url);
  const body = await response.text();
  const code = (JSON.parse(body) as { code?: unknown }).code;
  if (response.status !== 200 || code !== 1)
    throw new Error(`${url}: HTTP ${response.status}, code ${String(code)}`);
  return body;
}

/** Entries of a list answer (`data` array, or `data.list`), or 1 for an object. */
function countEntries(body: string): number {
  const data = (JSON.parse(body) as { data?: unknown }).data;
  if (Array.isArray(data)) return data.length;
  const list = (data as { list?: unknown } | undefined)?.list;
  return Array.isArray(list) ? list.length : 1;
}

/**
 * Spawns `args` (a server on `port`) and polls `path` every 5 ms over fresh connections; resolves
 * with the time from spawn to the first 200 answer, and the CPU time the process had used by then.
 */
async function spawnUntilOk(
  args: string[],
  port: number,
  path: string,
  cwd: string,
): Promise<{ child: ChildProcess; ms: number; cpuMs: number; stop: () => Promise<void> }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env: cleanEnv(), cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}${path}`;
  for (;;) {
    const code = await status(url);
    if (code === 200) {
      const ms = performance.now() - t0;
      return { child, ms, cpuMs: cpuSecondsOf(child.pid!) * 1000, stop };
    }
    if (exited || performance.now() - t0 > 60_000 || (code !== null && code !== 200)) {
      await stop();
      throw new Error(`${args.slice(1, 3).join(' ')} did not answer 200 (got ${code}): ${stderr}`);
    }
    await sleep(5);
  }
}

/** `tokenquery serve` on `db`, timed from spawn to the first 200 answer to `path`. */
async function startServe(
  db: string,
  apiKey: string,
  path: string,
  cwd: string,
): Promise<{ server: Server; ms: number; cpuMs: number }> {
  const port = await freePort();
  const args = [
    BIN,
    'serve',
    '--db',
    db,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--log-level',
    'warn',
  ];
  const { child, ms, cpuMs, stop } = await spawnUntilOk(args, port, `${path}?apikey=${apiKey}`, cwd);
  return { server: { url: `http://127.0.0.1:${port}`, pid: child.pid!, apiKey, stop }, ms, cpuMs };
}

/** The floor: `node -e` with a bare `node:http` server answering the file's bytes to every request. */
async function startBare(
  bodyPath: string,
  cwd: string,
): Promise<{ server: Server; ms: number; cpuMs: number }> {
  const port = await freePort();
  const script =
    `const b=require('node:fs').readFileSync(${JSON.stringify(bodyPath)});` +
    "require('node:http').createServer((q,s)=>{s.writeHead(200,{'content-type':'application/json; charset=utf-8','content-length':b.length});s.end(b)})" +
    `.listen(${port},'127.0.0.1')`;
  const { child, ms, cpuMs, stop } = await spawnUntilOk(['-e', script], port, '/', cwd);
  return { server: { url: `http://127.0.0.1:${port}`, pid: child.pid!, apiKey: '', stop }, ms, cpuMs };
}

/** A `/proc/<pid>/status` field in bytes (VmRSS, VmHWM). */
function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // not Linux, or the process is gone
  }
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

async function measureMemory(
  start: () => Promise<{ server: Server; ms: number; cpuMs: number }>,
  paths: string[],
  options: GrowthBenchOptions,
): Promise<MemoryResult> {
  const { server } = await start();
  try {
    const idleBytes = procStatus(server.pid, 'VmRSS');
    const withKey = server.apiKey === '' ? paths : paths.map((p) => `${p}?apikey=${server.apiKey}`);
    const slice = await load(
      { url: server.url, paths: withKey, pid: server.pid },
      options.memorySeconds,
      options.connections,
    );
    return {
      idleBytes,
      peakBytes: procStatus(server.pid, 'VmHWM'),
      requestsPerSecond: slice.perSecond,
      errors: slice.errors + slice.non2xx,
    };
  } finally {
    await server.stop();
  }
}

/** The Markdown section of docs/benchmarks.md. */
export function renderGrowth(r: GrowthReport, machineLine: string): string {
  const o = r.options;
  const s = r.small;
  const b = r.big;
  const perTransfer = (x: StoreReport) => x.bytes / x.transfers;
  const objectBytes = (x: StoreReport, name: string) =>
    x.built.facts.objects.find((obj) => obj.name === name)?.bytes ?? 0;
  const restBytes = (x: StoreReport) => x.bytes - objectBytes(x, 'transfers') - objectBytes(x, 'balances');
  const su = { bare: median(r.startup.bare), small: median(r.startup.small), big: median(r.startup.big) };
  const cpu = {
    bare: median(r.startupCpu.bare),
    small: median(r.startupCpu.small),
    big: median(r.startupCpu.big),
  };
  const ms = (n: number) => `${fixed(n, 0)} ms`;
  const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');
  const worstP50 = Math.max(...r.cases.map((c) => c.p50Ratio));
  const worstUncached = Math.max(
    ...r.cases.filter((c) => c.server === 'uncached' || c.distinct > 1).map((c) => c.p50Ratio),
  );
  const m = r.memory;
  const shapeLine =
    `${int(b.transfers)} SYNTHETIC transfers (\`src/importer/testing/synthetic-export.ts\`, seed ${o.shape.seed}) of ` +
    `${int(o.shape.tokens)} tokens (token k about 1/(k+1) as busy as token 0: the busiest has about 13% of all ` +
    `transfers) among ${int(o.shape.holders)} holders, 100 per block; the baseline store is the same generator's ` +
    `first ${int(s.transfers)}.`;
  const built = b.built.reused
    ? `The ${int(b.transfers)}-transfer store was reused from \`${r.cacheDir}\` (built ${b.built.facts.builtAt}; its import took ${fixed(b.built.facts.importSeconds / 60, 1)} min).`
    : `The ${int(b.transfers)}-transfer store was imported in this run in ${fixed(b.built.facts.importSeconds / 60, 1)} min and kept in \`${r.cacheDir}\` for later runs.`;
  return [
    `${machineLine} Load average ${r.loadAtEnd.toFixed(1)} at the end.`,
    '',
    `Stores: ${shapeLine} ${built}`,
    '',
    `| | baseline: ${short(s.transfers)} store | ${short(b.transfers)} store | ratio ${short(b.transfers)} / ${short(s.transfers)} | target |`,
    '|---|---|---|---|---|',
    `| SQLite file (main + WAL), bytes per transfer | ${fixed(perTransfer(s), 0)} (${mib(s.bytes)}) | **${fixed(perTransfer(b), 0)}** (${mib(b.bytes)}) | ${fixed(perTransfer(b) / perTransfer(s))} | ≤ 200 at ${short(b.transfers)}: ${verdict(perTransfer(b) <= 200)} |`,
    `| of which \`transfers\` (table, its key is the only index) | ${fixed(objectBytes(s, 'transfers') / s.transfers, 0)} | ${fixed(objectBytes(b, 'transfers') / b.transfers, 0)} | | |`,
    `| of which \`balances\` | ${fixed(objectBytes(s, 'balances') / s.transfers, 0)} (${fixed(s.built.facts.balanceRows / s.transfers, 2)} rows per transfer) | ${fixed(objectBytes(b, 'balances') / b.transfers, 0)} (${fixed(b.built.facts.balanceRows / b.transfers, 2)} rows per transfer) | | |`,
    `| everything else (tokens and their indexes, chains, keys, …) | ${fixed(restBytes(s) / s.transfers, 1)} | ${fixed(restBytes(b) / b.transfers, 1)} | | |`,
    `| start-up: spawn to first 200 (median of ${r.startup.small.length}) | ${ms(su.small)} | **${ms(su.big)}** | ${fixed(su.big / su.small)} | ≤ 1 s at ${short(b.transfers)}: ${verdict(su.big <= 1000)} |`,
    `| start-up against the floor, a bare \`node -e\` HTTP server (${ms(su.bare)}) | ${fixed(su.small / su.bare)} | ${fixed(su.big / su.bare)} | | |`,
    `| start-up CPU time (user + system) by the first 200, median; floor ${ms(cpu.bare)} | ${ms(cpu.small)} (${fixed(cpu.small / cpu.bare)} × floor) | ${ms(cpu.big)} (${fixed(cpu.big / cpu.bare)} × floor) | ${fixed(cpu.big / cpu.small)} | |`,
    `| peak RSS of \`serve\` under load (VmHWM) | ${mb(m.small.peakBytes)} | **${mb(m.big.peakBytes)}** | ${fixed(m.big.peakBytes / m.small.peakBytes)} | ≤ 150 MB: ${verdict(m.big.peakBytes <= 150e6)} |`,
    `| the same against a bare \`node:http\` server under the same load (${mb(m.bare.peakBytes)}) | ${fixed(m.small.peakBytes / m.bare.peakBytes)} | ${fixed(m.big.peakBytes / m.bare.peakBytes)} | | |`,
    `| API p50 under load, worst operation (below) | | | **${fixed(worstP50)}** | ≤ 1.5: ${verdict(worstP50 <= 1.5)} |`,
    '',
    `Start-up: from \`spawn\` until \`GET /vipapi/eth/token/<busiest token>\` first answers 200, polled every 5 ms over fresh connections; ` +
      `the three servers take turns, ${r.startup.small.length} starts each (all: bare ${r.startup.bare.map((x) => fixed(x, 0)).join(', ')} ms; ` +
      `${short(s.transfers)} ${r.startup.small.map((x) => fixed(x, 0)).join(', ')} ms; ${short(b.transfers)} ${r.startup.big.map((x) => fixed(x, 0)).join(', ')} ms).`,
    '',
    `Memory: a fresh process each, ${o.connections} connections for ${o.memorySeconds} s: half of the requests a crawl through ` +
      `pages 1–50 of every token (size 50, page by page across the tokens), half the varied and uncached rotations below; the bare server answers a full Transaction List page (${int(r.bareBodyBytes)} B) to every request. RSS once answering, before the load: bare ${mb(m.bare.idleBytes)}, ` +
      `${short(s.transfers)} ${mb(m.small.idleBytes)}, ${short(b.transfers)} ${mb(m.big.idleBytes)}; requests/s during the load: ` +
      `bare ${int(m.bare.requestsPerSecond)}, ${short(s.transfers)} ${int(m.small.requestsPerSecond)}, ${short(b.transfers)} ${int(m.big.requestsPerSecond)}` +
      ` (errors: ${m.bare.errors}, ${m.small.errors}, ${m.big.errors}). Peak RSS of \`serve\` on the ${short(b.transfers)} store over the whole API measurement below: ${mb(r.bigServePeakDuringApi)}.`,
    '',
    `API: autocannon, ${o.connections} connections, ${o.warmupSeconds} s warm-up per store, then ${o.durationSeconds} s per store in ` +
      `${o.rounds} rounds in which the two stores take turns; ratio: median of the per-round ratios ${short(b.transfers)} ÷ ${short(s.transfers)}; ` +
      "p50 / p99: median of the rounds' percentiles (autocannon counts whole milliseconds); CPU: user + system time of the server process per request. " +
      '**cached**: the real `tokenquery serve`, response cache on, one request repeated, so after the second every answer comes from the cache. ' +
      '**varied**: the same `serve`, rotating over more distinct requests than the cache holds (32 MiB), so every answer is read from the store. ' +
      '**uncached**: `startApiServer` (what `serve` runs) with `responseCache: false` (`bench/api-server-child.ts`; `serve` has no switch for it): every answer read from the store.',
    '',
    `| operation | server | distinct requests | ${short(s.transfers)} req/s | ${short(s.transfers)} p50 / p99 | ${short(s.transfers)} CPU/req | ${short(b.transfers)} req/s | ${short(b.transfers)} p50 / p99 | ${short(b.transfers)} CPU/req | p50 ratio | req/s ratio |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.cases.map(
      (c) =>
        `| ${c.name} | ${c.server === 'uncached' ? 'uncached' : c.distinct > 1 ? 'serve, varied' : 'serve, cached'} | ${int(c.distinct)} | ` +
        `${int(c.small.requestsPerSecond)} | ${c.small.p50Ms} / ${c.small.p99Ms} ms | ${fixed(c.small.cpuMicrosPerRequest, 0)} µs | ` +
        `${int(c.big.requestsPerSecond)} | ${c.big.p50Ms} / ${c.big.p99Ms} ms | ${fixed(c.big.cpuMicrosPerRequest, 0)} µs | ` +
        `**${fixed(c.p50Ratio)}** | ${fixed(c.rpsRatio)} |`,
    ),
    '',
    `Worst p50 ratio of the rows that read the store (varied and uncached): ${fixed(worstUncached)}. Errors: ` +
      `${r.cases.reduce((n, c) => n + c.small.errors + c.small.non2xx + c.big.errors + c.big.non2xx, 0)}.`,
  ].join('\n');
}

/** 100000 → "100k", 10000000 → "10M". */
function short(n: number): string {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return int(n);
}

function mib(bytes: number): string {
  return `${fixed(bytes / 2 ** 20, 0)} MiB`;
}
