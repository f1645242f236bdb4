/**
 * Writer election, as the indexer sees it: one call that waits until this process may write a
 * chain, whatever the backend. PostgreSQL elects one writer per chain among any number of
 * processes (postgres/writer-election.ts); SQLite has no election and is written by one indexing
 * process per file, so its "lease" is the store's own writer, never lost.
 */
import { TokenqueryError } from '../internal/errors.js';
import type { Store, WriterLease, WriterLeaseOptions } from './types.js';

/**
 * A write through a {@link WriterLease} that is no longer the newest election of its chain, or
 * that was released or lost. Nothing of the write was committed.
 */
export class WriterLeaseLostError extends TokenqueryError {
  override name = 'WriterLeaseLostError';
}

/** A lease that cannot be lost, for backends without election. */
function unelectedLease(store: Store, chain: string): WriterLease {
  return {
    chain,
    epoch: 0,
    writer: store.writer,
    lost: new AbortController().signal,
    async release() {},
  };
}

/**
 * Resolves with this process's lease on `chain` once it is the elected writer (at once on a
 * backend without election), or null when `options.signal` aborts while it waits as a standby.
 */
export async function acquireWriterLease(
  store: Store,
  chain: string,
  options: WriterLeaseOptions,
): Promise<WriterLease | null> {
  if (store.acquireWriterLease === undefined) {
    return options.signal.aborted ? null : unelectedLease(store, chain);
  }
  return store.acquireWriterLease(chain, options);
}

/** Whether `store` elects writers (several indexing processes may share it). */
export function electsWriters(store: Store): boolean {
  return store.acquireWriterLease !== undefined;
}
