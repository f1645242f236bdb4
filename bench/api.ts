import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import { type ChildHandle, median, startChild } from './common.js';
import { type ProfileEntry, summarizeProfiles } from './profile.js';
import { runWrk } from './wrk.js';

export interface ApiBenchOptions {
  /** The filled SQLite store to serve. */
  dbPath: string;
  /** The token whose info and transfer pages are requested. */
  token: string;
  connections: number;
  /** Measured seconds per server and operation, split evenly over `rounds`. */
  durationSeconds: number;
  warmupSeconds: number;
  /**
   * The servers take turns in this many slices (tokenquery cached, tokenquery uncached, baseline,
   * again and again), so that a burst of load from elsewhere on a shared machine hits all of them
   * alike; each ratio is the median of its per-round ratios. Default 5.
   */
  rounds?: number;
  /** Transfer list pages 1..pages are requested in turn. */
  pages: number;
  pageSize: number;
  /** Afterwards, profile tokenquery's server (`node --cpu-prof`) under the same load, one process per operation and cache setting. */
  profile: boolean;
}

export interface LoadResult {
  /** Requests over measured seconds, all rounds together. */
  requestsPerSecond: number;
  /** Median over the rounds of wrk's per-round percentile. */
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** The server process's CPU time (user + system) per request; NaN where `/proc` is unavailable. */
  cpuMicrosPerRequest: number;
}

export interface ApiCase {
  /** Operation, and for tokenquery whether its response cache was on. */
  name: string;
  /** Size of the body the baseline answers with (tokenquery's own answer, captured before the run). */
  bodyBytes: number;
  tokenquery: LoadResult;
  /** Measured in the same rounds; shared by the cached and uncached rows of one operation. */
  baseline: LoadResult;
  /** Median over the rounds of tokenquery requests/s ÷ baseline requests/s. */
  ratio: number;
  /** With `profile`: where tokenquery's server spends its time on this operation. */
  profile?: { self: ProfileEntry[]; total: ProfileEntry[] };
}

export interface ApiReport {
  cases: ApiCase[];
  options: Omit<ApiBenchOptions, 'dbPath' | 'token' | 'profile'> & { rounds: number };
}

const CHILD = './api-server-child.js';

export interface CaseSpec {
  name: string;
  /** Paths, requested in turn (the key's query string is added for tokenquery). */
  paths: string[];
}

/** A running server and the paths one operation requests from it. */
export interface Target {
  url: string;
  paths: string[];
  pid: number;
}

/** The operations measured: each a rotation of paths (the key's query string is added for tokenquery). */
export function apiCaseSpecs(token: string, pages: number, pageSize: number): CaseSpec[] {
  const info = `/vipapi/eth/token/${token}`;
  const txPages = Array.from(
    { length: pages },
    (_, i) => `/vipapi/eth/token/tokentrans/${token}/${i + 1}/${pageSize}`,
  );
  const list = '/vipapi/eth/tokens/1/50';
  return [
    { name: 'Token Info', paths: [info] },
    { name: `Transaction List (pages 1–${pages}, size ${pageSize})`, paths: txPages },
    { name: 'Token List (page 1, size 50)', paths: [list] },
    // What a client's traffic looks like: each Transaction List page followed by a Token Info and,
    // every fifth page, the Token List.
    {
      name: `Mixed (Token Info, Transaction List pages 1–${pages}, Token List)`,
      paths: txPages.flatMap((page, i) => (i % 5 === 4 ? [page, info, list] : [page, info])),
    },
  ];
}

/**
 * Runs each API operation under wrk against tokenquery with its response cache, tokenquery
 * without it, and the bare `node:http` baseline answering each path with tokenquery's own body for
 * it, taking turns. All servers are child processes, so each has an event loop of its own; wrk is
 * a process of its own too.
 */
export async function runApiBench(options: ApiBenchOptions, log: (line: string) => void): Promise<ApiReport> {
  const { token, pages, pageSize } = options;
  const rounds = Math.max(1, options.rounds ?? 5);
  const specs = apiCaseSpecs(token, pages, pageSize);

  const servers: ChildHandle<ApiServerChildReady>[] = [];
  try {
    const start = async (input: ApiServerChildInput) => {
      const server = await startChild<ApiServerChildReady>(CHILD, input);
      servers.push(server);
      return server;
    };
    const cached = await start({ mode: 'tokenquery', dbPath: options.dbPath, cache: true });
    const uncached = await start({ mode: 'tokenquery', dbPath: options.dbPath, cache: false });
    const withKey = (server: ChildHandle<ApiServerChildReady>) => (path: string) =>
      `${path}?apikey=${server.value.apiKey!}`;

    // The baseline answers every path with tokenquery's own body for it.
    const bodies = await captureBodies(specs, [cached, uncached]);
    const bodiesPath = join(wrkScriptDir(), 'baseline-bodies.json');
    writeFileSync(bodiesPath, JSON.stringify(bodies));
    const base = await start({ mode: 'baseline', bodiesPath });

    const cases: ApiCase[] = [];
    for (const spec of specs) {
      const targets: Target[] = [
        { url: cached.value.url, paths: spec.paths.map(withKey(cached)), pid: cached.pid },
        { url: uncached.value.url, paths: spec.paths.map(withKey(uncached)), pid: uncached.pid },
        { url: base.value.url, paths: spec.paths, pid: base.pid },
      ];
      if (options.warmupSeconds > 0) {
        for (const target of targets) await load(target, options.warmupSeconds, options.connections);
      }
      const slices: Slice[][] = targets.map(() => []);
      const sliceSeconds = Math.max(1, Math.round(options.durationSeconds / rounds));
      for (let round = 0; round < rounds; round++) {
        for (const [i, target] of targets.entries()) {
          slices[i]!.push(await load(target, sliceSeconds, options.connections));
        }
      }
      const [tqCached, tqUncached, baseline] = slices.map(combine) as [LoadResult, LoadResult, LoadResult];
      const ratio = (i: number) => median(slices[i]!.map((s, r) => s.perSecond / slices[2]![r]!.perSecond));
      const bodyBytes = Math.round(
        spec.paths.reduce((sum, path) => sum + Buffer.byteLength(bodies[path]!), 0) / spec.paths.length,
      );
      const rows: ApiCase[] = [
        { name: `${spec.name}, cached`, bodyBytes, tokenquery: tqCached, baseline, ratio: ratio(0) },
        { name: `${spec.name}, uncached`, bodyBytes, tokenquery: tqUncached, baseline, ratio: ratio(1) },
      ];
      cases.push(...rows);
      for (const row of rows) {
        log(
          `api ${row.name}: tokenquery ${Math.round(row.tokenquery.requestsPerSecond)} req/s p99 ${row.tokenquery.p99Ms} ms ` +
            `(${cpu(row.tokenquery)}), baseline ${Math.round(baseline.requestsPerSecond)} req/s ` +
            `p99 ${baseline.p99Ms} ms (${cpu(baseline)}), ratio ${row.ratio.toFixed(2)}`,
        );
      }
    }
    if (options.profile) {
      for (const [i, spec] of specs.entries()) {
        cases[2 * i]!.profile = await profileCase(spec, true, options);
        cases[2 * i + 1]!.profile = await profileCase(spec, false, options);
      }
    }
    return {
      cases,
      options: {
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
        rounds,
        pages,
        pageSize,
      },
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/**
 * Every path's body, asked of each server with its key; they must all answer it alike, with
 * success. Path → body, for the baseline.
 */
export async function captureBodies(
  specs: CaseSpec[],
  servers: ChildHandle<ApiServerChildReady>[],
): Promise<Record<string, string>> {
  const bodies: Record<string, string> = {};
  for (const path of new Set(specs.flatMap((spec) => spec.paths))) {
    const answers: string[] = [];
    for (const server of servers) {
      const response = await fetch(`${server.value.url}${path}?apikey=${server.value.apiKey!}`);
      const body = await response.text();
      const code = (JSON.parse(body) as { code?: unknown }).code;
      if (response.status !== 200 || code !== 1) {
        throw new Error(`${path}: tokenquery answered HTTP ${response.status}, code ${String(code)}`);
      }
      answers.push(body);
    }
    if (answers.some((answer) => answer !== answers[0]))
      throw new Error(`${path}: the servers' answers differ`);
    bodies[path] = answers[0]!;
  }
  return bodies;
}

function cpu(result: LoadResult): string {
  return Number.isNaN(result.cpuMicrosPerRequest)
    ? 'server CPU unknown'
    : `server CPU ${result.cpuMicrosPerRequest.toFixed(0)} µs/req`;
}

/** The operation's load against a fresh tokenquery server running under `node --cpu-prof`. */
async function profileCase(
  spec: CaseSpec,
  cache: boolean,
  options: ApiBenchOptions,
): Promise<{ self: ProfileEntry[]; total: ProfileEntry[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenquery-prof-'));
  try {
    const server = await startChild<ApiServerChildReady>(
      CHILD,
      { mode: 'tokenquery', dbPath: options.dbPath, cache } satisfies ApiServerChildInput,
      { execArgv: ['--cpu-prof', '--cpu-prof-dir', dir] },
    );
    try {
      const paths = spec.paths.map((p) => `${p}?apikey=${server.value.apiKey!}`);
      await load(
        { url: server.value.url, paths, pid: server.pid },
        options.durationSeconds,
        options.connections,
      );
    } finally {
      await server.stop();
    }
    return summarizeProfiles(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One wrk run against one server. */
export interface Slice {
  perSecond: number;
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  cpuSeconds: number;
}

/** Where wrk's Lua scripts for rotations of paths are written (removed when the process exits). */
let scriptDir: string | undefined;
export function wrkScriptDir(): string {
  if (scriptDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'tokenquery-wrk-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scriptDir = dir;
  }
  return scriptDir;
}

/**
 * Loads `target` with wrk (bench/wrk.ts) for `seconds`: a native load generator, so that the
 * client's own cost (autocannon saturated near 15k requests/s here) does not hide the server's.
 * The paths are requested in turn by each connection of wrk's one thread.
 */
export async function load(target: Target, seconds: number, connections: number): Promise<Slice> {
  const cpuBefore = cpuSecondsOf(target.pid);
  const result = await runWrk({
    url: target.url,
    paths: target.paths,
    connections,
    seconds,
    workDir: wrkScriptDir(),
  });
  return {
    perSecond: result.requestsPerSecond,
    requests: result.requests,
    seconds: result.seconds,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    errors: result.socketErrors,
    non2xx: result.non2xx,
    cpuSeconds: cpuSecondsOf(target.pid) - cpuBefore,
  };
}

export function combine(slices: Slice[]): LoadResult {
  const requests = slices.reduce((sum, s) => sum + s.requests, 0);
  const seconds = slices.reduce((sum, s) => sum + s.seconds, 0);
  const cpuSeconds = slices.reduce((sum, s) => sum + s.cpuSeconds, 0);
  return {
    requestsPerSecond: requests / seconds,
    p50Ms: median(slices.map((s) => s.p50Ms)),
    p99Ms: median(slices.map((s) => s.p99Ms)),
    requests,
    errors: slices.reduce((sum, s) => sum + s.errors, 0),
    non2xx: slices.reduce((sum, s) => sum + s.non2xx, 0),
    cpuMicrosPerRequest: (cpuSeconds / requests) * 1e6,
  };
}

/** CPU time (user + system) a process has used, from `/proc/<pid>/stat` (Linux); NaN elsewhere. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15, in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** `getconf CLK_TCK`: 100 on every Linux build Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;
