/**
 * The storage interface, handed out by role (see {@link Store}). Both backends (sqlite/,
 * postgres/) implement it unchanged and pass the one contract suite in `contract/suite.ts`; the
 * rules they share (batch checks, rollback guards, net changes, the new-token rule) live in
 * `batch-plan.ts`.
 *
 * Conventions, so that backends agree exactly:
 * - Chains are named as in `internal/chains.ts` (`eth`, `bsc`, ...).
 * - EVM addresses and hashes are `0x` + lower-case hex strings. Backends may store them
 *   more compactly, but must give back exactly what they were given.
 * - Amounts are `bigint` (uint256). Never numbers, never floats.
 * - Block numbers, log indexes, counts and Unix times are JS numbers (all stay far below 2^53).
 * - Every method is async, so that a network database fits behind the same interface.
 */
import type { BalanceChange, BlockRef, TokenMetadata, TransferRecord } from '../internal/records.js';
import type { AddressBalance, AddressHolding, HolderEntry } from './address-view-types.js';
import type { ApiKeyLimits, ApiKeyRateLimit, ApiKeyRecord, ApiKeyStore } from './api-key-types.js';
import type { BatchSeeds, IndexBatch, SeedBalance } from './batch-types.js';
import type {
  NeoAssetInfo,
  NeoBatchPart,
  NeoContractRecord,
  NeoOutputRow,
  NeoTokenPage,
  NeoTokenRecord,
} from './neo-types.js';
import type { ChainWriter, WriterLease, WriterLeaseOptions, WriterRole } from './writer-lease-types.js';

export type {
  AddressBalance,
  AddressHolding,
  ApiKeyLimits,
  ApiKeyRateLimit,
  ApiKeyRecord,
  ApiKeyStore,
  BalanceChange,
  BatchSeeds,
  BlockRef,
  ChainWriter,
  HolderEntry,
  IndexBatch,
  NeoAssetInfo,
  NeoBatchPart,
  NeoContractRecord,
  NeoOutputRow,
  NeoTokenPage,
  NeoTokenRecord,
  SeedBalance,
  TokenMetadata,
  TransferRecord,
  WriterLease,
  WriterLeaseOptions,
  WriterRole,
};

/**
 * A token as a balance entry shows it: its chain and metadata. {@link StoreReader.listAddressBalances}
 * reads no more of the token than this (an address may hold 10,000 tokens).
 */
export interface TokenLabel extends TokenMetadata {
  chain: string;
}

/** A token as the API sees it. */
export interface TokenRecord extends TokenLabel {
  /** `totalSupply()` in raw units at the last refresh; null when it cannot be read. */
  totalSupply: bigint | null;
  /** `cap()` in raw units; null when the token has no cap. */
  cap: bigint | null;
  /** Sum of `balanceOf` of the burn addresses (0x0, 0x…dead) read from the node; null when unknown. */
  burnedBalance: bigint | null;
  /** Distinct non-zero-address holders with a positive balance computed from indexed transfers. */
  holderCount: number;
  /** Fungible transfers of this token in the index. */
  transferCount: number;
  /** Block of the first indexed transfer. */
  firstBlock: number;
  /** Icon identifier; `""` when none is configured. */
  icon: string;
}

/** What the indexer has durably committed for a chain. */
export interface Checkpoint {
  /** Newest block whose data is fully committed. */
  block: number;
  /** Its hash when known (always known inside the unfinalized window). */
  hash: string | null;
}

export interface RollbackResult {
  /** Tokens whose transfers or balance changes were removed (their supply must be refreshed). */
  affectedTokens: string[];
  /** Transfers removed. */
  removedTransfers: number;
}

export interface SupplyUpdate {
  address: string;
  totalSupply: bigint | null;
  cap: bigint | null;
  burnedBalance: bigint | null;
  /** Block the values were read at. */
  atBlock: number;
}

/**
 * Why a token is marked not exact (docs/reliability.md#exact-balances): at `atBlock`, its summed
 * stored balances differed from its `totalSupply()` and a sample of its holders' `balanceOf`
 * differed from their stored balances. A token without a mark is exact as far as the last check
 * could tell.
 */
export interface NotExactMark {
  /** Block the check read `totalSupply()` and `balanceOf` at. */
  atBlock: number;
  /** Summed stored balances (the zero address excluded) minus `totalSupply()`; signed. */
  supplyDrift: bigint;
  /** Holders whose `balanceOf` was sampled. */
  sampled: number;
  /** Sampled holders whose stored balance differed from `balanceOf` (at least 1 for a mark). */
  differing: number;
}

/** Sets (`mark`) or clears (`null`) a token's {@link NotExactMark}. */
export interface ExactnessUpdate {
  address: string;
  mark: NotExactMark | null;
}

export interface ChainStatus {
  chain: string;
  /** Newest block seen on the node (0 before the first sighting). */
  head: number;
  /** Newest block whose data is fully visible (the checkpoint), or null before the first batch. */
  indexed: number | null;
  /** Last error the indexer of this chain met, or null. Safe to show: no URLs or secrets. */
  lastError: string | null;
  /** Unix milliseconds of the last status update. */
  updatedAt: number;
  /** The last writer elected for the chain (backends with writer election, once one was elected). */
  writer?: ChainWriter;
  /**
   * This process's own indexer for the chain, when it runs one beside the API (`start` with a
   * backend that elects writers): the elected writer, or a standby waiting to take over.
   */
  role?: WriterRole;
  /** The block starting balances are read at (see {@link BatchSeeds}); absent when the chain is not seeded. */
  seedBlock?: number;
  /**
   * True once the node could not answer the state at `seedBlock`: holders seen since then have no
   * starting balance, so holder counts and balances are partial. Absent otherwise.
   */
  holdersPartial?: boolean;
  /**
   * Present while balances lag the checkpoint (see `IndexBatch.deferBalances`): the balances
   * `getBalance` and `scanBalances` answer are those at this block.
   */
  balancesBlock?: number;
}

/** What the dashboard and `/metrics` show of a chain beyond its {@link ChainStatus}. */
export interface ChainActivity {
  chain: string;
  /**
   * Transfers indexed on the chain (NEO asset transfers included): each batch adds its own,
   * a rollback takes off those it removes.
   */
  transfers: number;
  /**
   * The chain's newest transfers (at most 16), newest first (block, then log index, descending).
   * A rollback empties the list; the batches after it fill it again.
   */
  recent: TransferRecord[];
}

export interface TokenPage {
  /** Number of tokens indexed on the chain. */
  total: number;
  tokens: TokenRecord[];
}

/**
 * What the indexer uses: the writes of one chain (a single writer per chain) and the few reads
 * that decide them. A fenced writer (PostgreSQL writer election) and the SQLite writer thread are
 * other `StoreWriter`s over the same store.
 */
export interface StoreWriter {
  /**
   * True when `applyBatch` calls are applied one at a time in the order they are made (the SQLite
   * writer thread: one queue), so a caller may send the next batch before the previous one has
   * settled; a batch that fails makes every later one fail too (each checks that it continues
   * the checkpoint). Otherwise a caller waits for each batch before sending the next.
   */
  readonly ordersBatches?: boolean;
  getCheckpoint(chain: string): Promise<Checkpoint | null>;
  /**
   * Applies a batch atomically: transfers, balance changes, starting balances (`seeds`), balances, holder/transfer
   * counts, new tokens, block refs, checkpoint.
   */
  applyBatch(batch: IndexBatch): Promise<void>;
  /** Stored block refs with `from <= number <= to`, ascending. */
  getBlockRefs(chain: string, from: number, to: number): Promise<BlockRef[]>;
  /**
   * Undoes every block above `toBlock` exactly (transfers, balances, counts; tokens left with
   * no transfers disappear, with their starting balances; other starting balances stay), and
   * sets the checkpoint to `toBlock` with `toBlockHash`, atomically.
   */
  rollback(chain: string, toBlock: number, toBlockHash: string | null): Promise<RollbackResult>;
  /** Tokens whose supply must be read again: new, touched by a mint/burn/burn-address transfer, or refreshed before `staleBefore`. */
  tokensNeedingSupply(chain: string, staleBefore: number, limit: number): Promise<string[]>;
  /** Records supplies read from the node and clears their refresh flag. */
  updateSupplies(chain: string, updates: SupplyUpdate[]): Promise<void>;
  /**
   * Sets or clears tokens' not-exact marks; a token the store does not know is skipped. A mark is
   * a judgement about the token at the head, re-checked as the head moves: a rollback leaves it
   * (the rollback makes the token's supply be read again, and the check after that read sets or
   * clears it), and it goes with the token when a rollback removes the token.
   */
  setExactness(chain: string, updates: readonly ExactnessUpdate[]): Promise<void>;
  /**
   * For each (token, holder) pair, whether its starting balance is recorded (see {@link BatchSeeds});
   * false for a token the store does not know.
   */
  seededHolders(chain: string, pairs: readonly { token: string; holder: string }[]): Promise<boolean[]>;
  /**
   * Brings the query planner's statistics up to date after a bulk load (`import`): a store filled
   * in one go has none, or those of when it was empty, and PostgreSQL may then plan an address's
   * balances as a walk over every token of the chain until autovacuum analyzes the tables.
   * SQLite: `PRAGMA optimize` with a bounded sample; PostgreSQL: `ANALYZE` of the chain tables.
   */
  refreshStatistics(): Promise<void>;
  /** Records the node head and the last error (null clears it) outside any batch. */
  setChainStatus(chain: string, status: { head?: number; lastError?: string | null }): Promise<void>;
  /** NEO: the rows of the output table that `refs` name; spent outputs and outputs never stored are absent. */
  getNeoOutputs(chain: string, refs: readonly { txid: string; n: number }[]): Promise<NeoOutputRow[]>;
  /** The reads of {@link StoreReader}, {@link HistoryScans} and {@link NeoReader} the indexer decides by. */
  getChainStatus: StoreReader['getChainStatus'];
  getToken: StoreReader['getToken'];
  /** The exactness check's sample of a token's holders (indexer/exactness-check.ts). */
  listHolders: StoreReader['listHolders'];
  /** The exactness check's sum of a token's stored balances (a running sum: one row read). */
  getBalanceSum: StoreReader['getBalanceSum'];
  /** The exactness check's sample of a token's negative stored balances. */
  negativeBalances: HistoryScans['negativeBalances'];
  /** Reconcile's reads (indexer/reconcile.ts): stored balances, every address a token's logs named, corrections at a block. */
  getBalance: StoreReader['getBalance'];
  scanHoldings: HistoryScans['scanHoldings'];
  scanBalanceChanges: HistoryScans['scanBalanceChanges'];
  getNeoToken: NeoReader['getNeoToken'];
}

/**
 * What the API reads (and the dashboard and `/metrics` beside it). While a backfill defers its
 * balances (`ChainStatus.balancesBlock`), everything computed from balances (`getBalance`, the
 * address balances and holdings, the holder lists) and an address's transfers
 * (`listAddressTransfers`, written with the balances) answer as of that block; a token's transfers
 * and counts of tokens are as of the checkpoint.
 */
export interface StoreReader {
  getChainStatus(chain: string): Promise<ChainStatus | null>;
  listChainStatuses(): Promise<ChainStatus[]>;
  getToken(chain: string, address: string): Promise<TokenRecord | null>;
  /**
   * The labels of those of `addresses` that are tokens of `chain`, each once, in any order: what a page of
   * an address's transfers across tokens shows of each, in one read however many tokens it names.
   */
  getTokenLabels(chain: string, addresses: readonly string[]): Promise<TokenLabel[]>;
  /** The token's not-exact mark; null when it is not marked (or not known). */
  getNotExact(chain: string, address: string): Promise<NotExactMark | null>;
  /** Per chain, how many tokens are marked not exact; chains with none are absent. */
  countNotExact(): Promise<Record<string, number>>;
  /**
   * The sum of the token's stored balances without the zero address's (signed: balances may be
   * negative while history starts late); null for a token the store does not know. A running sum
   * that every write of balances keeps in its transaction (store/balance-sums.ts), so it costs one
   * row; as of `ChainStatus.balancesBlock` while a backfill defers balances, like the balances.
   * The exactness check compares it with `totalSupply()`; `verify` checks it against the rows.
   */
  getBalanceSum(chain: string, token: string): Promise<bigint | null>;
  /** Newest first: block number, then log index, descending. */
  listTransfers(chain: string, token: string, offset: number, limit: number): Promise<TransferRecord[]>;
  /** Ordered by holderCount desc, transferCount desc, address asc. */
  listTokens(chain: string, offset: number, limit: number): Promise<TokenPage>;
  /**
   * Balance computed from indexed transfers (0n when never seen). For a NEO global asset: the
   * sum of the holder's unspent outputs in Fixed8 units. During a backfill, the balance at
   * `ChainStatus.balancesBlock` when that is set (see `IndexBatch.deferBalances`).
   */
  getBalance(chain: string, token: string, holder: string): Promise<bigint>;
  /**
   * The tokens `address` holds: every token whose balance at the address is above zero, ordered
   * like `listTokens` (holderCount desc, transferCount desc, address asc). Never the zero address's
   * or `""`'s (they hold nothing: `[]`). An index read, then one balance row and one token row per
   * entry; each token only as far as its label (docs/benchmarks.md, "Address Token Balances: the
   * read").
   */
  listAddressBalances(chain: string, address: string): Promise<AddressBalance[]>;
  /**
   * What `address` holds of one token and how many of its transfers name it; `{0n, 0}` when the
   * store has no row for the pair (also for a token it does not know). For the zero address and
   * `""` the balance is whatever the store computed (the API shows it as 0).
   */
  getAddressHolding(chain: string, address: string, token: string): Promise<AddressHolding>;
  /**
   * Transfers in which `address` is sender or recipient (a self-transfer once), of one token or,
   * with `token` null, of every token (NEO global assets included); newest first (block number,
   * then log index, descending; ties between tokens, which only NEO can have, by token address
   * descending). `offset` stays within the API's deepest page (2,450): the page is found by an index
   * range, never by reading the address's older transfers. While balances lag the checkpoint, as
   * of `ChainStatus.balancesBlock`.
   */
  listAddressTransfers(
    chain: string,
    address: string,
    token: string | null,
    offset: number,
    limit: number,
  ): Promise<TransferRecord[]>;
  /**
   * Holders of a token (exactly those `holderCount` counts: positive balance, never the zero
   * address or `""`), by balance descending (uint256 order), then address ascending (the order of
   * the address strings); an index range, like `listAddressTransfers`.
   */
  listHolders(chain: string, token: string, offset: number, limit: number): Promise<HolderEntry[]>;
  /**
   * Optional, synchronous (it sits on every request's path): a number that changes whenever
   * anything the read methods answer may have changed, through this handle or any other
   * connection. Another connection's commit may show up to a few milliseconds late (the
   * backend says how late). The API's response cache is valid while it stays the same; a
   * backend without it is served uncached.
   */
  readVersion?(): number;
  /**
   * Optional: the chain's transfer count and newest transfers (dashboard, `/metrics`); null before
   * anything was recorded for the chain.
   */
  getChainActivity?(chain: string): Promise<ChainActivity | null>;
  /** Optional: bytes the store takes (SQLite: the database file and its WAL; PostgreSQL: `pg_database_size`). */
  storageBytes?(): Promise<number>;
}

/** Whole-history scans, for `verify` (not for the API's hot path). */
export interface HistoryScans {
  /** Transfers of one token oldest first (block, then log index), strictly after `after` when given. */
  scanTransfers(
    chain: string,
    token: string,
    after: { blockNumber: number; logIndex: number } | null,
    limit: number,
  ): Promise<TransferRecord[]>;
  /**
   * Stored non-zero balances of one token, in the backend's key order, strictly after the holder
   * `afterHolder` when given (pass the last holder of a page to get the next); as `getBalance`,
   * those at `ChainStatus.balancesBlock` when that is set.
   */
  scanBalances(
    chain: string,
    token: string,
    afterHolder: string | null,
    limit: number,
  ): Promise<{ holder: string; amount: bigint }[]>;
  /**
   * Up to `limit` negative stored balances of one token, in holder order, the zero address left
   * out (its balance is minus every mint). `balanceOf` is never negative, so each is a credit the
   * index missed; the exactness check samples them. Read through an index of those rows only.
   */
  negativeBalances(
    chain: string,
    token: string,
    limit: number,
  ): Promise<{ holder: string; amount: bigint }[]>;
  /**
   * Every (holder, balance, transfer count) row the store keeps for one token, zero balances
   * included when transfers name the holder, in the backend's key order, strictly after
   * `afterHolder` when given; balances as `scanBalances` answers them. `verify` checks them against
   * the transfers.
   */
  scanHoldings(
    chain: string,
    token: string,
    afterHolder: string | null,
    limit: number,
  ): Promise<({ holder: string } & AddressHolding)[]>;
  /**
   * Holders of one token in the order of `listHolders`, strictly after `after` (the last entry of
   * the previous page) when given: a seek, so `verify` can walk a token with millions of holders.
   */
  scanHolders(chain: string, token: string, after: HolderEntry | null, limit: number): Promise<HolderEntry[]>;
  /** Balance changes of one token (`IndexBatch.balanceChanges`) oldest first, strictly after `after`. */
  scanBalanceChanges(
    chain: string,
    token: string,
    after: { blockNumber: number; logIndex: number } | null,
    limit: number,
  ): Promise<BalanceChange[]>;
  /**
   * Starting balances recorded for one token (see {@link BatchSeeds}), zero ones included, in the
   * backend's key order, strictly after the holder `afterHolder` when given.
   */
  scanSeedBalances(
    chain: string,
    token: string,
    afterHolder: string | null,
    limit: number,
  ): Promise<SeedBalance[]>;
}

/** What the NEO operations read beside {@link StoreReader}. */
export interface NeoReader {
  /** A NEP-5 token or global asset with its NEO fields, or null when unknown. */
  getNeoToken(chain: string, address: string): Promise<NeoTokenRecord | null>;
  /** NEP-5 tokens and global assets together, ordered like `listTokens`. */
  listNeoTokens(chain: string, offset: number, limit: number): Promise<NeoTokenPage>;
  /** {@link StoreReader.listAddressBalances} with the NEO fields of each token (the balance entry's `tokenInfo.c`). */
  listNeoAddressBalances(chain: string, address: string): Promise<AddressBalance<NeoTokenRecord>[]>;
  /** Deployed contracts, newest first: block, then transaction position, descending. */
  listNeoContracts(chain: string, offset: number, limit: number): Promise<NeoContractRecord[]>;
}

/**
 * An open store, handed out by role: each consumer takes only the parts it uses (the API
 * `reader`, `neo` and `keys`; the indexer `writer`; `verify` `scans`), and a wrapper swaps or
 * wraps one part (a read replica swaps `reader` and `neo`; a writer lease wraps `writer`).
 */
export interface Store {
  /** Backend name for logs and `/status`: `sqlite` or `postgres`. */
  readonly kind: string;
  readonly writer: StoreWriter;
  readonly reader: StoreReader;
  readonly scans: HistoryScans;
  readonly neo: NeoReader;
  readonly keys: ApiKeyStore;
  /**
   * Optional: waits until this process is the one writer of `chain` among all processes sharing
   * the store, and resolves with the lease; resolves with null when `options.signal` aborts
   * first. A backend without it (SQLite) supports one indexing process per store; callers then
   * write through the store itself (see `acquireWriterLease` in `writer-lease.ts`).
   */
  acquireWriterLease?(chain: string, options: WriterLeaseOptions): Promise<WriterLease | null>;
  close(): Promise<void>;
}

/** The parts an API process reads. */
export type ApiStore = Pick<Store, 'kind' | 'reader' | 'neo' | 'keys'>;
