/**
 * The storage interface. Every backend (SQLite now, PostgreSQL later) implements it
 * unchanged and passes the one contract suite in `store.contract.ts`.
 *
 * Conventions, so that backends agree exactly:
 * - Chains are named as in `internal/chains.ts` (`eth`, `bsc`, ...).
 * - EVM addresses and hashes are `0x` + lower-case hex strings. Backends may store them
 *   more compactly, but must give back exactly what they were given.
 * - Amounts are `bigint` (uint256). Never numbers, never floats.
 * - Block numbers, log indexes, counts and Unix times are JS numbers (all stay far below 2^53).
 * - Every method is async, so that a network database fits behind the same interface.
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

/** A token as the API sees it. */
export interface TokenRecord extends TokenMetadata {
  chain: string;
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

/** A block's identity, kept for the unfinalized window to detect reorgs by parent hash. */
export interface BlockRef {
  number: number;
  hash: string;
  parentHash: string;
}

/** What the indexer has durably committed for a chain. */
export interface Checkpoint {
  /** Newest block whose data is fully committed. */
  block: number;
  /** Its hash when known (always known inside the unfinalized window). */
  hash: string | null;
}

/**
 * One atomic unit of indexing: everything in it, the checkpoint included, commits in one
 * transaction, so a crash at any moment leaves either all of it or none of it.
 */
export interface IndexBatch {
  chain: string;
  /** First block this batch covers (inclusive); must be `checkpoint.block + 1` of the stored checkpoint, or the chain's start block when there is none. */
  fromBlock: number;
  /** Last block this batch covers (inclusive); becomes the new checkpoint. */
  toBlock: number;
  /** Hash of `toBlock` when known. */
  toBlockHash: string | null;
  /** Transfers in the range, in chain order (block, then log index, ascending). */
  transfers: TransferRecord[];
  /** Metadata of every token in `transfers` that may be new. Known tokens are left unchanged. */
  tokens: TokenMetadata[];
  /** Block refs inside the unfinalized window covered by this batch (any order). */
  blocks: BlockRef[];
  /** Newest head seen on the node, for `/status` and confirmations. */
  head: number;
  /** Block refs older than this are pruned (the bottom of the unfinalized window). */
  pruneBlocksBelow: number;
}

export interface RollbackResult {
  /** Tokens whose transfers were removed (their supply must be refreshed). */
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
}

export interface ApiKeyRecord {
  /** Short public identifier, printed by `keys list`, accepted by `keys revoke`. */
  id: string;
  /** SHA-256 hex of the key; the key itself is never stored. */
  hash: string;
  label: string;
  /** Unix milliseconds. */
  createdAt: number;
  /** Unix milliseconds, or null while active. */
  revokedAt: number | null;
}

export interface TokenPage {
  /** Number of tokens indexed on the chain. */
  total: number;
  tokens: TokenRecord[];
}

export interface Store {
  /** Backend name for logs and `/status`: `sqlite` or `postgres`. */
  readonly kind: string;

  // ---- indexer (single writer per chain) ----
  getCheckpoint(chain: string): Promise<Checkpoint | null>;
  /** Applies a batch atomically: transfers, balances, holder/transfer counts, new tokens, block refs, checkpoint. */
  applyBatch(batch: IndexBatch): Promise<void>;
  /** Stored block refs with `from <= number <= to`, ascending. */
  getBlockRefs(chain: string, from: number, to: number): Promise<BlockRef[]>;
  /**
   * Undoes every block above `toBlock` exactly (transfers, balances, counts; tokens left with
   * no transfers disappear), and sets the checkpoint to `toBlock` with `toBlockHash`, atomically.
   */
  rollback(chain: string, toBlock: number, toBlockHash: string | null): Promise<RollbackResult>;
  /** Tokens whose supply must be read again: new, touched by a mint/burn/burn-address transfer, or refreshed before `staleBefore`. */
  tokensNeedingSupply(chain: string, staleBefore: number, limit: number): Promise<string[]>;
  /** Records supplies read from the node and clears their refresh flag. */
  updateSupplies(chain: string, updates: SupplyUpdate[]): Promise<void>;
  /** Records the node head and the last error (null clears it) outside any batch. */
  setChainStatus(chain: string, status: { head?: number; lastError?: string | null }): Promise<void>;

  // ---- API reads ----
  getChainStatus(chain: string): Promise<ChainStatus | null>;
  listChainStatuses(): Promise<ChainStatus[]>;
  getToken(chain: string, address: string): Promise<TokenRecord | null>;
  /** Newest first: block number, then log index, descending. */
  listTransfers(chain: string, token: string, offset: number, limit: number): Promise<TransferRecord[]>;
  /** Ordered by holderCount desc, transferCount desc, address asc. */
  listTokens(chain: string, offset: number, limit: number): Promise<TokenPage>;
  /** Balance computed from indexed transfers (0n when never seen). */
  getBalance(chain: string, token: string, holder: string): Promise<bigint>;

  // ---- API keys ----
  createApiKey(key: ApiKeyRecord): Promise<void>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Revokes by id or by hash; returns false when no active key matched. */
  revokeApiKey(idOrHash: string, at: number): Promise<boolean>;
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null>;

  close(): Promise<void>;
}
