// The address operations benchmark (issue #16, "Speed"): the five address and holder operations on
// a 10,000,000-transfer SYNTHETIC store shaped for them (a wallet holding 10,000 tokens, an address
// in 1,000,000 transfers, a token with 1,000,000 holders: the generator's `spotlight`), built by the
// real `tokenquery import` and cached in the OS temporary directory as the growth benchmark's store.
// Each operation is measured with wrk against three servers in the same run, taking turns:
// `tokenquery serve` (response cache on, one URL repeated: after the first answer it is a cache
// hit), the same API with its response cache off (`bench/api-server-child.ts`: every answer read
// from the store), and a bare `node:http` server answering tokenquery's own body for that URL.
// Latency at one connection (a request's own time, no queueing), throughput at many.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { createSyntheticExport } from '../src/importer/testing/synthetic-export.js';
import { silentLogger } from '../src/internal/logger.js';
import { MIGRATIONS, migrate } from '../src/store/sqlite/migrations.js';
import { cpuSecondsOf } from './api.js';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import { type ChildHandle, fixed, int, median, startChild } from './common.js';
import { createKey, readThrough, startServe } from './growth-servers.js';
import {
  type BuiltStore,
  cacheDirFor,
  cachedStore,
  type StoreFacts,
  type StoreShape,
  storeBytes,
} from './growth-store.js';
import { runWrk, type WrkResult } from './wrk.js';

export interface AddressOpsOptions {
  shape: StoreShape;
  /** Rounds; in each, every operation is measured on the three servers in turn (order rotated). */
  reps: number;
  /** Seconds of each wrk run (one latency run and one throughput run per server, operation and round). */
  seconds: number;
  warmupSeconds: number;
  /** Connections of the throughput runs. */
  connections: number;
  workDir: string;
}

/**
 * The store of the address benchmarks: `transfers` among 500,000 holders and 10,000 tokens, with
 * the spotlight (a tenth of the transfers name the busy address, a tenth are the airdrops).
 */
export function addressOpsShape(transfers: number): StoreShape {
  return {
    transfers,
    holders: 500_000,
    tokens: 10_000,
    seed: 1,
    spotlight: { walletTokens: 10_000, busyTransfers: transfers / 10, tokenHolders: transfers / 10 },
  };
}

export const SERVERS = ['bare', 'cached', 'uncached'] as const;
export type ServerName = (typeof SERVERS)[number];

export interface Measured {
  /** At 1 connection, one per round. */
  latency: WrkResult[];
  /** At `connections`, one per round. */
  throughput: WrkResult[];
  /** Server CPU (user + system) per request in the latency runs, µs, one per round. */
  cpuMicros: number[];
}

export interface AddressOpsCase {
  name: string;
  path: string;
  bodyBytes: number;
  /** What the answer holds (entries, total), for the report. */
  holds: string;
  servers: Record<ServerName, Measured>;
}

export interface AddressOpsReport {
  options: AddressOpsOptions;
  store: BuiltStore;
  bytes: number;
  /** The same shape built by the schema before this one, when cached (for the A/B of its size). */
  before: BuiltStore | null;
  beforeBytes: number;
  /** Tables and indexes the newest migration creates (its other changes are to existing tables). */
  newObjects: string[];
  newestMigration: string;
  cases: AddressOpsCase[];
  /** 1-minute load average at the start of each round, and at the end. */
  loads: number[];
  errors: number;
}

interface Spec {
  name: string;
  path: string;
  /** Throws when the answer is not what this store must answer; returns what it holds. */
  check(body: Envelope): string;
}

interface Envelope {
  code: number;
  data: unknown;
}

export async function runAddressOpsBench(
  options: AddressOpsOptions,
  log: (line: string) => void,
): Promise<AddressOpsReport> {
  const { shape, workDir } = options;
  const spot = shape.spotlight ?? {};
  const store = await cachedStore(shape, log);
  log(
    store.reused
      ? `address-ops: reusing the ${int(shape.transfers)}-transfer store built ${store.facts.builtAt} (${store.path})`
      : `address-ops: ${int(shape.transfers)}-transfer store imported in ${fixed(store.facts.importSeconds, 0)} s`,
  );
  const before = previousSchemaStore(shape);
  const bytes = storeBytes(store.path);
  log(`address-ops: ${fixed(bytes / shape.transfers, 1)} bytes per transfer`);
  await readThrough(store.path);

  const generated = createSyntheticExport(shape);
  const { wallet, busy, holderToken } = generated.spotlight;
  const list = (body: Envelope): unknown[] => {
    if (!Array.isArray(body.data)) throw new Error('data is not an array');
    return body.data;
  };
  const page = (body: Envelope): { total: number; data: unknown[] } => {
    const data = body.data as { total?: unknown; data?: unknown };
    if (typeof data?.total !== 'number' || !Array.isArray(data.data)) throw new Error('not a holders page');
    return { total: data.total, data: data.data };
  };
  const exactly = (n: number, entries: unknown[], what: string): string => {
    if (entries.length !== n) throw new Error(`${entries.length} ${what}, expected ${n}`);
    return `${int(n)} ${what}`;
  };
  // Entries on page `p` of size 50 of a list of `n` (full pages on the 10M store; small test stores run short).
  const onPage = (n: number, p: number) => Math.max(0, Math.min(50, n - (p - 1) * 50));
  // Read from the Address Token Balance answer (checked before the pages).
  let busyTokenTransfers = Number.NaN;
  const specs: Spec[] = [
    {
      name: `Address Token Balances, the address holding ${int(spot.walletTokens ?? 0)} tokens`,
      path: `/vipapi/eth/address/tokenbalance/${wallet}`,
      check: (b) => exactly(spot.walletTokens ?? 0, list(b), 'entries'),
    },
    {
      name: `Address Token Balance, the address in ${int(spot.busyTransfers ?? 0)} transfers, token 0`,
      path: `/vipapi/eth/address/tokenbalance/${busy}/${holderToken}`,
      check: (b) => {
        const [entry] = list(b) as { balance?: string; transferCnt?: number }[];
        if (!entry || !(BigInt(entry.balance ?? '0') > 0n)) throw new Error('no positive balance');
        busyTokenTransfers = entry.transferCnt ?? Number.NaN;
        return `transferCnt ${int(busyTokenTransfers)}`;
      },
    },
    ...[1, 50].map((p) => ({
      name: `Address Token Transfers, the same address and token, page ${p} (size 50)`,
      path: `/vipapi/eth/address/tokentrans/${busy}/${holderToken}/${p}/50`,
      check: (b: Envelope) => exactly(onPage(busyTokenTransfers, p), list(b), 'transfers'),
    })),
    ...[1, 50].map((p) => ({
      name: `Address Transfers, the same address, all tokens, page ${p} (size 50)`,
      path: `/vipapi/eth/address/tokentrans/${busy}/${p}/50`,
      check: (b: Envelope) => exactly(onPage(spot.busyTransfers ?? 0, p), list(b), 'transfers'),
    })),
    ...[1, 50].map((p) => ({
      name: `Token Holders, token 0, page ${p} (size 50)`,
      path: `/vipapi/eth/token/holders/${holderToken}/${p}/50`,
      check: (b: Envelope) => {
        const { total, data } = page(b);
        if (total < (spot.tokenHolders ?? 0)) throw new Error(`total ${total} holders`);
        return `${exactly(onPage(total, p), data, 'holders')} of ${int(total)}`;
      },
    })),
  ];

  const children: ChildHandle<ApiServerChildReady>[] = [];
  const stops: (() => Promise<void>)[] = [];
  try {
    const key = createKey(store.path, workDir);
    const { server: serve } = await startServe(store.path, key, `/vipapi/eth/token/${holderToken}`, workDir);
    stops.push(serve.stop);
    const child = async (input: ApiServerChildInput) => {
      const handle = await startChild<ApiServerChildReady>('./api-server-child.js', input);
      children.push(handle);
      return handle;
    };
    const uncachedChild = await child({ mode: 'tokenquery', dbPath: store.path, cache: false });

    // Every answer checked, the two tokenquery servers alike; the bare server gets the same bytes.
    const bodies: Record<string, string> = {};
    const holds: Record<string, string> = {};
    for (const spec of specs) {
      const cachedBody = await fetchBody(`${serve.url}${spec.path}?apikey=${key}`);
      const uncachedBody = await fetchBody(
        `${uncachedChild.value.url}${spec.path}?apikey=${uncachedChild.value.apiKey!}`,
      );
      if (cachedBody !== uncachedBody) throw new Error(`${spec.name}: the two servers answer differently`);
      try {
        holds[spec.path] = spec.check(JSON.parse(cachedBody) as Envelope);
      } catch (error) {
        throw new Error(`${spec.name} (${spec.path}): ${(error as Error).message}`);
      }
      bodies[spec.path] = cachedBody;
      log(`address-ops: ${spec.name}: ${int(Buffer.byteLength(cachedBody))} B, ${holds[spec.path]}`);
    }
    const bodiesPath = join(workDir, 'address-ops-bodies.json');
    writeFileSync(bodiesPath, JSON.stringify(bodies));
    const bareChild = await child({ mode: 'baseline', bodiesPath });
    const servers: Record<ServerName, { url: string; query: string; pid: number }> = {
      bare: { url: bareChild.value.url, query: '', pid: bareChild.pid },
      cached: { url: serve.url, query: `?apikey=${key}`, pid: serve.pid },
      uncached: {
        url: uncachedChild.value.url,
        query: `?apikey=${uncachedChild.value.apiKey!}`,
        pid: uncachedChild.pid,
      },
    };

    const cases: AddressOpsCase[] = specs.map((spec) => ({
      name: spec.name,
      path: spec.path,
      bodyBytes: Buffer.byteLength(bodies[spec.path]!),
      holds: holds[spec.path]!,
      servers: {
        bare: { latency: [], throughput: [], cpuMicros: [] },
        cached: { latency: [], throughput: [], cpuMicros: [] },
        uncached: { latency: [], throughput: [], cpuMicros: [] },
      },
    }));
    const wrk = (which: ServerName, path: string, connections: number, seconds: number) =>
      runWrk({
        url: servers[which].url,
        paths: [path + servers[which].query],
        connections,
        seconds,
        workDir,
      });
    if (options.warmupSeconds > 0) {
      for (const c of cases)
        for (const which of SERVERS) {
          await wrk(which, c.path, options.connections, options.warmupSeconds);
          await settle(servers[which].pid, log);
        }
    }
    const loads: number[] = [];
    let errors = 0;
    for (let round = 0; round < options.reps; round++) {
      loads.push(loadavg()[0] ?? 0);
      for (const c of cases) {
        const order = [...SERVERS.slice(round % 3), ...SERVERS.slice(0, round % 3)];
        for (const which of order) {
          const m = c.servers[which];
          const cpuBefore = cpuSecondsOf(servers[which].pid);
          const latency = await wrk(which, c.path, 1, options.seconds);
          // The request in flight when wrk stops is still answered (so + 1), and the next run
          // must not share the server with it, nor with the queue a throughput run leaves.
          await settle(servers[which].pid, log);
          const cpu = cpuSecondsOf(servers[which].pid) - cpuBefore;
          const throughput = await wrk(which, c.path, options.connections, options.seconds);
          await settle(servers[which].pid, log);
          m.latency.push(latency);
          m.throughput.push(throughput);
          m.cpuMicros.push((cpu * 1e6) / (latency.requests + 1));
          errors += latency.non2xx + latency.socketErrors + throughput.non2xx + throughput.socketErrors;
        }
        const last = (which: ServerName) => {
          const m = c.servers[which];
          return `${fixed(m.latency.at(-1)!.p50Ms)} ms / ${int(m.throughput.at(-1)!.requestsPerSecond)} req/s`;
        };
        log(
          `address-ops round ${round + 1}/${options.reps} ${c.name}: bare ${last('bare')}, cached ${last('cached')}, uncached ${last('uncached')}`,
        );
      }
    }
    loads.push(loadavg()[0] ?? 0);
    return {
      options,
      store,
      bytes,
      before,
      beforeBytes: before ? storeBytes(before.path) : Number.NaN,
      newObjects: objectsOfNewestMigration(),
      newestMigration: MIGRATIONS.at(-1)!.name,
      cases,
      loads,
      errors,
    };
  } finally {
    await Promise.all([...stops.map((stop) => stop()), ...children.map((c) => c.stop())]);
  }
}

/**
 * Waits until the server process is idle (under 10% of a core over 300 ms): a slow operation leaves
 * requests queued when wrk stops, and the server answers them all before it is free again.
 */
export async function settle(pid: number, log: (line: string) => void): Promise<void> {
  const started = performance.now();
  for (let before = cpuSecondsOf(pid); ; ) {
    await sleep(300);
    const now = cpuSecondsOf(pid);
    if (!(now - before >= 0.03) || performance.now() - started > 300_000) break;
    before = now;
  }
  const waited = performance.now() - started;
  if (waited > 2_000)
    log(`address-ops: waited ${fixed(waited / 1000, 1)} s for the server to finish queued requests`);
}

export async function fetchBody(url: string): Promise<string> {
  const response = await fetch(url);
  const body = await response.text();
  const code = (JSON.parse(body) as { code?: unknown }).code;
  if (response.status !== 200 || code !== 1)
    throw new Error(`${url}: HTTP ${response.status}, code ${String(code)}`);
  return body;
}

/** Names of the tables and indexes that the newest migration adds, from two empty in-memory stores. */
function objectsOfNewestMigration(): string[] {
  const names = (migrations: typeof MIGRATIONS) => {
    const db = new Database(':memory:');
    try {
      migrate(db, silentLogger(), migrations);
      return db.prepare<[], string>('SELECT name FROM sqlite_schema').pluck().all();
    } finally {
      db.close();
    }
  };
  const earlier = new Set(names(MIGRATIONS.slice(0, -1)));
  return names(MIGRATIONS).filter((name) => !earlier.has(name));
}

/** The cached store of the same shape built by the schema one migration earlier, if any. */
function previousSchemaStore(shape: StoreShape): BuiltStore | null {
  const dir = cacheDirFor(shape).replace(/-v(\d+)$/, (_, v: string) => `-v${Number(v) - 1}`);
  const path = join(dir, 'store.sqlite');
  const factsPath = join(dir, 'facts.json');
  if (!existsSync(path) || !existsSync(factsPath)) return null;
  return { path, facts: JSON.parse(readFileSync(factsPath, 'utf8')) as StoreFacts, reused: true };
}

/** Median of a metric over the rounds, and its range. */
export function spread(values: number[]): { median: number; min: number; max: number } {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}
