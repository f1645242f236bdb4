import { errorMessage } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { Store, StoreWriter, WriterRole } from '../store/types.js';
import { acquireWriterLease, electsWriters } from '../store/writer-lease.js';

export interface ElectedOptions {
  store: Store;
  chain: string;
  logger: Logger;
  /** Ends the whole run: waiting, writing, and the loop. */
  signal: AbortSignal;
  /** Told when this process becomes the chain's writer or a standby (backends that elect writers only). */
  onRole?: (chain: string, role: WriterRole) => void;
  /** How often a standby tries to take over; default 1000 ms. */
  pollIntervalMs?: number;
}

/**
 * Runs `work` while this process is the elected writer of the chain, and only then.
 *
 * `work` gets the lease's store (whose writes are fenced: they fail once another writer is
 * elected) and a signal that aborts when the run ends or the lease is lost. After a loss the
 * process goes back to standby and takes over again when it can: the chain's checkpoint in the
 * store is where any writer resumes, so nothing is lost or done twice. An error from `work` that
 * is not a lease loss (a fatal indexer error) releases the lease, so a standby may try, and
 * ends the run with that error. On a backend without election (SQLite), `work` runs at once.
 */
export async function runAsElectedWriter(
  options: ElectedOptions,
  work: (writer: StoreWriter, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const { store, chain, signal } = options;
  const logger = options.logger.child({ component: 'indexer', chain });
  const elects = electsWriters(store);
  while (!signal.aborted) {
    const lease = await acquireWriterLease(store, chain, {
      signal,
      ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
      onStandby: () => options.onRole?.(chain, 'standby'),
    });
    if (lease === null) return;
    if (elects) options.onRole?.(chain, 'writer');
    try {
      await work(lease.writer, AbortSignal.any([signal, lease.lost]));
    } catch (error) {
      if (!lease.lost.aborted) throw error;
      logger.debug({ err: errorMessage(error) }, 'indexer ended by the loss of the writer lease');
    } finally {
      await lease.release();
    }
    if (signal.aborted || !lease.lost.aborted) return;
    logger.warn('no longer the writer of this chain: standing by to take over again');
    options.onRole?.(chain, 'standby');
  }
}
