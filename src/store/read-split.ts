import type { Store } from './types.js';

/**
 * The API's store when it has a read replica (`serve --db-read`): the chain data the API shows
 * (`reader`: status, tokens, transfers, balances; `neo`; `scans`) is read from `replica`; every
 * other part is the primary's. In particular API keys are read from the primary, because a
 * replica may lag (by seconds, or much longer when replication stalls) and a revoked key must be
 * refused within one second on every replica; a key lookup is one indexed row, and the API caches
 * it for 500 ms, so the primary sees at most about two lookups per second per key and replica.
 * Writes (which the API never makes) go to the primary too. `close` closes both.
 */
export function splitReads(primary: Store, replica: Store): Store {
  const reader = { ...replica.reader };
  // The dashboard's size figure is the primary's: the database the operator runs out of room on.
  if (primary.reader.storageBytes !== undefined) {
    reader.storageBytes = primary.reader.storageBytes;
  } else {
    delete reader.storageBytes;
  }
  return {
    ...primary,
    reader,
    neo: replica.neo,
    scans: replica.scans,
    async close() {
      await Promise.all([primary.close(), replica.close()]);
    },
  };
}
