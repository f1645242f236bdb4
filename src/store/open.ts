import type { Logger } from '../internal/logger.js';
import type { Store } from './types.js';

export interface OpenStoreOptions {
  /** SQLite file path, or a `postgres://` URL (a later backend). */
  location: string;
  logger: Logger;
}

/** Opens (and migrates) the store named by `location`. The backend's driver is loaded only when used. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  if (/^postgres(ql)?:\/\//i.test(options.location)) {
    const { UserError } = await import('../internal/errors.js');
    throw new UserError('the PostgreSQL backend is not available yet; use a SQLite file path for --db');
  }
  const { openSqliteStore } = await import('./sqlite/sqlite-store.js');
  return openSqliteStore({ path: options.location, logger: options.logger });
}
