// The stores of the growth benchmark: a SYNTHETIC export (src/importer/testing/synthetic-export.ts)
// streamed into the real `tokenquery import - --sorted`, with token metadata from a fixture JSON-RPC
// node. The large store takes many minutes to import on a busy machine, so it is kept in the OS
// temporary directory under a name made of its parameters and reused by later runs.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startFixtureNode } from '../src/chains/evm/testing/fixture-node.js';
import {
  createSyntheticExport,
  type SyntheticExportOptions,
  type SyntheticSpotlight,
} from '../src/importer/testing/synthetic-export.js';
import { MIGRATIONS } from '../src/store/sqlite/migrations.js';

export const BIN = fileURLToPath(new URL('../../bin/tokenquery.js', import.meta.url));

/** Transfers per committed import batch: larger than the default 20,000, which imports faster (docs/benchmarks.md, Import). */
const IMPORT_BATCH = 100_000;

export interface StoreShape {
  transfers: number;
  holders: number;
  tokens: number;
  seed: number;
  /** The address benchmark's extremes (synthetic-export.ts); growth has none. */
  spotlight?: SyntheticSpotlight;
  /** synthetic-export.ts's defaults when absent (100 per block, uniform holders). */
  perBlock?: number;
  activity?: 'uniform' | 'chain';
}

/** The prefix of every cached store's directory in the OS temporary directory. */
const CACHE_PREFIX = 'tokenquery-bench-growth-';

/** What was learnt about a store when it was built (kept beside a cached store). */
export interface StoreFacts {
  transfers: number;
  /** Rows of `balances`: one per (token, holder) pair with a non-zero balance. */
  balanceRows: number;
  /** Bytes per table or index (SQLite's `dbstat`), largest first. */
  objects: { name: string; bytes: number }[];
  /** Seconds `tokenquery import` took. */
  importSeconds: number;
  /** When it was built (ISO). */
  builtAt: string;
  /**
   * Seconds `tokenquery verify` took over the whole store (no node), once, after the build; absent
   * in facts kept by a run before it was measured (growth.ts measures it then).
   */
  verifySeconds?: number;
}

export interface BuiltStore {
  /** A SQLite file, or a `postgres://` URL (growth-postgres.ts). */
  path: string;
  facts: StoreFacts;
  /** True when a cached store from an earlier run was used. */
  reused: boolean;
  /** Where a cached store's facts are kept (absent for a store made for one run). */
  factsPath?: string;
}

/** A child process environment without TOKENQUERY_* settings from the caller's shell. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('TOKENQUERY_')) env[name] = value;
  return env;
}

/** Main file plus WAL, as a store occupies the disk. */
export function storeBytes(path: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += statSync(path + suffix).size;
    } catch {
      // no WAL after a clean close
    }
  }
  return bytes;
}

/** The directory a store of this shape is cached in (schema version included: a new migration means a new store). */
export function cacheDirFor(shape: StoreShape): string {
  const { walletTokens = 0, busyTransfers = 0, tokenHolders = 0 } = shape.spotlight ?? {};
  const spotlight =
    walletTokens + busyTransfers + tokenHolders > 0
      ? `-w${walletTokens}-b${busyTransfers}-h${tokenHolders}`
      : '';
  const activity = shape.activity === 'chain' ? `-chain${shape.perBlock ?? 100}` : '';
  return join(
    tmpdir(),
    `${CACHE_PREFIX}${shape.transfers}-${shape.holders}-${shape.tokens}-s${shape.seed}${spotlight}${activity}-v${MIGRATIONS.length}`,
  );
}

/** Every cached store (growth, address-ops), with its size: `npm run bench -- clean` removes them. */
export function cachedStores(): { dir: string; bytes: number }[] {
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith(CACHE_PREFIX))
    .map((name) => {
      const dir = join(tmpdir(), name);
      const bytes = readdirSync(dir).reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
      return { dir, bytes };
    });
}

/**
 * Bytes a store of `transfers` may take while it is imported: the file at up to 550 bytes a
 * transfer (414–522 measured on chain-shaped exports, docs/benchmarks.md), and on top the build's
 * largest transaction, now one chunk of at most an eighth of the load or 1M rows (bulk-build.ts):
 * at 2M a 1M-row chunk peaked at 387 MB of WAL and 138 MB of sort files, about 65 bytes a
 * transfer of its chunk at 100M (12.5M rows: about 5 GB of WAL and 2 GB of sort files). Measured
 * at 2M: 715 bytes a transfer at the peak, file, WAL and SQLite's temporary files together
 * (docs/benchmarks.md, "the build in steps").
 */
export function importDiskBytes(transfers: number): number {
  return transfers * 550 + Math.max(transfers * 90, 600e6);
}

/** A store that would not fit on the disk: the message is the one line the benchmark prints. */
export class DiskSpaceError extends Error {}

/**
 * Refuses, in one line, a store that would not fit on the temporary directory's disk with 10 GB
 * to spare (the machine must stay usable).
 */
export function checkDiskFor(transfers: number): void {
  const { bavail, bsize } = statfsSync(tmpdir());
  const free = bavail * bsize;
  const needed = importDiskBytes(transfers) + 10e9;
  if (free < needed) {
    throw new DiskSpaceError(
      `a ${transfers.toLocaleString('en-US')}-transfer store needs about ${(needed / 1e9).toFixed(0)} GB free in ${tmpdir()} ` +
        `(10 GB of it spare); ${(free / 1e9).toFixed(0)} GB are: free some (\`npm run bench -- clean\` removes the cached stores) or choose fewer --growth-rows`,
    );
  }
}

/** The cached store of this shape, built first when missing (or left half-built by an interrupted run). */
export async function cachedStore(shape: StoreShape, log: (line: string) => void): Promise<BuiltStore> {
  const dir = cacheDirFor(shape);
  const path = join(dir, 'store.sqlite');
  const factsPath = join(dir, 'facts.json');
  if (existsSync(path) && existsSync(factsPath)) {
    const facts = JSON.parse(readFileSync(factsPath, 'utf8')) as StoreFacts;
    if (facts.transfers === shape.transfers) return { path, facts, reused: true, factsPath };
  }
  rmSync(dir, { recursive: true, force: true });
  checkDiskFor(shape.transfers);
  mkdirSync(dir, { recursive: true });
  const partial = join(dir, 'building.sqlite');
  try {
    const facts = await buildStore(partial, shape, log);
    renameSync(partial, path);
    writeFileSync(factsPath, `${JSON.stringify(facts, null, 2)}\n`);
    return { path, facts, reused: false, factsPath };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** What a store holds, once imported (`importSeconds` and `builtAt` are added by `buildStore`). */
export type ReadFacts = (location: string) => Promise<Omit<StoreFacts, 'importSeconds' | 'builtAt'>>;

/** A SQLite store's facts: rows, and bytes per table and index from `dbstat`. */
async function sqliteFacts(path: string): Promise<Omit<StoreFacts, 'importSeconds' | 'builtAt'>> {
  // Read-write, so that closing it removes the WAL again (a read-only connection leaves one behind).
  const db = new Database(path);
  try {
    const objects = db
      .prepare<[], { name: string; bytes: number }>(
        'SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC',
      )
      .all();
    const balanceRows = db.prepare<[], number>('SELECT count(*) FROM balances').pluck().get()!;
    const transfers = db
      .prepare<[], number>("SELECT transfer_count FROM chains WHERE chain = 'eth'")
      .pluck()
      .get()!;
    return { transfers, balanceRows, objects };
  } finally {
    db.close();
  }
}

/** Imports the synthetic export of `shape` into a new store at `path` (a SQLite file, or an empty PostgreSQL database with `readFacts` from growth-postgres.ts). */
export async function buildStore(
  path: string,
  shape: StoreShape,
  log: (line: string) => void,
  readFacts: ReadFacts = sqliteFacts,
): Promise<StoreFacts> {
  const options: SyntheticExportOptions = { ...shape, order: 'sorted' };
  const generated = createSyntheticExport(options);
  // The node answers token metadata only (the export has times and positions); its head lies past
  // the export, as for any real export.
  const node = await startFixtureNode({ ...generated.node(), head: generated.lastBlock + 1_000 });
  const started = performance.now();
  try {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'import',
        '-',
        '--sorted',
        '--db',
        path,
        '--rpc',
        `eth=${node.url}`,
        '--batch-transfers',
        String(IMPORT_BATCH),
        '--log-level',
        'info',
      ],
      { env: cleanEnv(), cwd: tmpdir(), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let stdout = '';
    let stderrTail = '';
    let lastLog = performance.now();
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4_000);
      if (performance.now() - lastLog > 60_000) {
        lastLog = performance.now();
        const line = stderrTail.trimEnd().split('\n').pop() ?? '';
        const rows = /"rows":(\d+)/.exec(line)?.[1];
        if (rows !== undefined)
          log(
            `growth: importing, ${Number(rows).toLocaleString('en-US')} of ${shape.transfers.toLocaleString('en-US')} rows`,
          );
      }
    });
    // The export goes straight to the importer's standard input: no file of gigabytes on disk.
    await pipeline(Readable.from(generated.chunks()), child.stdin).catch(() => {
      // the importer stopped reading; its exit code and stderr say why
    });
    const code = await exited;
    if (code !== 0) throw new Error(`tokenquery import exited with ${code}: ${stderrTail}`);
    const imported = /imported ([\d,]+) transfers/.exec(stdout)?.[1];
    if (imported === undefined || Number(imported.replaceAll(',', '')) !== shape.transfers) {
      throw new Error(`tokenquery import did not store ${shape.transfers} transfers: ${stdout}`);
    }
  } finally {
    await node.close();
  }
  const importSeconds = (performance.now() - started) / 1000;
  return { ...(await readFacts(path)), importSeconds, builtAt: new Date().toISOString() };
}

/**
 * Times `tokenquery verify` over the whole store at `location` (a SQLite file or a `postgres://`
 * URL), without a node: every token's transfers summed again and compared with its counts,
 * balances, holder order and address views. A difference fails the benchmark: a store that does not
 * verify has no figures worth keeping. A cached store's facts keep the time (`factsPath`).
 */
export async function verifyStore(store: BuiltStore, log: (line: string) => void): Promise<number> {
  if (store.facts.verifySeconds !== undefined) return store.facts.verifySeconds;
  log(`growth: verifying the ${store.facts.transfers.toLocaleString('en-US')}-transfer store`);
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'verify', '--db', store.path, '--log-level', 'warn'], {
    env: cleanEnv(),
    cwd: tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`tokenquery verify exited with ${code}: ${output}`);
  const verifySeconds = (performance.now() - started) / 1000;
  store.facts.verifySeconds = verifySeconds;
  if (store.factsPath !== undefined)
    writeFileSync(store.factsPath, `${JSON.stringify(store.facts, null, 2)}\n`);
  return verifySeconds;
}
