// `npm run bench -- postgres`: the PostgreSQL backend beside SQLite, measured in one run against
// the same baselines: backfill (bare `eth_getLogs`), the API (bare `node:http` with the same
// bodies), and API throughput with two `serve` replicas on one database against one.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  createTestDatabase,
  querySql,
  TEST_POSTGRES_URL,
  type TestDatabase,
} from '../src/store/postgres/testing/test-database.js';
import { combine, cpuSecondsOf, type LoadResult, load, type Slice, type Target } from './api.js';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import type { BackfillChildInput, BackfillChildResult } from './backfill-child.js';
import type { BenchChain } from './chain.js';
import { type ChildHandle, fixed, int, median, mib, runChild, startChild } from './common.js';

export interface PostgresBenchOptions {
  reps: number;
  /** As the backfill benchmark: the baseline's span and the indexer's first span, in blocks. */
  chunk: number;
  concurrency: number;
  workDir: string;
  connections: number;
  /** Measured seconds per server and operation, split over `rounds` turns. */
  durationSeconds: number;
  warmupSeconds: number;
  rounds: number;
  pages: number;
  pageSize: number;
}

export interface BackendFigures {
  /** Median over the repetitions. */
  transfersPerSecond: number;
  ratio: number;
  reps: { seconds: number; ratio: number }[];
  cpuMicrosPerTransfer: number;
  peakRssBytes: number;
  bytesPerTransfer: number;
}

export interface PostgresReport {
  server: { version: string; settings: Record<string, string> };
  transfers: number;
  baselineLogsPerSecond: number;
  baselineSeconds: number[];
  sqlite: BackendFigures;
  postgres: BackendFigures;
  api: {
    name: string;
    bodyBytes: number;
    sqlite: LoadResult;
    postgres: LoadResult;
    /** CPU of the PostgreSQL server processes serving the API's connections, per request. */
    postgresServerMicros: number;
    baseline: LoadResult;
    sqliteRatio: number;
    postgresRatio: number;
  }[];
  replicas: {
    name: string;
    one: LoadResult;
    two: LoadResult;
    ratio: number;
    /** PostgreSQL server CPU per request with one replica and with two. */
    serverMicros: [number, number];
  }[];
  options: PostgresBenchOptions;
}

const BACKFILL = './backfill-child.js';
const SERVER = './api-server-child.js';

/** Server settings that decide write speed, shown beside the figures. */
const SETTINGS = [
  'shared_buffers',
  'synchronous_commit',
  'fsync',
  'wal_level',
  'max_wal_size',
  'checkpoint_timeout',
];

export async function runPostgresBench(
  chain: BenchChain,
  options: PostgresBenchOptions,
  log: (line: string) => void,
): Promise<PostgresReport> {
  const versionRow = await querySql<{ version: string }>(
    TEST_POSTGRES_URL,
    "SELECT current_setting('server_version') AS version",
  );
  const settingRows = await querySql<{ name: string; setting: string }>(
    TEST_POSTGRES_URL,
    'SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name = ANY($1)',
    [SETTINGS],
  );
  const settings: Record<string, string> = {};
  for (const row of settingRows) settings[row.name] = row.setting;

  const databases: TestDatabase[] = [];
  const base = {
    url: chain.anvil.url,
    head: chain.head,
    chunk: options.chunk,
    concurrency: options.concurrency,
  };
  const reps: {
    baseline: BackfillChildResult;
    sqlite: BackfillChildResult;
    postgres: BackfillChildResult;
  }[] = [];
  let sqlitePath = '';
  let database: TestDatabase | undefined;
  try {
    for (let i = 0; i < options.reps; i++) {
      const baseline = await runChild<BackfillChildResult>(BACKFILL, {
        ...base,
        mode: 'baseline',
      } satisfies BackfillChildInput);
      if (sqlitePath) for (const suffix of ['', '-wal', '-shm']) rmSync(sqlitePath + suffix, { force: true });
      sqlitePath = join(options.workDir, `pg-bench-${i}.sqlite`);
      const sqlite = await runChild<BackfillChildResult>(BACKFILL, {
        ...base,
        mode: 'indexer',
        dbPath: sqlitePath,
      } satisfies BackfillChildInput);
      await database?.drop();
      database = await createTestDatabase();
      databases.push(database);
      const postgres = await runChild<BackfillChildResult>(BACKFILL, {
        ...base,
        mode: 'indexer',
        dbPath: database.url,
      } satisfies BackfillChildInput);
      for (const [name, result] of [
        ['SQLite', sqlite],
        ['PostgreSQL', postgres],
      ] as const) {
        if (result.items !== baseline.items) {
          throw new Error(`${name} stored ${result.items} transfers but the node has ${baseline.items} logs`);
        }
      }
      reps.push({ baseline, sqlite, postgres });
      const rate = (r: BackfillChildResult) => Math.round(r.items / r.seconds);
      log(
        `postgres backfill rep ${i + 1}/${options.reps}: baseline ${rate(baseline)} logs/s, SQLite ${rate(sqlite)} ` +
          `transfers/s, PostgreSQL ${rate(postgres)} transfers/s`,
      );
    }
    // Anvil is not needed any more: the cores go to the servers and wrk.
    await chain.anvil.stop();

    const figures = (pick: (r: (typeof reps)[number]) => BackfillChildResult): BackendFigures => {
      const ratios = reps.map(
        (r) => pick(r).items / pick(r).seconds / (r.baseline.items / r.baseline.seconds),
      );
      return {
        transfersPerSecond: median(reps.map((r) => pick(r).items / pick(r).seconds)),
        ratio: median(ratios),
        reps: reps.map((r, i) => ({ seconds: pick(r).seconds, ratio: ratios[i]! })),
        cpuMicrosPerTransfer: median(reps.map((r) => (pick(r).cpuSeconds * 1e6) / pick(r).items)),
        peakRssBytes: median(reps.map((r) => pick(r).peakRssBytes)),
        bytesPerTransfer: median(reps.map((r) => (pick(r).dbBytes ?? 0) / pick(r).items)),
      };
    };
    const report: PostgresReport = {
      server: { version: versionRow[0]?.version ?? 'unknown', settings },
      transfers: reps[0]!.baseline.items,
      baselineLogsPerSecond: median(reps.map((r) => r.baseline.items / r.baseline.seconds)),
      baselineSeconds: reps.map((r) => r.baseline.seconds),
      sqlite: figures((r) => r.sqlite),
      postgres: figures((r) => r.postgres),
      api: [],
      replicas: [],
      options,
    };
    await runApi(report, chain.sprayed.address, sqlitePath, database!.url, options, log);
    return report;
  } finally {
    await Promise.all(databases.map((db) => db.drop().catch(() => {})));
  }
}

interface Operation {
  name: string;
  paths: string[];
}

async function runApi(
  report: PostgresReport,
  token: string,
  sqlitePath: string,
  postgresUrl: string,
  options: PostgresBenchOptions,
  log: (line: string) => void,
): Promise<void> {
  const operations: Operation[] = [
    { name: 'Token Info', paths: [`/vipapi/eth/token/${token}`] },
    {
      name: `Transaction List (pages 1–${options.pages}, size ${options.pageSize})`,
      paths: Array.from(
        { length: options.pages },
        (_, i) => `/vipapi/eth/token/tokentrans/${token}/${i + 1}/${options.pageSize}`,
      ),
    },
    { name: 'Token List (page 1, size 50)', paths: ['/vipapi/eth/tokens/1/50'] },
  ];
  const servers: ChildHandle<ApiServerChildReady>[] = [];
  const start = async (input: ApiServerChildInput) => {
    const server = await startChild<ApiServerChildReady>(SERVER, input);
    servers.push(server);
    return server;
  };
  try {
    // Both backends uncached: the PostgreSQL store has no change counter for the response cache
    // (several processes write it), so the comparison is of the stores themselves.
    const sqlite = await start({ mode: 'tokenquery', dbPath: sqlitePath, cache: false });
    const postgres = await start({ mode: 'tokenquery', dbPath: postgresUrl, cache: false });
    const replica = await start({ mode: 'tokenquery', dbPath: postgresUrl, cache: false });
    const target = (server: ChildHandle<ApiServerChildReady>, paths: string[]): Target => ({
      url: server.value.url,
      paths: paths.map((path) => `${path}?apikey=${server.value.apiKey!}`),
      pid: server.pid,
    });

    // The same chain indexed into either backend must give the same answers, byte for byte.
    const bodies: Record<string, string> = {};
    for (const [i, operation] of operations.entries()) {
      const answers = await Promise.all(
        [sqlite, postgres, replica].map(async (server) => {
          const t = target(server, operation.paths);
          const response = await fetch(t.url + t.paths[0]);
          return { status: response.status, body: await response.text() };
        }),
      );
      for (const answer of answers) {
        if (answer.status !== 200 || answer.body !== answers[0]!.body) {
          throw new Error(`${operation.name}: the backends answer differently (HTTP ${answer.status})`);
        }
      }
      bodies[`/op${i}`] = answers[0]!.body;
    }
    const baseline = await start({ mode: 'baseline', bodies });

    for (const [i, operation] of operations.entries()) {
      const targets = [
        target(sqlite, operation.paths),
        target(postgres, operation.paths),
        { url: baseline.value.url, paths: [`/op${i}`], pid: baseline.pid },
      ];
      for (const t of targets) await load(t, options.warmupSeconds, options.connections);
      const slices: Slice[][] = targets.map(() => []);
      const seconds = Math.max(1, Math.round(options.durationSeconds / options.rounds));
      let serverSeconds = 0;
      for (let round = 0; round < options.rounds; round++) {
        for (const [j, t] of targets.entries()) {
          if (j !== 1) {
            slices[j]!.push(await load(t, seconds, options.connections));
            continue;
          }
          const run = await measured(postgresUrl, t, seconds, options.connections);
          slices[j]!.push(run.slice);
          serverSeconds += run.serverSeconds;
        }
      }
      const ratio = (j: number) => median(slices[j]!.map((s, r) => s.perSecond / slices[2]![r]!.perSecond));
      const [sqliteResult, postgresResult, baselineResult] = slices.map(combine) as [
        LoadResult,
        LoadResult,
        LoadResult,
      ];
      report.api.push({
        name: operation.name,
        bodyBytes: Buffer.byteLength(bodies[`/op${i}`]!),
        sqlite: sqliteResult,
        postgres: postgresResult,
        postgresServerMicros: (serverSeconds / postgresResult.requests) * 1e6,
        baseline: baselineResult,
        sqliteRatio: ratio(0),
        postgresRatio: ratio(1),
      });
      log(
        `postgres api ${operation.name}: SQLite ${int(sqliteResult.requestsPerSecond)} req/s, PostgreSQL ` +
          `${int(postgresResult.requestsPerSecond)} req/s, baseline ${int(baselineResult.requestsPerSecond)} req/s`,
      );
    }

    // One replica with every connection, against two replicas with half each, in turns.
    for (const operation of operations.slice(0, 2)) {
      const one: Slice[] = [];
      const two: Slice[] = [];
      const half = Math.max(1, Math.floor(options.connections / 2));
      const seconds = Math.max(1, Math.round(options.durationSeconds / options.rounds));
      await load(target(postgres, operation.paths), options.warmupSeconds, options.connections);
      const serverSeconds = [0, 0];
      for (let round = 0; round < options.rounds; round++) {
        const single = await measured(
          postgresUrl,
          target(postgres, operation.paths),
          seconds,
          options.connections,
        );
        one.push(single.slice);
        serverSeconds[0]! += single.serverSeconds;
        const before = await serverCpu(postgresUrl);
        const pair = await Promise.all([
          load(target(postgres, operation.paths), seconds, half),
          load(target(replica, operation.paths), seconds, half),
        ]);
        serverSeconds[1]! += (await serverCpu(postgresUrl)) - before;
        two.push(sumSlices(pair));
      }
      const [oneResult, twoResult] = [combine(one), combine(two)];
      const row = {
        name: operation.name,
        one: oneResult,
        two: twoResult,
        ratio: median(two.map((s, r) => s.perSecond / one[r]!.perSecond)),
        serverMicros: [
          (serverSeconds[0]! / oneResult.requests) * 1e6,
          (serverSeconds[1]! / twoResult.requests) * 1e6,
        ] as [number, number],
      };
      report.replicas.push(row);
      log(
        `postgres replicas ${operation.name}: 1 replica ${int(row.one.requestsPerSecond)} req/s, ` +
          `2 replicas ${int(row.two.requestsPerSecond)} req/s (${fixed(row.ratio)}×)`,
      );
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/**
 * CPU seconds used so far by the PostgreSQL backends serving the API servers' pools (their
 * `application_name` is `tokenquery`); the server runs on this machine, so `/proc` shows them.
 */
async function serverCpu(url: string): Promise<number> {
  const rows = await querySql<{ pid: number }>(
    url,
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tokenquery'",
  );
  return rows.reduce((sum, row) => sum + (cpuSecondsOf(row.pid) || 0), 0);
}

/** `load`, and the PostgreSQL server CPU it caused. */
async function measured(url: string, target: Target, seconds: number, connections: number) {
  const before = await serverCpu(url);
  const slice = await load(target, seconds, connections);
  return { slice, serverSeconds: (await serverCpu(url)) - before };
}

/** Two servers loaded side by side as one: requests add up, the slower latency counts. */
function sumSlices([a, b]: Slice[]): Slice {
  const x = a!;
  const y = b!;
  return {
    perSecond: x.perSecond + y.perSecond,
    requests: x.requests + y.requests,
    seconds: Math.max(x.seconds, y.seconds),
    p50Ms: Math.max(x.p50Ms, y.p50Ms),
    p99Ms: Math.max(x.p99Ms, y.p99Ms),
    errors: x.errors + y.errors,
    non2xx: x.non2xx + y.non2xx,
    cpuSeconds: x.cpuSeconds + y.cpuSeconds,
  };
}

export function renderPostgres(r: PostgresReport, machine: string): string {
  const o = r.options;
  const s = r.server.settings;
  const rep = (i: number) => r.sqlite.reps[i]!;
  const pgRep = (i: number) => r.postgres.reps[i]!;
  const cpu = (result: LoadResult) =>
    Number.isNaN(result.cpuMicrosPerRequest) ? '?' : `${fixed(result.cpuMicrosPerRequest, 0)} µs`;
  return [
    machine,
    '',
    `PostgreSQL ${r.server.version} on 127.0.0.1 (the same machine), server defaults: shared_buffers ${s.shared_buffers}, ` +
      `synchronous_commit ${s.synchronous_commit}, fsync ${s.fsync}, max_wal_size ${s.max_wal_size}. Same chain as ` +
      `above (${int(r.transfers)} Transfer logs); each repetition runs the baseline, then the indexer into a fresh SQLite ` +
      `file, then into a fresh PostgreSQL database (through its writer lease, as \`tokenquery index\` writes), each in ` +
      `a fresh process. Median of ${r.sqlite.reps.length} repetitions.`,
    '',
    '| | baseline: bare `eth_getLogs` | SQLite indexer | PostgreSQL indexer |',
    '|---|---|---|---|',
    `| throughput (median) | ${int(r.baselineLogsPerSecond)} logs/s | ${int(r.sqlite.transfersPerSecond)} transfers/s, ` +
      `**${fixed(r.sqlite.ratio)}** | ${int(r.postgres.transfersPerSecond)} transfers/s, **${fixed(r.postgres.ratio)}** |`,
    ...r.baselineSeconds.map(
      (seconds, i) =>
        `| repetition ${i + 1} | ${fixed(seconds)} s | ${fixed(rep(i).seconds)} s, ${fixed(rep(i).ratio)} | ` +
        `${fixed(pgRep(i).seconds)} s, ${fixed(pgRep(i).ratio)} |`,
    ),
    `| indexer process CPU per transfer | | ${fixed(r.sqlite.cpuMicrosPerTransfer, 1)} µs | ${fixed(r.postgres.cpuMicrosPerTransfer, 1)} µs (plus the server's) |`,
    `| peak RSS (median) | | ${mib(r.sqlite.peakRssBytes)} | ${mib(r.postgres.peakRssBytes)} |`,
    `| storage per transfer | | ${fixed(r.sqlite.bytesPerTransfer, 0)} B (file) | ${fixed(r.postgres.bytesPerTransfer, 0)} B (tables, indexes, TOAST, after VACUUM) |`,
    '',
    `API: the stores filled by the last repetition, each served by \`startApiServer\` in a child process with the ` +
      `response cache off (the PostgreSQL store has no change counter for it: other processes write the database), ` +
      `and the bare \`node:http\` baseline answering the same bodies (checked identical between the two backends). ` +
      `wrk with ${o.connections} connections, ${o.warmupSeconds} s warm-up, then ${o.durationSeconds} s per ` +
      `server in ${o.rounds} turns. Ratio: median of the per-turn ratios to the baseline.`,
    '',
    '| operation | body | SQLite req/s | SQLite p50 / p99 | SQLite CPU/req | PostgreSQL req/s | PostgreSQL p50 / p99 | PostgreSQL CPU/req: API + database | baseline req/s | ratio SQLite | ratio PostgreSQL |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.api.map(
      (c) =>
        `| ${c.name} | ${int(c.bodyBytes)} B | ${int(c.sqlite.requestsPerSecond)} | ${c.sqlite.p50Ms} / ${c.sqlite.p99Ms} ms | ` +
        `${cpu(c.sqlite)} | ${int(c.postgres.requestsPerSecond)} | ${c.postgres.p50Ms} / ${c.postgres.p99Ms} ms | ` +
        `${cpu(c.postgres)} + ${fixed(c.postgresServerMicros, 0)} µs | ${int(c.baseline.requestsPerSecond)} | ` +
        `**${fixed(c.sqliteRatio)}** | **${fixed(c.postgresRatio)}** |`,
    ),
    '',
    `Replicas: one PostgreSQL \`serve\` process with all ${o.connections} connections, against two on the same ` +
      `database with ${Math.floor(o.connections / 2)} each (two wrk processes side by side), in turns. ` +
      "CPU/req: the API processes' CPU (both, for two) + the PostgreSQL backends' CPU, per request.",
    '',
    '| operation | 1 replica req/s | p50 / p99 | CPU/req | 2 replicas req/s | p50 / p99 (slower) | CPU/req | 2 ÷ 1 |',
    '|---|---|---|---|---|---|---|---|',
    ...r.replicas.map(
      (c) =>
        `| ${c.name} | ${int(c.one.requestsPerSecond)} | ${c.one.p50Ms} / ${c.one.p99Ms} ms | ` +
        `${cpu(c.one)} + ${fixed(c.serverMicros[0], 0)} µs | ${int(c.two.requestsPerSecond)} | ` +
        `${c.two.p50Ms} / ${c.two.p99Ms} ms | ${cpu(c.two)} + ${fixed(c.serverMicros[1], 0)} µs | **${fixed(c.ratio)}** |`,
    ),
    '',
    `Errors: ${[...r.api.flatMap((c) => [c.sqlite, c.postgres, c.baseline]), ...r.replicas.flatMap((c) => [c.one, c.two])].reduce((n, x) => n + x.errors + x.non2xx, 0)} in all runs.`,
  ].join('\n');
}
