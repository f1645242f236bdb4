import type { TokenMetadata } from '../../internal/records.js';
import type { ScannedTransfers } from './log-scanner.js';

/** A log as returned by `eth_getLogs`, validated and with quantities parsed. */
export interface EvmLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
  /** Unix seconds, when the node includes `blockTimestamp` in logs (newer geth, anvil, reth). */
  blockTimestamp?: number;
}

/** The events that move balances without a `Transfer` log (see `BALANCE_EVENT_TOPICS` in abi.ts). */
export type BalanceEventKind = 'deposit' | 'withdrawal' | 'issue' | 'redeem' | 'destroyedBlackFunds';

/**
 * A balance event as decoded from its log: what it says, before the indexer decides whether it
 * applies (docs/reliability.md, "Exact balances") and turns it into a `BalanceChange`.
 */
export interface BalanceEvent {
  kind: BalanceEventKind;
  /** The contract that emitted it. */
  token: string;
  blockNumber: number;
  logIndex: number;
  txHash: string;
  /** `dst`/`src`/the blacklisted address; null for `issue`/`redeem` (the contract's `owner()`). */
  holder: string | null;
  /** The amount the event names (unsigned; the kind says credit or debit). */
  amount: bigint;
}

/** A block header as the indexer needs it. */
export interface EvmBlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Unix seconds. */
  timestamp: number;
}

/** Supplies read from the node for one token (raw units). */
export interface TokenSupply {
  address: string;
  /** `totalSupply()`, or null when it cannot be read. */
  totalSupply: bigint | null;
  /** `cap()`, or null when the token has none. */
  cap: bigint | null;
  /** `balanceOf(0x0) + balanceOf(0x…dead)`; calls that fail count as 0. */
  burnedBalance: bigint | null;
}

/** Block tag for reads: a block number, or `latest`. */
export type BlockTag = number | 'latest';

/**
 * What the EVM indexer needs from a node. Every answer is validated before it is returned,
 * transient faults are retried inside, and a provider's "range too large / too many results"
 * answer surfaces as `RangeTooLargeError` so the caller can split the range.
 */
export interface EvmSource {
  chainId(): Promise<number>;
  blockNumber(): Promise<number>;
  /**
   * Logs in `[from, to]` with the ERC-20/721 Transfer topic or a balance event's (`INDEXED_TOPICS`),
   * ordered by block then log index.
   */
  getTransferLogs(from: number, to: number): Promise<EvmLog[]>;
  /**
   * The fungible ERC-20 transfers of `[from, to]` (what `decodeTransferLog` makes of
   * `getTransferLogs`) and the balance events (`decodeBalanceEventLog`), each in chain order, with
   * the number of logs read; `time` is -1 where the node sent no `blockTimestamp`. The backfill's
   * path: most answers are read without `JSON.parse`.
   */
  getTransfers(from: number, to: number): Promise<ScannedTransfers>;
  /**
   * Transfer-topic and balance-event logs of exactly these blocks, asked by block hash (EIP-234), ordered like
   * `getTransferLogs`. Unlike a range, which a node behind a load balancer answers up to its own
   * head without saying so, a block the node lacks is an error (retried), never an empty list.
   */
  getTransferLogsOfBlocks(blocks: readonly { number: number; hash: string }[]): Promise<EvmLog[]>;
  /** Headers of the given blocks, in the same order, fetched in JSON-RPC batches. */
  getHeaders(numbers: readonly number[]): Promise<EvmBlockHeader[]>;
  /** name/symbol/decimals of each token, tolerating missing or reverting functions. */
  readTokenMetadata(addresses: readonly string[], blockTag?: BlockTag): Promise<TokenMetadata[]>;
  /** totalSupply/cap/burn-address balances at `blockTag` (falls back to `latest` when the node has no state there). */
  readSupplies(addresses: readonly string[], blockTag: BlockTag): Promise<TokenSupply[]>;
  /**
   * `balanceOf(holder)` of one token for each holder at `blockTag`, in the same order; null where
   * the call reverts. A node without state at that block is an error (no silent fallback).
   */
  readBalances(token: string, holders: readonly string[], blockTag: BlockTag): Promise<(bigint | null)[]>;
  /**
   * `owner()` of each contract at its block, in the same order; null where the call reverts or
   * answers no address. A node without state at a block is asked at `latest` instead (ownership
   * rarely moves; docs/reliability.md says what that costs).
   */
  readOwners(contracts: readonly { contract: string; block: number }[]): Promise<(string | null)[]>;
  /**
   * Whether each contract answers like an ERC-20 token at `block`: `totalSupply()`, `decimals()`
   * and `balanceOf(0x0)` each answer a 32-byte word (at `latest` where the node has no state there).
   */
  looksLikeTokens(contracts: readonly string[], block: number): Promise<boolean[]>;
  /**
   * Whether each address has code at `block` (`eth_getCode`). A node without state at that block
   * fails with `StateUnavailableError` once its attempts are spent.
   */
  hasCode(addresses: readonly string[], block: number): Promise<boolean[]>;
  /**
   * `balanceOf(holder)` of each pair at `block`, in the same order; null where the call reverts.
   * With `multicall`, 500 calls at a time go through Multicall3's `aggregate3` (which must have
   * code at `block`), and a chunk it cannot run is read call by call; otherwise every call is an
   * `eth_call` of a JSON-RPC batch. A node without state at that block fails with
   * `StateUnavailableError` once its attempts are spent.
   */
  readBalancesAt(
    pairs: readonly HolderRef[],
    block: number,
    options: { multicall: boolean },
  ): Promise<(bigint | null)[]>;
}

/** A holder of a token. */
export interface HolderRef {
  token: string;
  holder: string;
}
