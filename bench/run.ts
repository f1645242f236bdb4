// `npm run bench [-- backfill|api|neo|import|postgres|realtime|ponder|growth] [--reps N] [--duration S] [--connections N] [--profile] [--no-write]`
// `npm run bench -- backfill-ab <git-ref> [--reps N]`: this tree's indexer against another commit's (bench/ab.ts).
// `npm run bench -- address-ops [--address-rows N] [--reps N] [--wrk-seconds S]`: issue #16's address and holder operations, with wrk.
// `npm run bench -- address-ab <git-ref> [--address-rows N] [--reps N] [--wrk-seconds S]`: Address Token Balances, this tree against another commit (bench/address-ab.ts).
// `npm run bench -- api-ab <git-ref> [--reps N] [--wrk-seconds S] [--connections N]`: the API's cached operations, this tree against another commit (bench/api-ab.ts).
// Runs the benchmarks, prints Markdown tables, and writes them into docs/benchmarks.md between the
// `<!-- bench:NAME:begin -->` / `<!-- bench:NAME:end -->` markers.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runBackfillAb } from './ab.js';
import { runAddressAb } from './address-ab.js';
import { addressOpsShape, runAddressOpsBench } from './address-ops.js';
import { renderAddressOps } from './address-ops-report.js';
import { type ApiReport, runApiBench } from './api.js';
import { runApiAb } from './api-ab.js';
import { type BackfillReport, runBackfillBench } from './backfill.js';
import type { BackfillChildInput, BackfillChildResult } from './backfill-child.js';
import { type BenchChain, prepareChain } from './chain.js';
import { fixed, int, type MachineFacts, machineFacts, median, mib, runChild } from './common.js';
import { growthShape, runGrowthBench } from './growth.js';
import { dropCachedPostgresStores } from './growth-postgres.js';
import { renderGrowth } from './growth-report.js';
import { cachedStores, DiskSpaceError } from './growth-store.js';
import { renderImport, runImportBench } from './import.js';
import { runImportPostgresBench } from './import-postgres.js';
import { type NeoReport, runNeoBench } from './neo.js';
import { renderPonder, runPonderBench } from './ponder.js';
import { renderPostgres, runPostgresBench } from './postgres.js';
import type { ProfileEntry, ProfileSummary } from './profile.js';
import { renderRealtime, runRealtimeBench } from './realtime.js';
import { wrkMissing } from './wrk.js';

const CHAIN = { transfers: 200_000, holders: 20_000, perBlock: 1_000 };
/** `backfill-large`: issue #5's size (at least 1,000,000 transfers to at least 50,000 holders). */
const LARGE_CHAIN = { transfers: 1_000_000, holders: 50_000, perBlock: 1_000 };
/** 5 blocks of 1,000 transfers: 5,000 logs per request, the indexer's range planner's target. */
const CHUNK = 5;
/** The indexer's default number of `eth_getLogs` requests in flight. */
const CONCURRENCY = 4;
/** Busy NEO blocks indexed by the NEO benchmark (copies of mainnet block 1444843). */
const NEO_COPIES = 600;
/** A latency in ms as the tables print it: at most 3 decimals (a median of two may be 0.6960000000000001). */
const latency = (ms: number): string => String(Number(ms.toFixed(3)));

const USAGE = `Usage: npm run bench -- [scenario] [options]   (or: node dist/bench/run.js ...)

Scenarios (docs/benchmarks.md says what each measures and where it records its results):
  (none)          all of: backfill, api, neo
  backfill        indexer backfill throughput against a bare eth_getLogs client
  backfill-large  the same at 1,000,000 transfers
  backfill-ab REF this tree against the commit REF, interleaved pairs
  api             the API's operations under load (wrk)
  neo             NEO indexing of busy mainnet blocks
  import          tokenquery import of a synthetic export (--import-rows)
  import-pg [REF] import into PostgreSQL, two exports; with REF against that commit, interleaved
  postgres        the PostgreSQL store
  realtime        following the head (--realtime-blocks)
  ponder          against Ponder on the same chain
  growth          a 10M-transfer store against a 100k one, shaped like a chain (--growth-rows)
  address-ops     the address operations and token holders with wrk (--address-rows, --wrk-seconds)
  address-ab REF  Address Token Balances, uncached: this tree against the commit REF (same options)
  api-ab REF      the API's cached operations: this tree (fast path on and off) against the commit REF (--wrk-seconds)
  clean           remove the stores growth and address-ops keep in the OS temporary directory

Options:
  --reps N  --duration S  --warmup S  --connections N  --profile  --no-write
  --large  --import-rows N  --realtime-blocks N  --growth-rows N  --growth-backend sqlite|postgres
  --address-rows N  --wrk-seconds S
  --help          this text`;

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        reps: { type: 'string', default: '3' },
        duration: { type: 'string', default: '10' },
        warmup: { type: 'string', default: '2' },
        connections: { type: 'string', default: '64' },
        profile: { type: 'boolean', default: false },
        'no-write': { type: 'boolean', default: false },
        /** `import` only: rows of the synthetic export. */
        'import-rows': { type: 'string', default: '1000000' },
        /** `realtime` only: blocks measured per mode. */
        'realtime-blocks': { type: 'string', default: '80' },
        /** `growth` only: transfers of the large store (the baseline store has 100,000). */
        'growth-rows': { type: 'string', default: '10000000' },
        /** `growth` only: sqlite, or postgres (databases on TOKENQUERY_TEST_POSTGRES's server). */
        'growth-backend': { type: 'string', default: 'sqlite' },
        /** `address-ops` only: transfers of its store (a tenth of them name the busy address, a tenth are the airdrops). */
        'address-rows': { type: 'string', default: '10000000' },
        /** `address-ops` only: seconds of each wrk run. */
        'wrk-seconds': { type: 'string', default: '3' },
        /** `backfill-ab` only: on the 1,000,000-transfer chain of `backfill-large`. */
        large: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    // An unknown or malformed option is the user's error: one line, no stack trace.
    console.error(`bench: ${(error as Error).message.split('. ')[0]}; see --help`);
    process.exit(2);
  }
}
const { values, positionals } = parseCommandLine();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const which = positionals[0] ?? 'all';
if (
  ![
    'all',
    'backfill',
    'backfill-large',
    'api',
    'neo',
    'import',
    'import-pg',
    'postgres',
    'realtime',
    'ponder',
    'growth',
    'backfill-ab',
    'address-ops',
    'address-ab',
    'api-ab',
    'clean',
  ].includes(which)
) {
  console.error(
    `unknown benchmark "${which}": use backfill, backfill-large, backfill-ab, api, neo, import, import-pg, postgres, realtime, ponder, growth, address-ops, address-ab, api-ab, clean, or nothing for all but backfill-large, backfill-ab, import, import-pg, postgres, realtime, ponder, growth, address-ops, address-ab and api-ab`,
  );
  process.exit(2);
}
if (
  (which === 'backfill-ab' || which === 'address-ab' || which === 'api-ab') &&
  positionals[1] === undefined
) {
  console.error(`${which} needs the commit to compare with: npm run bench -- ${which} <git-ref>`);
  process.exit(2);
}
if (which === 'address-ops' || which === 'address-ab' || which === 'api-ab') {
  const missing = wrkMissing();
  if (missing !== null) {
    console.error(missing);
    process.exit(2);
  }
}
const log = (line: string): void => console.error(`[bench] ${line}`);
// A store the disk cannot take is the user's to decide about: one line, no stack trace.
process.on('uncaughtException', (error) => {
  if (error instanceof DiskSpaceError) {
    console.error(`bench: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
if (which === 'clean') {
  const stores = cachedStores();
  for (const { dir } of stores) rmSync(dir, { recursive: true, force: true });
  const bytes = stores.reduce((sum, store) => sum + store.bytes, 0);
  const databases = await dropCachedPostgresStores();
  console.log(
    `removed ${stores.length} cached benchmark stores (${(bytes / 1e9).toFixed(1)} GB) and ${databases} PostgreSQL databases`,
  );
  process.exit(0);
}
if (which === 'growth' && !['sqlite', 'postgres'].includes(values['growth-backend'])) {
  console.error(`--growth-backend is sqlite or postgres, not "${values['growth-backend']}"`);
  process.exit(2);
}

const facts = machineFacts();
const workDir = mkdtempSync(join(tmpdir(), 'tokenquery-bench-'));
let chain: BenchChain | undefined;
const cleanUp = async (): Promise<void> => {
  await chain?.anvil.stop();
  rmSync(workDir, { recursive: true, force: true });
};
process.once('SIGINT', () => {
  void cleanUp().finally(() => process.exit(130));
});

const sections: Record<string, string> = {};
try {
  log(`${facts.cpu}, ${facts.cores} cores, Node ${facts.node}, ${facts.anvil}`);
  if (which === 'postgres') {
    // PostgreSQL beside SQLite, with the same baselines, in one run (needs the server of
    // TOKENQUERY_TEST_POSTGRES, default the local one).
    chain = await prepareChain(CHAIN);
    log(`chain ready in ${chain.setupSeconds.toFixed(1)} s, head ${chain.head}`);
    const report = await runPostgresBench(
      chain,
      {
        reps: Number(values.reps),
        chunk: CHUNK,
        concurrency: CONCURRENCY,
        workDir,
        connections: Number(values.connections),
        durationSeconds: Number(values.duration),
        warmupSeconds: Number(values.warmup),
        rounds: 5,
        pages: 50,
        pageSize: 50,
      },
      log,
    );
    sections.postgres = renderPostgres(report, machineLine(facts));
  }
  if (which === 'realtime') {
    const report = await runRealtimeBench(
      {
        blocks: Number(values['realtime-blocks']),
        rounds: 2,
        pollIntervalMs: 1000,
        clientPollMs: 5,
        gapMs: [100, 1500],
        workDir,
        seed: 1,
      },
      log,
    );
    sections.realtime = renderRealtime(report, machineLine(facts));
  }
  if (which === 'ponder') {
    // Installs Ponder from the npm registry into a cache directory on first use: not in the default run.
    chain = await prepareChain(CHAIN);
    log(`chain ready in ${chain.setupSeconds.toFixed(1)} s, head ${chain.head}`);
    const report = await runPonderBench(
      chain,
      { reps: Number(values.reps), chunk: CHUNK, concurrency: CONCURRENCY, workDir },
      log,
    );
    sections.ponder = renderPonder(report, machineLine(facts));
  }
  if (which === 'backfill-ab') {
    chain = await prepareChain(values.large ? LARGE_CHAIN : CHAIN);
    log(`chain ready in ${chain.setupSeconds.toFixed(1)} s, head ${chain.head}`);
    const table = await runBackfillAb(
      chain,
      { ref: positionals[1]!, reps: Number(values.reps), chunk: CHUNK, concurrency: CONCURRENCY, workDir },
      log,
    );
    console.log(table);
  }
  if (which === 'backfill-large') {
    // The backfill benchmark on a chain five times longer, with more holders (not in the default run).
    chain = await prepareChain(LARGE_CHAIN);
    log(
      `chain ready in ${chain.setupSeconds.toFixed(1)} s: ${int(LARGE_CHAIN.transfers)} transfers in ${chain.sprayBlocks} blocks, head ${chain.head}`,
    );
    const report = await runBackfillBench(
      chain,
      { reps: Number(values.reps), chunk: CHUNK, concurrency: CONCURRENCY, profile: values.profile, workDir },
      log,
    );
    sections['backfill-large'] = renderBackfill(report, chain, facts, 0.8);
    await chain.anvil.stop();
  }
  if (
    which !== 'backfill-large' &&
    which !== 'neo' &&
    which !== 'import' &&
    which !== 'import-pg' &&
    which !== 'postgres' &&
    which !== 'realtime' &&
    which !== 'ponder' &&
    which !== 'growth' &&
    which !== 'backfill-ab' &&
    which !== 'address-ops' &&
    which !== 'address-ab'
  ) {
    chain = await prepareChain(CHAIN);
    log(
      `chain ready in ${chain.setupSeconds.toFixed(1)} s: ${int(CHAIN.transfers)} transfers in ${chain.sprayBlocks} blocks, head ${chain.head}`,
    );

    let dbPath: string;
    if (which !== 'api' && which !== 'api-ab') {
      const report = await runBackfillBench(
        chain,
        {
          reps: Number(values.reps),
          chunk: CHUNK,
          concurrency: CONCURRENCY,
          profile: values.profile,
          workDir,
        },
        log,
      );
      sections.backfill = renderBackfill(report, chain, facts);
      dbPath = report.dbPath;
    } else {
      // The API benchmark alone still serves a store the indexer filled from this chain.
      dbPath = join(workDir, 'api.sqlite');
      await runChild<BackfillChildResult>('./backfill-child.js', {
        mode: 'indexer',
        url: chain.anvil.url,
        head: chain.head,
        chunk: CHUNK,
        concurrency: CONCURRENCY,
        dbPath,
      } satisfies BackfillChildInput);
    }
    // Anvil is not needed any more; stopping it leaves the cores to the API benchmark.
    await chain.anvil.stop();

    if (which === 'api-ab') {
      const table = await runApiAb(
        {
          ref: positionals[1]!,
          dbPath,
          token: chain.sprayed.address,
          reps: Number(values.reps),
          seconds: Number(values['wrk-seconds']),
          connections: Number(values.connections),
        },
        log,
      );
      console.log(`${machineLine(facts)}\n\n${table}`);
    } else if (which !== 'backfill') {
      const report = await runApiBench(
        {
          dbPath,
          token: chain.sprayed.address,
          connections: Number(values.connections),
          durationSeconds: Number(values.duration),
          warmupSeconds: Number(values.warmup),
          pages: 50,
          pageSize: 50,
          profile: values.profile,
        },
        log,
      );
      sections.api = renderApi(report, facts);
    }
  }
  if (which === 'all' || which === 'neo') {
    const report = await runNeoBench(
      { reps: Number(values.reps), copies: NEO_COPIES, decodeSeconds: 2, workDir },
      log,
    );
    sections.neo = renderNeo(report, facts);
  }
  if (which === 'growth') {
    const report = await runGrowthBench(
      {
        shape: growthShape(Number(values['growth-rows'])),
        backend: values['growth-backend'] as 'sqlite' | 'postgres',
        baseTransfers: 100_000,
        connections: Number(values.connections),
        durationSeconds: 10,
        rounds: 5,
        warmupSeconds: 1,
        memorySeconds: 15,
        startupReps: 7,
        workDir,
      },
      log,
    );
    sections.growth = renderGrowth(report, machineLine(facts));
  }
  if (which === 'address-ops') {
    const report = await runAddressOpsBench(
      {
        shape: addressOpsShape(Number(values['address-rows'])),
        reps: Number(values.reps),
        seconds: Number(values['wrk-seconds']),
        warmupSeconds: Number(values.warmup),
        connections: Number(values.connections),
        workDir,
      },
      log,
    );
    sections['address-ops'] = renderAddressOps(report, machineLine(facts));
  }
  if (which === 'address-ab') {
    const table = await runAddressAb(
      {
        ref: positionals[1]!,
        shape: addressOpsShape(Number(values['address-rows'])),
        reps: Number(values.reps),
        seconds: Number(values['wrk-seconds']),
        workDir,
      },
      log,
    );
    console.log(`${machineLine(facts)}\n\n${table}`);
  }
  if (which === 'import') {
    const report = await runImportBench(
      {
        transfers: Number(values['import-rows']),
        holders: 50_000,
        tokens: 20,
        seed: 1,
        reps: Number(values.reps),
        workDir,
      },
      log,
    );
    sections.import = renderImport(report, machineLine(facts));
  }
  if (which === 'import-pg') {
    const table = await runImportPostgresBench(
      {
        ref: positionals[1] ?? null,
        reps: Number(values.reps),
        rows: Number(values['import-rows']),
        profile: values.profile,
        workDir,
      },
      log,
    );
    console.log(`${machineLine(facts)}\n\n${table}`);
  }
} finally {
  await cleanUp();
}

for (const text of Object.values(sections)) console.log(`${text}\n`);
if (!values['no-write'] && Object.keys(sections).length > 0) {
  const docPath = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
  writeSections(docPath, sections);
  log(`results written to ${docPath}`);
}

function machineLine(f: MachineFacts): string {
  return `Measured ${f.date} on ${f.cpu}, ${f.cores} cores, ${f.memoryGiB} GiB RAM, Node ${f.node}, ${f.anvil}; load average ${f.load.toFixed(1)} at the start (shared machine).`;
}

/** `target`: issue #2's 0.5 for the 200k chain, issue #5's 0.8 for the large one. */
function renderBackfill(r: BackfillReport, c: BenchChain, f: MachineFacts, target = 0.5): string {
  const n = r.reps[0]!.indexer.items;
  const lines = [
    machineLine(f),
    '',
    `Chain: ${int(n)} Transfer logs (${int(c.options.transfers)} sprayed among ${int(c.options.holders)} holders, ` +
      `${int(c.options.perBlock)} per block, plus the 4 demo tokens' mints), blocks 0–${c.head}. ` +
      `Both sides: ${r.options.chunk}-block \`eth_getLogs\` ranges (${int(c.options.perBlock * r.options.chunk)} logs), ` +
      `${r.options.concurrency} requests in flight. Median of ${r.reps.length} repetitions; each repetition runs ` +
      'the baseline, then the indexer, each in a fresh process.',
    '',
    '| | baseline: bare `eth_getLogs` | tokenquery indexer | ratio tokenquery / baseline |',
    '|---|---|---|---|',
    `| throughput (median) | ${int(r.baselineLogsPerSecond)} logs/s | ${int(r.indexerTransfersPerSecond)} transfers/s | **${fixed(r.ratio)}** (target ≥ ${target}) |`,
    ...r.reps.map(
      (rep, i) =>
        `| repetition ${i + 1} | ${int(rep.baseline.items)} logs in ${fixed(rep.baseline.seconds)} s | ` +
        `${int(rep.indexer.items)} transfers in ${fixed(rep.indexer.seconds)} s | ${fixed(rep.ratio)} |`,
    ),
    cpuRow(r),
    `| peak RSS (median) | ${mib(median(r.reps.map((x) => x.baseline.peakRssBytes)))} | ${mib(r.peakRssBytes)} | |`,
    `| SQLite file | | ${fixed(r.dbBytesPerTransfer, 0)} bytes per transfer (${mib(r.dbBytesPerTransfer * n)}) | |`,
  ];
  if (r.profile) {
    lines.push(
      '',
      'Indexer CPU profile (`node --cpu-prof`, one extra run), the indexer thread (fetching, decoding):',
      '',
      ...profileTables(r.profile.indexer, 15),
      '',
      "The same run, the SQLite writer thread (`applyBatch`); shares are of that thread's samples:",
      '',
      ...profileTables(r.profile.writer, 10),
    );
  }
  return lines.join('\n');
}

/**
 * CPU per item of each side, the client's own (every thread of its process) and the node's while
 * serving it. Steadier than throughput on a shared machine, and on two cores both sides are bound
 * by the sum: the last column is the throughput ratio that CPU alone would allow.
 */
function cpuRow(r: BackfillReport): string {
  const per = (seconds: number, items: number): number => (seconds * 1e6) / items;
  const client = (side: 'baseline' | 'indexer'): number =>
    median(r.reps.map((rep) => per(rep[side].cpuSeconds, rep[side].items)));
  const node = (side: 'baseline' | 'indexer'): number | null => {
    const spent = r.reps.map((rep) => rep.nodeCpuSeconds[side]);
    return spent.every((s) => s !== null)
      ? median(spent.map((s, i) => per(s, r.reps[i]![side].items)))
      : null;
  };
  const [baseline, indexer] = [client('baseline'), client('indexer')];
  const [baselineNode, indexerNode] = [node('baseline'), node('indexer')];
  if (baselineNode === null || indexerNode === null) {
    return `| CPU per item (median) | ${fixed(baseline)} µs per log | ${fixed(indexer)} µs per transfer | ${fixed(baseline / indexer)} |`;
  }
  return (
    `| CPU per item (median): client + node | ${fixed(baseline)} + ${fixed(baselineNode)} µs per log | ` +
    `${fixed(indexer)} + ${fixed(indexerNode)} µs per transfer | ` +
    `${fixed((baseline + baselineNode) / (indexer + indexerNode))} |`
  );
}

function profileTables(profile: ProfileSummary, top = 12): string[] {
  const row = (e: ProfileEntry) => `| \`${e.name}\` | ${pct(e.selfShare)} | ${pct(e.totalShare)} |`;
  return [
    '| top functions by self time | self | inclusive |',
    '|---|---|---|',
    ...profile.self.slice(0, top).map(row),
    '',
    '| top project functions by inclusive time | self | inclusive |',
    '|---|---|---|',
    ...profile.total.slice(0, top).map(row),
  ];
}

function renderApi(r: ApiReport, f: MachineFacts): string {
  const o = r.options;
  const profiles = r.cases.flatMap((c) =>
    c.profile
      ? [
          '',
          `tokenquery server CPU profile (\`node --cpu-prof\`, separate run), ${c.name}:`,
          '',
          ...profileTables(c.profile),
        ]
      : [],
  );
  return [
    machineLine(f),
    '',
    `wrk: ${o.connections} connections (one thread), ${o.warmupSeconds} s warm-up then ${o.durationSeconds} s measured per ` +
      `operation and server, in ${o.rounds} rounds in which tokenquery with its response cache, tokenquery without ` +
      "it and the baseline take turns; the baseline, a bare `node:http` server, answers each path with tokenquery's " +
      'own body for it (body: the mean over the paths). Ratio: median of the per-round ratios; p50 / p99: median of ' +
      'the per-round percentiles; server CPU: user + system time of the server process per request. Servers in child ' +
      'processes; wrk in its own; all share the same cores.',
    '',
    '| operation | body | tokenquery req/s | tokenquery p50 / p99 | tokenquery CPU/req | baseline req/s | baseline p50 / p99 | baseline CPU/req | ratio req/s |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.cases.map(
      (c) =>
        `| ${c.name} | ${int(c.bodyBytes)} B | ${int(c.tokenquery.requestsPerSecond)} | ` +
        `${latency(c.tokenquery.p50Ms)} / ${latency(c.tokenquery.p99Ms)} ms | ${fixed(c.tokenquery.cpuMicrosPerRequest, 0)} µs | ` +
        `${int(c.baseline.requestsPerSecond)} | ${latency(c.baseline.p50Ms)} / ${latency(c.baseline.p99Ms)} ms | ` +
        `${fixed(c.baseline.cpuMicrosPerRequest, 0)} µs | **${fixed(c.ratio)}** |`,
    ),
    '',
    `Errors: ${r.cases.map((c) => `${c.name}: ${c.tokenquery.errors + c.tokenquery.non2xx} (tokenquery), ${c.baseline.errors + c.baseline.non2xx} (baseline)`).join('; ')}.`,
    ...profiles,
  ].join('\n');
}

function renderNeo(r: NeoReport, f: MachineFacts): string {
  const d = r.decode;
  const w = r.window;
  const blocks = w.to - w.from + 1;
  return [
    machineLine(f),
    '',
    `Decoding (\`bench/neo-decode.ts\`, one thread, no I/O): JSON text of recorded mainnet answers to ` +
      'validated, decoded data: `JSON.parse`, validation, NEP-5 transfers, deployments, and UTXO transfer ' +
      'derivation with inputs from an in-memory output table.',
    '',
    '| corpus | rate | transactions/s | transfers/s |',
    '|---|---|---|---|',
    `| block 1444843 (${d.block.transactions} transactions, ${d.block.nep5Transfers} NEP-5 + ${d.block.assetTransfers} asset transfers) | ${int(d.block.perSecond)} blocks/s | ${int(d.block.transactionsPerSecond)} | ${int(d.block.transfersPerSecond)} |`,
    `| the ${d.logs.logs} recorded application logs alone (${d.logs.transfers} NEP-5 transfers) | ${int(d.logs.perSecond)} logs/s | | ${int(d.logs.transfersPerSecond)} |`,
    '',
    `Indexing: ${int(blocks)} busy blocks (copies of block 1444843 with renamed transactions, each spending the ` +
      `previous copy's outputs; ${int(w.transactions)} transactions) served by the fake NEO node in a process of its ` +
      'own. Baseline: the same verbose `getblock` batches (20 blocks) and `getapplicationlog` batches with plain ' +
      '`fetch` and `JSON.parse`, 6 batches in flight (as the indexer: 2 ranges × 3 batches). Indexer: as ' +
      `\`tokenquery index\` builds it (SQLite, writer thread), timed to the commit of the last block. Median of ${r.reps.length} repetitions.`,
    '',
    '| | baseline: bare fetch | tokenquery NEO indexer | ratio |',
    '|---|---|---|---|',
    `| throughput (median) | ${int(r.baselineBlocksPerSecond)} blocks/s | ${int(r.indexerBlocksPerSecond)} blocks/s, ${int(r.indexerTransfersPerSecond)} transfers/s | **${fixed(r.ratio)}** |`,
    ...r.reps.map(
      (rep, i) =>
        `| repetition ${i + 1} | ${fixed(rep.baseline.seconds)} s, ${int(rep.baseline.calls)} calls | ` +
        `${fixed(rep.indexer.seconds)} s, ${int(rep.indexer.calls)} calls, ${int(rep.indexer.transfers)} transfers | ${fixed(rep.ratio)} |`,
    ),
    `| CPU (median) | ${fixed(median(r.reps.map((x) => x.baseline.cpuSeconds)))} s | ${fixed(median(r.reps.map((x) => x.indexer.cpuSeconds)))} s (all threads) | |`,
    `| peak RSS (median) | ${mib(median(r.reps.map((x) => x.baseline.peakRssBytes)))} | ${mib(median(r.reps.map((x) => x.indexer.peakRssBytes)))} | |`,
    `| SQLite file | | ${fixed(r.dbBytesPerTransfer, 0)} bytes per transfer (outputs table included) | |`,
  ].join('\n');
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** Replaces each section between its markers, or appends it when the markers are missing. */
function writeSections(path: string, parts: Record<string, string>): void {
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  for (const [name, text] of Object.entries(parts)) {
    const begin = `<!-- bench:${name}:begin -->`;
    const end = `<!-- bench:${name}:end -->`;
    const block = `${begin}\n${text}\n${end}`;
    const from = doc.indexOf(begin);
    const to = doc.indexOf(end);
    doc =
      from !== -1 && to > from
        ? doc.slice(0, from) + block + doc.slice(to + end.length)
        : `${doc.trimEnd()}\n\n${block}\n`;
  }
  writeFileSync(path, doc);
}
