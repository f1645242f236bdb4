import type { ChainStatus, Store } from './types.js';

/**
 * The API's store when it has a read replica (`serve --db-read`): the chain data the API shows
 * (`reader`: status, tokens, transfers, balances; `neo`; `scans`) is read from `replica`, except
 * the node head and last error of the status list (below); every other part is the primary's. In particular API keys are read from the primary, because a
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
  // The node head and the indexer's last error are what the indexer last wrote, on the primary:
  // read there, so that a standby that stops replaying shows a growing lag (head − indexed) on
  // `/status` instead of looking current. Only the status list (`/status`, the dashboard: one
  // shared read every 250 ms) asks the primary; the per-request `getChainStatus` (confirmations)
  // stays the standby's, which understates confirmations while it lags, never overstates them.
  reader.listChainStatuses = async () => {
    const [onReplica, onPrimary] = await Promise.all([
      replica.reader.listChainStatuses(),
      // The standby alone still answers `/status` while the primary cannot be reached.
      primary.reader.listChainStatuses().catch((): ChainStatus[] => []),
    ]);
    const written = new Map(onPrimary.map((status) => [status.chain, status]));
    return onReplica.map((status) => {
      const latest = written.get(status.chain);
      if (latest === undefined) return status;
      return {
        ...status,
        head: Math.max(status.head, latest.head),
        lastError: latest.lastError,
        updatedAt: Math.max(status.updatedAt, latest.updatedAt),
      };
    });
  };
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
