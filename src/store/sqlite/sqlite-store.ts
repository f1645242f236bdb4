/**
 * The SQLite store: opens the database file (pragmas, migrations) and wires its parts, each an
 * object of its own over the one connection: `writer` (writer.ts), `reader`, `scans` and `neo`
 * (reads.ts), `keys` (api-keys.ts). Every statement is prepared once, in statements.ts and
 * neo-tables.ts; the writer's balance cache lives in balances.ts.
 */
import { chmodSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { UserError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import { MissingStoreError } from '../missing-store.js';
import type { Store } from '../types.js';
import { createAddressEntries } from './address-transfers.js';
import { createApiKeys } from './api-keys.js';
import { createBalanceChangeTable } from './balance-changes.js';
import { createBalances } from './balances.js';
import { createHexRows } from './hex-rows.js';
import { migrate } from './migrations.js';
import { createNeoTables } from './neo-tables.js';
import { createNeoReader, createReader, createScans } from './reads.js';
import { prepareBulkStatements, prepareHexStatements, prepareStatements } from './statements.js';
import { createWriter, type SqliteWriter } from './writer.js';

export { DATA_VERSION_CHECK_MS } from './reads.js';
export type { SqliteWriter } from './writer.js';

export interface SqliteStoreOptions {
  /**
   * Database file; its parent directory is created when missing (mode 0700, the file 0600).
   * `:memory:` works for throwaway stores.
   */
  path: string;
  logger: Logger;
  /** How long a statement waits for another process's write lock. Default 10 000 ms. */
  busyTimeoutMs?: number;
  /** Balances the writer keeps in memory (see `balanceCache` in balances.ts). Default 500,000 (~75 MiB). */
  balanceCacheSize?: number;
  /** SQLite's page cache of this connection, in KiB. Default 32 MiB (for the writer's balance pages). */
  cacheKiB?: number;
  /** Refuse (UserError) a database file that does not exist instead of creating it. Default false. */
  mustExist?: boolean;
  /** Called when this open created the database file. */
  onCreate?: () => void;
}

/** The SQLite store. */
export interface SqliteStore extends Store {
  readonly writer: SqliteWriter;
}

/** Default bound of the indexer's balance cache: about 150 bytes each, so ~75 MiB at most. */
const DEFAULT_BALANCE_CACHE_SIZE = 500_000;

/** Opens (creating and migrating when needed) a SQLite store. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const { path, logger } = options;
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  const onDisk = path !== ':memory:' && path !== '';
  if (onDisk && options.mustExist === true && !existsSync(path)) throw new MissingStoreError(resolve(path));
  let db: Database.Database;
  let created = false;
  try {
    if (onDisk) created = createPrivateFile(path);
    if (onDisk && !created) warnIfReadable(path, logger);
    db = new Database(path, { timeout: busyTimeoutMs });
  } catch (error) {
    throw new UserError(`cannot open the SQLite database ${path}`, {
      cause: error,
      details: error instanceof Error ? error.message : String(error),
    });
  }
  try {
    // Several processes (index, serve, keys) share one file: readers never block the writer in
    // WAL mode, and a second writer waits up to busy_timeout instead of failing at once.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL syncs at checkpoints only: a committed transaction survives a crash of
    // the process (it is in the WAL file), and only an OS crash or power loss can lose the last
    // few commits, never consistency. The indexer then simply re-indexes from its checkpoint.
    db.pragma('synchronous = NORMAL');
    db.pragma(`cache_size = -${Math.max(64, Math.floor(options.cacheKiB ?? 32 * 1024))}`);
    db.pragma('temp_store = MEMORY');
    // SQLite reads SQLITE_TMPDIR once, when the library starts (maybe before it was set, and a
    // worker thread has its own copy of the environment): set here, it holds for this process's
    // temporary files from now on (a bulk load's sorts spill there: bulk-build.ts).
    const tempDir = process.env.SQLITE_TMPDIR;
    if (tempDir !== undefined && tempDir !== '') {
      db.pragma(`temp_store_directory = '${tempDir.replaceAll("'", "''")}'`);
    }
    // Checkpoint after 16 Ki pages (64 MiB) of WAL instead of SQLite's 1 000: indexing rewrites the
    // same balance pages batch after batch, and a bigger WAL copies each page back (and fsyncs)
    // once per checkpoint instead of once per batch (docs/benchmarks.md). The WAL file is
    // truncated back to this size after a checkpoint.
    db.pragma('wal_autocheckpoint = 16384');
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    migrate(db, logger);
    const store = createSqliteStore(
      db,
      options.balanceCacheSize ?? DEFAULT_BALANCE_CACHE_SIZE,
      options.logger,
    );
    if (created) options.onCreate?.();
    return store;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Creates the database file (and its missing folders) readable by its owner only, whatever the
 * umask: it holds API key hashes, labels and allow-lists. SQLite then gives the -wal and -shm
 * files the database file's permissions. Returns false when the file exists already (the user's
 * own, or created by another process meanwhile), whose mode is left alone.
 */
function createPrivateFile(path: string): boolean {
  const firstCreated = mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // `mode` is filtered by the umask: set the folders tokenquery created exactly.
  if (firstCreated !== undefined) {
    const first = resolve(firstCreated);
    for (let dir = resolve(dirname(path)); dir.startsWith(first); dir = dirname(dir)) {
      chmodSync(dir, 0o700);
      if (dir === first) break;
    }
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Paths already warned about by this process (a process may open one store several times). */
const warnedReadable = new Set<string>();

/**
 * An existing database that other users can read or write is the user's choice and keeps its
 * mode, but is worth one warning per process (the main thread's: `start`'s indexer thread
 * opens the same file).
 */
function warnIfReadable(path: string, logger: Logger): void {
  if (process.platform === 'win32' || !isMainThread || warnedReadable.has(path)) return;
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // opening it reports the problem
  }
  if ((mode & 0o044) === 0) return;
  warnedReadable.add(path);
  logger.warn(
    { path, mode: `0${mode.toString(8)}` },
    `the SQLite database ${path} is readable by other users (it holds API key hashes, labels and allow-lists): chmod 600 it and its -wal and -shm files`,
  );
}

/** Builds the store's parts over an open, migrated connection. */
function createSqliteStore(db: Database.Database, balanceCacheSize: number, logger: Logger): SqliteStore {
  const sql = prepareStatements(db);
  const bulk = prepareBulkStatements(db);
  const hexRows = createHexRows(prepareHexStatements(db));
  const addresses = createAddressEntries(db);
  // A failed transaction, a rollback or another connection's write drops the address ids too.
  const changes = createBalanceChangeTable(db);
  const balances = createBalances(
    db,
    sql,
    bulk,
    hexRows,
    addresses,
    balanceCacheSize,
    () => addresses.clear(),
    changes,
  );
  const neoTables = createNeoTables(db);
  const reader = createReader(db, sql);
  const neo = createNeoReader(neoTables);
  const scans = { ...createScans(sql), scanBalanceChanges: changes.scan };
  const writer = createWriter(
    { db, sql, bulk, hexRows, balances, neo: neoTables, addresses, changes, logger },
    reader,
    scans,
    neo,
  );
  return {
    kind: 'sqlite',
    writer,
    reader,
    scans,
    neo,
    keys: createApiKeys(sql),
    async close(): Promise<void> {
      if (!db.open) return;
      try {
        balances.close();
      } finally {
        db.close();
      }
    },
  };
}
