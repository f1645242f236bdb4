/**
 * What the EVM backfill and the EVM head-following share: where the indexer stands, the range
 * each builds and hands to the one commit, and the errors a step retries.
 */

import type { BalanceEvent, EvmBlockHeader } from '../chains/evm/types.js';
import { errorMessage, FatalIndexerError, TokenqueryError } from '../internal/errors.js';
import type { BalanceChange, BatchSeeds, TokenMetadata, TransferRecord } from '../store/types.js';

/** Where the indexer stands on the chain; moved by commits and rollbacks. */
export interface EvmPosition {
  /** Next block to index. */
  next: number;
  /** Hash of `next - 1` when known: the parent the next block must name. */
  tipHash: string | null;
  /** The store holds a checkpoint of this chain. */
  hasCheckpoint: boolean;
}

/** A range fetched and decoded, ready to commit. */
export interface FetchedRange {
  from: number;
  to: number;
  transfers: TransferRecord[];
  /** Balance changes without a `Transfer` log (balance-events.ts). */
  changes: BalanceChange[];
  tokens: TokenMetadata[];
  /** Starting balances of holders first seen in the range, on a seeded chain. */
  seeds: BatchSeeds | undefined;
  logCount: number;
  /** Hash of block `to` (backfill: read beside the logs), recorded with the checkpoint. */
  toHash: string | null;
  /** Parent hash of block `from`: the range must continue the one before it. */
  fromParentHash: string | null;
}

/** Commits `range` with its checkpoint and moves the cursor past it. */
export type EvmCommit = (
  range: FetchedRange,
  extra: { toBlockHash: string | null; blocks: EvmBlockHeader[]; deferBalances?: boolean },
) => Promise<void>;

/**
 * What a range's transfers and balance events add up to: the balance changes the events make
 * (balance-events.ts), the metadata of the tokens either names that the store does not know yet,
 * and the seeds of their new holders.
 */
export type EvmTokensAndSeeds = (
  transfers: TransferRecord[],
  events: readonly BalanceEvent[],
) => Promise<{ changes: BalanceChange[]; tokens: TokenMetadata[]; seeds: BatchSeeds | undefined }>;

/** Raised when the node's answers contradict each other mid-step (a reorg in progress); the step is retried. */
export class InconsistentChainError extends TokenqueryError {
  override name = 'InconsistentChainError';
}

/** Times in a row one block may be refused alone before the chain stops (see `Refusals.refusedAlone`). */
const ALONE_REFUSALS_BEFORE_STOP = 5;

/**
 * The block last refused even alone, and how many times in a row. A refusal can be transient (a
 * busy provider answers "too many results" now and then), so it stops the chain only when it
 * persists over {@link ALONE_REFUSALS_BEFORE_STOP} attempts, each after the step's backoff.
 */
export interface Refusals {
  /** The error for a block whose logs the node refuses even alone: fatal once it persists. */
  refusedAlone(block: number, cause: unknown): TokenqueryError;
  /** Blocks up to `to` are committed: a refusal below is over. */
  committed(to: number): void;
}

export function createRefusals(): Refusals {
  let refused = { block: -1, times: 0 };
  return {
    refusedAlone(block, cause) {
      refused = { block, times: refused.block === block ? refused.times + 1 : 1 };
      const what = `the node refuses to return the Transfer logs of block ${block} even alone (${errorMessage(cause)})`;
      if (refused.times >= ALONE_REFUSALS_BEFORE_STOP)
        return new FatalIndexerError(`${what}; use a node without a result limit`);
      return new TokenqueryError(`${what}; retrying`);
    },
    committed(to) {
      if (to >= refused.block) refused = { block: -1, times: 0 };
    },
  };
}
