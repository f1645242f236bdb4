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
  /** Logs with the ERC-20/721 Transfer topic in `[from, to]`, ordered by block then log index. */
  getTransferLogs(from: number, to: number): Promise<EvmLog[]>;
  /**
   * The fungible ERC-20 transfers of `[from, to]` (what `decodeTransferLog` makes of
   * `getTransferLogs`), in chain order, with the number of logs read; `time` is -1 where the node
   * sent no `blockTimestamp`. The backfill's path: most answers are read without `JSON.parse`.
   */
  getTransfers(from: number, to: number): Promise<ScannedTransfers>;
  /**
   * Transfer-topic logs of exactly these blocks, asked by block hash (EIP-234), ordered like
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
