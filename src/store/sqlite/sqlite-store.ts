/**
 * The SQLite store: opens the database file (pragmas, migrations) and wires its parts, each an
 * object of its own over the one connection: `writer` (writer.ts), `reader`, `scans` and `neo`
 * (reads.ts), `keys` (api-keys.ts). Every statement is prepared once, in statements.ts and
 * neo-tables.ts; the writer's balance cache lives in balances.ts.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { UserError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import type { Store } from '../types.js';
import { createApiKeys } from './api-keys.js';
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
  /** Database file; its parent directory is created when missing. `:memory:` works for throwaway stores. */
  path: string;
  logger: Logger;
  /** How long a statement waits for another process's write lock. Default 10 000 ms. */
  busyTimeoutMs?: number;
  /** Balances the writer keeps in memory (see `balanceCache` in balances.ts). Default 500,000 (~75 MiB). */
  balanceCacheSize?: number;
  /** SQLite's page cache of this connection, in KiB. Default 32 MiB (for the writer's balance pages). */
  cacheKiB?: number;
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
  let db: Database.Database;
  try {
    if (path !== ':memory:' && path !== '') mkdirSync(dirname(path), { recursive: true });
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
    // Checkpoint after 16 Ki pages (64 MiB) of WAL instead of SQLite's 1 000: indexing rewrites the
    // same balance pages batch after batch, and a bigger WAL copies each page back (and fsyncs)
    // once per checkpoint instead of once per batch (docs/benchmarks.md). The WAL file is
    // truncated back to this size after a checkpoint.
    db.pragma('wal_autocheckpoint = 16384');
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    migrate(db, logger);
    return createSqliteStore(db, options.balanceCacheSize ?? DEFAULT_BALANCE_CACHE_SIZE);
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Builds the store's parts over an open, migrated connection. */
function createSqliteStore(db: Database.Database, balanceCacheSize: number): SqliteStore {
  const sql = prepareStatements(db);
  const bulk = prepareBulkStatements(db);
  const hexRows = createHexRows(prepareHexStatements(db));
  const balances = createBalances(db, sql, bulk, hexRows, balanceCacheSize);
  const neoTables = createNeoTables(db);
  const reader = createReader(db, sql);
  const neo = createNeoReader(neoTables);
  const writer = createWriter({ db, sql, bulk, hexRows, balances, neo: neoTables }, reader, neo);
  return {
    kind: 'sqlite',
    writer,
    reader,
    scans: createScans(sql),
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
