/**
 * A chain's activity as the dashboard and `/metrics` show it (`Store.getChainActivity`): the
 * transfer count, and the newest transfers. Both backends keep
 * them in the chain's row, written by the batch's own transaction, so they hold for every
 * process that reads the store (`serve` beside an `index` process included).
 * This file is the one encoding of the newest transfers, shared by both backends.
 */
import { TokenqueryError } from '../internal/errors.js';
import type { IndexBatch, TransferRecord } from './types.js';

/** How many of a batch's newest transfers are kept. */
export const RECENT_TRANSFERS_KEPT = 16;

/** Transfers a batch adds to the chain's count: NEP-5/ERC-20 transfers and NEO asset transfers. */
export function batchTransferCount(batch: IndexBatch): number {
  return batch.transfers.length + (batch.neo?.assetTransfers.length ?? 0);
}

/** Newest first: block, then log index, descending (transaction position breaks NEO ties). */
function newestFirst(a: TransferRecord, b: TransferRecord): number {
  return b.blockNumber - a.blockNumber || b.logIndex - a.logIndex || b.txIndex - a.txIndex;
}

/**
 * Whether {@link encodeRecentTransfers} needs the stored list: only when the batch has fewer
 * transfers than are kept (a backfill batch has thousands, and then no read is needed).
 */
export function needsStoredRecent(batch: IndexBatch): boolean {
  const count = batchTransferCount(batch);
  return count > 0 && count < RECENT_TRANSFERS_KEPT;
}

/**
 * The text to store as the chain's newest transfers after `batch`: its own newest, topped up
 * with the newest stored before it (`stored`, needed only when {@link needsStoredRecent}); null
 * when the batch has no transfers (the stored list then stays). A compact JSON array of
 * arrays; amounts as decimal strings.
 */
export function encodeRecentTransfers(batch: IndexBatch, stored: string | null): string | null {
  if (batchTransferCount(batch) === 0) return null;
  // Batches are in chain order, so the newest are at the end of each list: look at the tails only.
  const tail = (list: readonly TransferRecord[]) => list.slice(-RECENT_TRANSFERS_KEPT);
  const own = [...tail(batch.transfers), ...tail(batch.neo?.assetTransfers ?? [])];
  const earlier = needsStoredRecent(batch) ? decodeRecentTransfers(stored) : [];
  const newest = [...own, ...earlier].sort(newestFirst).slice(0, RECENT_TRANSFERS_KEPT);
  return JSON.stringify(
    newest.map((t) => [
      t.token,
      t.blockNumber,
      t.logIndex,
      t.txIndex,
      t.txHash,
      t.from,
      t.to,
      t.value.toString(),
      t.time,
    ]),
  );
}

/** The stored newest transfers (null: none). Written only by `encodeRecentTransfers`, so a mismatch is a fault. */
export function decodeRecentTransfers(text: string | null): TransferRecord[] {
  if (text === null || text === '') return [];
  const rows = JSON.parse(text) as unknown;
  if (!Array.isArray(rows)) throw new TokenqueryError('stored recent transfers are not a list');
  return rows.map((row: unknown) => {
    if (!Array.isArray(row) || row.length !== 9) {
      throw new TokenqueryError('a stored recent transfer is malformed');
    }
    const [token, blockNumber, logIndex, txIndex, txHash, from, to, value, time] = row as [
      string,
      number,
      number,
      number,
      string,
      string,
      string,
      string,
      number,
    ];
    return { token, blockNumber, logIndex, txIndex, txHash, from, to, value: BigInt(value), time };
  });
}
