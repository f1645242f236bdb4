/**
 * What one commit of indexing carries ({@link IndexBatch}, `StoreWriter.applyBatch`) and the
 * starting balances of a late start ({@link BatchSeeds}); re-exported by `types.ts`.
 */
import type { BalanceChange, BlockRef, TokenMetadata, TransferRecord } from '../internal/records.js';
import type { NeoBatchPart } from './neo-types.js';

/**
 * One atomic unit of indexing: everything in it, the checkpoint included, commits in one
 * transaction, so a crash at any moment leaves either all of it or none of it.
 */
export interface IndexBatch {
  chain: string;
  /** First block this batch covers (inclusive); must be `checkpoint.block + 1` of the stored checkpoint, or the chain's start block when there is none. */
  fromBlock: number;
  /**
   * The checkpoint this batch continues: `fromBlock - 1`, or null for the first batch of a chain
   * (the store holds no checkpoint yet). When given, the store refuses the batch unless its
   * checkpoint is exactly this, so a batch sent behind one that failed (pipelined commits) can
   * never commit over the gap, even while the chain has no checkpoint to compare `fromBlock`
   * with. Every indexer and the importer set it; absent, only `fromBlock` is checked.
   */
  continues?: number | null;
  /**
   * Last block this batch covers (inclusive); becomes the new checkpoint. Or `fromBlock - 1`, the
   * checkpoint it must name in `continues`: a batch that adds no block carries only balance changes
   * at that block (reconcile's corrections), which a rollback below the block takes off.
   */
  toBlock: number;
  /** Hash of `toBlock` when known. */
  toBlockHash: string | null;
  /** Transfers in the range, in chain order (block, then log index, ascending). */
  transfers: TransferRecord[];
  /**
   * EVM: balance changes without a `Transfer` log, in chain order. Stored and rolled back like
   * transfers and applied to balances and holder counts, but never counted or listed as transfers.
   * A token they name is a token of the index (metadata in `tokens`) from its first one.
   */
  balanceChanges?: BalanceChange[];
  /** Metadata of every token the batch names that may be new. Known tokens are left unchanged. */
  tokens: TokenMetadata[];
  /** Block refs inside the unfinalized window covered by this batch (any order). */
  blocks: BlockRef[];
  /** Newest head seen on the node, for `/status` and confirmations. */
  head: number;
  /** Block refs older than this are pruned (the bottom of the unfinalized window). */
  pruneBlocksBelow: number;
  /** NEO only: what a NEO range adds beside its NEP-5 `transfers`, committed in the same transaction. */
  neo?: NeoBatchPart;
  /** EVM chains indexed from a late start block: the starting balances of holders seen first in this batch. */
  seeds?: BatchSeeds;
  /**
   * A backfill batch with more to follow: the store may keep the balance rows it changes in memory
   * and write them with a later batch (each holder once for many batches), as long as holder
   * counts and everything else commit with the batch as always. Until then `getBalance` and
   * `scanBalances` answer as of `ChainStatus.balancesBlock`; after a crash the store replays the
   * stored transfers above that block before its next write. A store is free to ignore it.
   */
  deferBalances?: boolean;
  /**
   * A batch of a bulk load (`tokenquery import`) with more to follow: implies `deferBalances`, and
   * lets a store that holds no transfers of the chain yet keep the transfers aside in the order
   * they come and build everything else (the transfers in key order, balances, holder counts,
   * address entries and indexes) after the load, sorted, with the first batch that comes without
   * the flag. Until then the chain's checkpoint moves on while its transfers, balances and address
   * views stay as of `ChainStatus.balancesBlock`; an interrupted load resumes from the checkpoint.
   * A store is free to ignore it (both stores take it: store/sqlite/bulk-load.ts,
   * store/postgres/bulk-load.ts).
   */
  bulkLoad?: boolean;
}

/**
 * Starting balances for a chain whose index starts after its tokens' first transfers (a late
 * `--from-block`): each holder of a token that already existed is seeded, once, with its
 * `balanceOf` at the block before the start, so its balance and the token's holder count are
 * exact from then on. Seeds describe the state before the index, so a rollback never undoes them.
 */
export interface BatchSeeds {
  /**
   * The block the balances were read at: the chain's start block − 1. The first batch of the
   * chain records it; every later batch with seeds must name the same block.
   */
  block: number;
  /**
   * `balanceOf(holder)` at `block` (0n for a holder without a balance or a call that reverts),
   * for holders named by this batch's transfers; never the zero address. A (token, holder) pair
   * already seeded is ignored, so a seed read twice never counts twice. A new pair's amount is
   * added to the holder's balance before the batch's transfers.
   */
  balances: SeedBalance[];
  /**
   * The node could not answer the state at `block`: holders are no longer seeded, and the chain's
   * holder counts and balances are marked partial for good (`ChainStatus.holdersPartial`).
   */
  partial: boolean;
}

/** One starting balance (see {@link BatchSeeds}). */
export interface SeedBalance {
  token: string;
  holder: string;
  amount: bigint;
}
