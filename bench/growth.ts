// The growth benchmark (issue #5): the same API, start-up and memory figures on a store of
// `baseTransfers` and on one of `shape.transfers` (100,000 and 10,000,000 by default), made by the
// same synthetic generator and the real `tokenquery import`, served by the real `tokenquery serve`.
// Every figure is a ratio to a baseline of the same run: the small store for growth, a bare
// `node -e` HTTP server for start-up and memory. The stores are made in growth-store.ts, the servers
// started and measured in growth-servers.ts, the report written in growth-report.ts.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createSyntheticExport } from '../src/importer/testing/synthetic-export.js';
import { combine, load, type Slice, type Target } from './api.js';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import { type ChildHandle, fixed, int, median, startChild } from './common.js';
import { cachedPostgresStore, freshPostgresStore, postgresBytes } from './growth-postgres.js';
import { type GrowthCase, type GrowthReport, mb, type StoreReport } from './growth-report.js';
import {
  answer,
  countEntries,
  createKey,
  measureMemory,
  procStatus,
  readThrough,
  type Server,
  startBare,
  startServe,
} from './growth-servers.js';
import {
  type BuiltStore,
  buildStore,
  cacheDirFor,
  cachedStore,
  type StoreShape,
  storeBytes,
  verifyStore,
} from './growth-store.js';

export interface GrowthBenchOptions {
  /** The large store (cached in the OS temporary directory, or as a database: growth-postgres.ts). */
  shape: StoreShape;
  /** Where both stores are: SQLite files, or databases on TOKENQUERY_TEST_POSTGRES's server. */
  backend: 'sqlite' | 'postgres';
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

/**
 * The stores' shape: issue #17's chain-like export (synthetic-export.ts, `activity: 'chain'`):
 * 100,000 tokens, 3 whales with a tenth of the transfers, Zipf tokens and addresses among
 * 20,000,000, 200 transfers per block.
 */
export function growthShape(transfers: number): StoreShape {
  return { transfers, holders: 20_000_000, tokens: 100_000, seed: 1, perBlock: 200, activity: 'chain' };
}

/** Tokens the requests name: the busiest (the whales first), every one present in the baseline store. */
const REQUESTED_TOKENS = 1_000;

/** The response cache's limits (src/api/response-cache.ts): a rotation longer than these misses every time. */
const CACHE_MAX_BYTES = 32 * 1024 * 1024;
const CACHE_MAX_ENTRIES = 16_384;

export async function runGrowthBench(
  options: GrowthBenchOptions,
  log: (line: string) => void,
): Promise<GrowthReport> {
  const { shape, workDir } = options;
  const started = performance.now();
  const postgres = options.backend === 'postgres';
  const built = postgres ? await cachedPostgresStore(shape, log) : await cachedStore(shape, log);
  log(
    built.reused
      ? `growth: reusing the ${int(shape.transfers)}-transfer store built ${built.facts.builtAt} (${cacheDirFor(shape)})`
      : `growth: ${int(shape.transfers)}-transfer store imported in ${fixed(built.facts.importSeconds, 0)} s`,
  );
  const smallShape = { ...shape, transfers: options.baseTransfers };
  let smallStore: BuiltStore;
  let dropSmall = async (): Promise<void> => {};
  if (postgres) {
    const fresh = await freshPostgresStore(smallShape, log);
    smallStore = fresh.store;
    dropSmall = fresh.drop;
  } else {
    const path = join(workDir, 'growth-small.sqlite');
    smallStore = { path, facts: await buildStore(path, smallShape, log), reused: false };
  }
  try {
    return await measureGrowth(options, smallStore, built, started, log);
  } finally {
    await dropSmall();
  }
}

async function measureGrowth(
  options: GrowthBenchOptions,
  smallStore: BuiltStore,
  built: BuiltStore,
  started: number,
  log: (line: string) => void,
): Promise<GrowthReport> {
  const { shape, workDir } = options;
  const postgres = options.backend === 'postgres';
  log(
    `growth: ${int(options.baseTransfers)}-transfer store imported in ${fixed(smallStore.facts.importSeconds, 1)} s`,
  );
  const bytesOf = (path: string) => (postgres ? postgresBytes(path) : Promise.resolve(storeBytes(path)));
  const small: StoreReport = {
    transfers: options.baseTransfers,
    bytes: await bytesOf(smallStore.path),
    built: smallStore,
  };
  const big: StoreReport = { transfers: shape.transfers, bytes: await bytesOf(built.path), built };
  log(
    `growth: ${postgres ? 'PostgreSQL' : 'SQLite'} ${fixed(small.bytes / small.transfers, 0)} bytes/transfer (small), ${fixed(big.bytes / big.transfers, 0)} (large), after ${fixed((performance.now() - started) / 1000, 0)} s`,
  );
  const verify = { small: await verifyStore(small.built, log), big: await verifyStore(big.built, log) };
  log(`growth: verify took ${fixed(verify.small, 1)} s (small), ${fixed(verify.big, 1)} s (large)`);
  // Both files are read once, so that both start from the OS page cache: the figures leave out the
  // disk. (A PostgreSQL store was just written or read through its server's cache: not done there.)
  if (!postgres) for (const path of [small.built.path, big.built.path]) await readThrough(path);

  const tokens = createSyntheticExport(shape).tokenAddresses.slice(0, REQUESTED_TOKENS);
  const busiest = tokens[0]!;
  const busyAddress = createSyntheticExport(shape).holderAddress(0);
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
  // Page 1 of the 100 busiest tokens, sizes 11–50 (every one has 50+ transfers in the small store
  // too), and pages 21–50 × sizes 26–50 of the 3 whales (each has 3,000+ there): rotations far
  // beyond the response cache's 32 MiB, so every request is a miss and reads the store.
  const variedFirst: string[] = [];
  for (let size = 11; size <= 50; size++)
    for (const token of tokens.slice(0, 100)) variedFirst.push(txPath(token, 1, size));
  const variedDeep: string[] = [];
  for (let size = 26; size <= 50; size++)
    for (let page = 21; page <= 50; page++)
      for (const token of tokens.slice(0, 3)) variedDeep.push(txPath(token, page, size));
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
      name: 'Transaction List, page 1 of the 100 busiest tokens × sizes 11–50 (varied)',
      server: 'serve',
      paths: variedFirst,
    },
    {
      name: 'Transaction List, pages 21–50 × sizes 26–50 of the 3 whale tokens (varied)',
      server: 'serve',
      paths: variedDeep,
    },
    { name: 'Token Info, the 1,000 busiest tokens in turn', server: 'uncached', paths: infoAll },
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
    // Issue #16's operations on the busiest address (Zipf rank 0, in about 8% of all transfers)
    // and the busiest whale token: the same work on both stores (a full page each).
    {
      name: 'Address Transfers, busiest address, page 1 (size 50)',
      server: 'uncached',
      paths: [`/vipapi/eth/address/tokentrans/${busyAddress}/1/50`],
    },
    {
      name: 'Address Transfers, busiest address, page 50 (size 50, offset 2,450)',
      server: 'uncached',
      paths: [`/vipapi/eth/address/tokentrans/${busyAddress}/50/50`],
    },
    {
      name: 'Address Token Transfers, busiest address and token, page 1 (size 50)',
      server: 'uncached',
      paths: [`/vipapi/eth/address/tokentrans/${busyAddress}/${busiest}/1/50`],
    },
    {
      name: 'Address Token Balance, busiest address and token',
      server: 'uncached',
      paths: [`/vipapi/eth/address/tokenbalance/${busyAddress}/${busiest}`],
    },
    {
      name: 'Token Holders, busiest token, page 1 (size 50)',
      server: 'uncached',
      paths: [`/vipapi/eth/token/holders/${busiest}/1/50`],
    },
    {
      name: 'Token Holders, busiest token, page 10 (size 50, offset 450)',
      server: 'uncached',
      paths: [`/vipapi/eth/token/holders/${busiest}/10/50`],
    },
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
  // Half of it a crawl through pages 1–50 of the requested tokens (page by page across the tokens, so it
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
    verify,
    bareBodyBytes: Buffer.byteLength(pageBody),
    cacheDir: postgres ? built.path : cacheDirFor(shape),
    loadAtEnd: loadavg()[0] ?? 0,
  };
}
