import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import { type ChildHandle, startChild } from './common.js';
import { type ProfileEntry, summarizeProfiles } from './profile.js';

export interface ApiBenchOptions {
  /** The filled SQLite store to serve. */
  dbPath: string;
  /** The token whose info and transfer pages are requested. */
  token: string;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Transfer list pages 1..pages are requested in turn. */
  pages: number;
  pageSize: number;
  /** Afterwards, profile tokenquery's server (`node --cpu-prof`) under the same load, one process per operation. */
  profile: boolean;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
}

export interface ApiCase {
  name: string;
  /** Size of the body the baseline answers with (tokenquery's own answer, captured before the run). */
  bodyBytes: number;
  tokenquery: LoadResult;
  baseline: LoadResult;
  /** tokenquery requests/s over baseline requests/s. */
  ratio: number;
  /** With `profile`: where tokenquery's server spends its time on this operation. */
  profile?: { self: ProfileEntry[]; total: ProfileEntry[] };
}

export interface ApiReport {
  cases: ApiCase[];
  options: Omit<ApiBenchOptions, 'dbPath' | 'token' | 'profile'>;
}

const CHILD = './api-server-child.js';

interface CaseSpec {
  name: string;
  /** tokenquery paths, requested in turn (query string added here). */
  paths: string[];
  /** The baseline's path for this body. */
  baselinePath: string;
}

/**
 * Runs each API operation under autocannon against tokenquery and, right after, against the bare
 * `node:http` baseline answering a body of the same size. Both servers are child processes, so each
 * has an event loop of its own; autocannon runs in this process.
 */
export async function runApiBench(options: ApiBenchOptions, log: (line: string) => void): Promise<ApiReport> {
  const { token, pages, pageSize } = options;
  const specs: CaseSpec[] = [
    { name: 'Token Info', paths: [`/vipapi/eth/token/${token}`], baselinePath: '/info' },
    {
      name: `Transaction List (pages 1–${pages}, size ${pageSize})`,
      paths: Array.from(
        { length: pages },
        (_, i) => `/vipapi/eth/token/tokentrans/${token}/${i + 1}/${pageSize}`,
      ),
      baselinePath: '/page',
    },
    { name: 'Token List (page 1, size 50)', paths: ['/vipapi/eth/tokens/1/50'], baselinePath: '/list' },
  ];

  const servers: ChildHandle<ApiServerChildReady>[] = [];
  try {
    const tq = await startChild<ApiServerChildReady>(CHILD, {
      mode: 'tokenquery',
      dbPath: options.dbPath,
    } satisfies ApiServerChildInput);
    servers.push(tq);
    const apiKey = tq.value.apiKey!;
    const withKey = (path: string) => `${path}?apikey=${apiKey}`;

    // The baseline answers with tokenquery's own bodies (the first page stands for every page).
    const bodies: Record<string, string> = {};
    for (const spec of specs) {
      const response = await fetch(tq.value.url + withKey(spec.paths[0]!));
      const body = await response.text();
      const code = (JSON.parse(body) as { code?: unknown }).code;
      if (response.status !== 200 || code !== 1) {
        throw new Error(`${spec.name}: tokenquery answered HTTP ${response.status}, code ${String(code)}`);
      }
      bodies[spec.baselinePath] = body;
    }
    const base = await startChild<ApiServerChildReady>(CHILD, {
      mode: 'baseline',
      bodies,
    } satisfies ApiServerChildInput);
    servers.push(base);

    const cases: ApiCase[] = [];
    for (const spec of specs) {
      const tqResult = await load(tq.value.url, spec.paths.map(withKey), options);
      const baseResult = await load(base.value.url, [spec.baselinePath], options);
      const item: ApiCase = {
        name: spec.name,
        bodyBytes: Buffer.byteLength(bodies[spec.baselinePath]!),
        tokenquery: tqResult,
        baseline: baseResult,
        ratio: tqResult.requestsPerSecond / baseResult.requestsPerSecond,
      };
      cases.push(item);
      log(
        `api ${spec.name}: tokenquery ${Math.round(tqResult.requestsPerSecond)} req/s p99 ${tqResult.p99Ms} ms, ` +
          `baseline ${Math.round(baseResult.requestsPerSecond)} req/s p99 ${baseResult.p99Ms} ms, ratio ${item.ratio.toFixed(2)}`,
      );
    }
    if (options.profile) {
      for (const [i, spec] of specs.entries()) cases[i]!.profile = await profileCase(spec, options);
    }
    return {
      cases,
      options: {
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
        pages,
        pageSize,
      },
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** The operation's load against a fresh tokenquery server running under `node --cpu-prof`. */
async function profileCase(
  spec: CaseSpec,
  options: ApiBenchOptions,
): Promise<{ self: ProfileEntry[]; total: ProfileEntry[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenquery-prof-'));
  try {
    const server = await startChild<ApiServerChildReady>(
      CHILD,
      { mode: 'tokenquery', dbPath: options.dbPath } satisfies ApiServerChildInput,
      { execArgv: ['--cpu-prof', '--cpu-prof-dir', dir] },
    );
    try {
      const paths = spec.paths.map((p) => `${p}?apikey=${server.value.apiKey!}`);
      await load(server.value.url, paths, { ...options, warmupSeconds: 0 });
    } finally {
      await server.stop();
    }
    return summarizeProfiles(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A warm-up, then the measured autocannon run; the paths are requested in turn across all connections. */
async function load(url: string, paths: string[], options: ApiBenchOptions): Promise<LoadResult> {
  let next = 0;
  const requests = [
    {
      method: 'GET',
      setupRequest: (request: autocannon.RawRequest) => ({ ...request, path: paths[next++ % paths.length]! }),
    },
  ];
  if (options.warmupSeconds > 0) {
    await autocannon({ url, connections: options.connections, duration: options.warmupSeconds, requests });
  }
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationSeconds,
    requests,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}
