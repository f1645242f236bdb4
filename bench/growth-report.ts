// The growth benchmark's report: its figures, and the Markdown section of docs/benchmarks.md made
// from them.
import type { LoadResult } from './api.js';
import { fixed, int, median } from './common.js';
import type { GrowthBenchOptions } from './growth.js';
import type { BuiltStore } from './growth-store.js';

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
  /** Seconds of `tokenquery verify` over each whole store (growth-store.ts `verifyStore`). */
  verify: { small: number; big: number };
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

/**
 * Tables and indexes as the size rows group them, by their names in either backend (SQLite's
 * `dbstat`; PostgreSQL's catalog, where a primary key is an index apart from its table).
 */
const TRANSFER_OBJECTS = ['transfers', 'transfers_pkey'] as const;
const BALANCE_OBJECTS = ['balances', 'balances_pkey'] as const;
const BALANCE_INDEXES = ['balances_by_rank', 'balances_by_holder', 'balances_negative'] as const;
const ADDRESS_OBJECTS = [
  'address_transfers',
  'address_transfers_pkey',
  'address_transfers_all',
  'address_transfers_newest',
  'addresses',
  'addresses_by_address',
] as const;

/** The Markdown section of docs/benchmarks.md. */
export function renderGrowth(r: GrowthReport, machineLine: string): string {
  const o = r.options;
  const s = r.small;
  const b = r.big;
  const perTransfer = (x: StoreReport) => x.bytes / x.transfers;
  const objectBytes = (x: StoreReport, name: string) =>
    x.built.facts.objects.find((obj) => obj.name === name)?.bytes ?? 0;
  const groupBytes = (x: StoreReport, names: readonly string[]) =>
    names.reduce((sum, name) => sum + objectBytes(x, name), 0);
  const restBytes = (x: StoreReport) =>
    x.bytes -
    groupBytes(x, [...TRANSFER_OBJECTS, ...BALANCE_OBJECTS, ...BALANCE_INDEXES, ...ADDRESS_OBJECTS]);
  const present = (names: readonly string[]) =>
    names.filter((name) => b.built.facts.objects.some((obj) => obj.name === name)).join(', ');
  const postgres = o.backend === 'postgres';
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
    `${int(o.shape.tokens)} tokens shaped like a chain (\`activity: 'chain'\`: 3 whale tokens with a tenth of all transfers, ` +
    `the other tokens and the addresses Zipf-skewed, rank k about 1/(k+1) as busy as the first) among ` +
    `${int(o.shape.holders)} addresses, ${o.shape.perBlock ?? 100} per block; the baseline store is the same generator's ` +
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
    `| ${postgres ? 'PostgreSQL database (`pg_database_size`)' : 'SQLite file (main + WAL)'}, bytes per transfer | ${fixed(perTransfer(s), 0)} (${mib(s.bytes)}) | **${fixed(perTransfer(b), 0)}** (${mib(b.bytes)}) | ${fixed(perTransfer(b) / perTransfer(s))} | ≤ 200 at ${short(b.transfers)}: ${verdict(perTransfer(b) <= 200)} |`,
    `| of which ${present(TRANSFER_OBJECTS)} | ${fixed(groupBytes(s, TRANSFER_OBJECTS) / s.transfers, 0)} | ${fixed(groupBytes(b, TRANSFER_OBJECTS) / b.transfers, 0)} | | |`,
    `| of which ${present(BALANCE_OBJECTS)} | ${fixed(groupBytes(s, BALANCE_OBJECTS) / s.transfers, 0)} (${fixed(s.built.facts.balanceRows / s.transfers, 2)} rows per transfer) | ${fixed(groupBytes(b, BALANCE_OBJECTS) / b.transfers, 0)} (${fixed(b.built.facts.balanceRows / b.transfers, 2)} rows per transfer) | | |`,
    `| of which ${present(BALANCE_INDEXES)} | ${fixed(groupBytes(s, BALANCE_INDEXES) / s.transfers, 0)} | ${fixed(groupBytes(b, BALANCE_INDEXES) / b.transfers, 0)} | | |`,
    `| of which the address views (${present(ADDRESS_OBJECTS)}) | ${fixed(groupBytes(s, ADDRESS_OBJECTS) / s.transfers, 0)} | ${fixed(groupBytes(b, ADDRESS_OBJECTS) / b.transfers, 0)} | | |`,
    `| everything else (tokens and their indexes, chains, keys, free pages, …) | ${fixed(restBytes(s) / s.transfers, 1)} | ${fixed(restBytes(b) / b.transfers, 1)} | | |`,
    `| \`tokenquery import\` of the export, rows per second | ${int(s.transfers / s.built.facts.importSeconds)} (${fixed(s.built.facts.importSeconds, 0)} s) | **${int(b.transfers / b.built.facts.importSeconds)}** (${fixed(b.built.facts.importSeconds / 60, 1)} min) | ${fixed(s.built.facts.importSeconds / s.transfers / (b.built.facts.importSeconds / b.transfers))} | |`,
    `| \`tokenquery verify\` of the whole store (no node), wall time | ${fixed(r.verify.small, 1)} s (${fixed((r.verify.small / s.transfers) * 1e6, 0)} µs a transfer) | ${fixed(r.verify.big / 60, 1)} min (${fixed((r.verify.big / b.transfers) * 1e6, 0)} µs a transfer) | ${fixed(r.verify.big / b.transfers / (r.verify.small / s.transfers))} per transfer | |`,
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
      `pages 1–50 of the 1,000 busiest tokens (size 50, page by page across the tokens), half the varied and uncached rotations below; the bare server answers a full Transaction List page (${int(r.bareBodyBytes)} B) to every request. RSS once answering, before the load: bare ${mb(m.bare.idleBytes)}, ` +
      `${short(s.transfers)} ${mb(m.small.idleBytes)}, ${short(b.transfers)} ${mb(m.big.idleBytes)}; requests/s during the load: ` +
      `bare ${int(m.bare.requestsPerSecond)}, ${short(s.transfers)} ${int(m.small.requestsPerSecond)}, ${short(b.transfers)} ${int(m.big.requestsPerSecond)}` +
      ` (errors: ${m.bare.errors}, ${m.small.errors}, ${m.big.errors}). Peak RSS of \`serve\` on the ${short(b.transfers)} store over the whole API measurement below: ${mb(r.bigServePeakDuringApi)}.`,
    '',
    `API: wrk, ${o.connections} connections, ${o.warmupSeconds} s warm-up per store, then ${o.durationSeconds} s per store in ` +
      `${o.rounds} rounds in which the two stores take turns; ratio: median of the per-round ratios ${short(b.transfers)} ÷ ${short(s.transfers)}; ` +
      "p50 / p99: median of the rounds' percentiles; CPU: user + system time of the server process per request. " +
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

export function mb(bytes: number): string {
  return `${fixed(bytes / 1e6, 0)} MB`;
}
