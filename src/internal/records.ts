/**
 * The records that cross floors: chain code decodes them, the indexer batches them, the store keeps
 * them and the API shows them. They live on the bottom floor so that `chains/` and `store/` can both
 * speak them without either importing the other.
 *
 * Conventions: EVM addresses and hashes are `0x` + lower-case hex; amounts are `bigint` (uint256);
 * block numbers, indexes and Unix times are JS numbers (all far below 2^53).
 */

/** Token metadata read from the chain once, when the token is first seen. */
export interface TokenMetadata {
  address: string;
  /** `name()`; `""` when missing or reverting. */
  name: string;
  /** `symbol()`; `""` when missing or reverting. */
  symbol: string;
  /** `decimals()`; 0 when missing. */
  decimals: number;
}

/** One fungible transfer, as decoded from a log. */
export interface TransferRecord {
  token: string;
  blockNumber: number;
  logIndex: number;
  /** Position of the transaction in its block (Tokenview's `index`). */
  txIndex: number;
  txHash: string;
  from: string;
  to: string;
  value: bigint;
  /** Block timestamp, Unix seconds. */
  time: number;
}

/**
 * A balance change that no `Transfer` log records: WETH9's `Deposit`/`Withdrawal`, Tether's
 * `Issue`/`Redeem`/`DestroyedBlackFunds` (docs/reliability.md, "Exact balances"). It moves a
 * balance (and so holder counts and lists) but is not a transfer: no transfer list shows it and no
 * transfer count counts it.
 */
export interface BalanceChange {
  token: string;
  blockNumber: number;
  /** The log's index in its block (a change and a transfer never share one). */
  logIndex: number;
  holder: string;
  /** Signed and never 0: a credit (deposit, issue) is positive, a debit negative. */
  amount: bigint;
}

/** A block's identity, kept for the unfinalized window to detect reorgs by parent hash. */
export interface BlockRef {
  number: number;
  hash: string;
  parentHash: string;
}
