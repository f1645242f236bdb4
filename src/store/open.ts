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
}

/** Opens (and migrates) the store named by `location`. The backend's driver is loaded only when used. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  if (/^postgres(ql)?:\/\//i.test(options.location)) {
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore({ url: options.location, logger: options.logger });
  }
  if (options.writerThread === true) {
    const { openSqliteStoreWithWriterThread } = await import('./sqlite/writer-thread.js');
    return openSqliteStoreWithWriterThread({ path: options.location, logger: options.logger });
  }
  const { openSqliteStore } = await import('./sqlite/sqlite-store.js');
  return openSqliteStore({
    path: options.location,
    logger: options.logger,
    ...(options.sqliteCacheKiB === undefined ? {} : { cacheKiB: options.sqliteCacheKiB }),
  });
}
