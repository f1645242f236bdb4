import { resolve } from 'node:path';
import { redactUrls } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { Store } from './types.js';

export interface OpenStoreOptions {
  /** SQLite file path, or a `postgres://` (`postgresql://`) connection string. */
  location: string;
  logger: Logger;
  /**
   * For the indexer: run writes on a thread of their own (SQLite), so that the caller's thread
   * keeps decoding while a batch commits. Backends whose driver is asynchronous ignore it.
   * Default false.
   */
  writerThread?: boolean;
  /** SQLite without the writer thread: the connection's page cache in KiB (default 32 MiB). */
  sqliteCacheKiB?: number;
  /**
   * Refuse (UserError, one line) a store that does not exist (a missing SQLite file, a PostgreSQL
   * schema without tokenquery's tables) instead of creating it: for `serve`, which never writes
   * chain data and would otherwise serve an empty store from a mistyped `--db`. Default false.
   */
  mustExist?: boolean;
  /** Called when this open created the store (a new SQLite file, or tokenquery's tables). */
  onCreate?: () => void;
}

const isPostgres = (location: string): boolean => /^postgres(ql)?:\/\//i.test(location);

/** The store's location for messages: an absolute SQLite path, or the PostgreSQL URL without credentials. */
export function describeStoreLocation(location: string): string {
  if (isPostgres(location)) return redactUrls(location);
  return location === ':memory:' || location === '' ? location : resolve(location);
}

/** Opens (and migrates) the store named by `location`. The backend's driver is loaded only when used. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const opening = {
    logger: options.logger,
    ...(options.mustExist === undefined ? {} : { mustExist: options.mustExist }),
    ...(options.onCreate === undefined ? {} : { onCreate: options.onCreate }),
  };
  if (isPostgres(options.location)) {
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore({ url: options.location, ...opening });
  }
  if (options.writerThread === true) {
    const { openSqliteStoreWithWriterThread } = await import('./sqlite/writer-thread.js');
    return openSqliteStoreWithWriterThread({ path: options.location, ...opening });
  }
  const { openSqliteStore } = await import('./sqlite/sqlite-store.js');
  return openSqliteStore({
    path: options.location,
    ...opening,
    ...(options.sqliteCacheKiB === undefined ? {} : { cacheKiB: options.sqliteCacheKiB }),
  });
}
