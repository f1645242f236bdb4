/**
 * Builders of what a `Store` is fed, for tests: transfers, token metadata, block refs, NEO batch
 * parts, starting balances and whole `IndexBatch`es. Every builder fills the fields a test does
 * not care about with fixed, deterministic values and takes the fields it does care about as
 * overrides, so a test states only what it is about.
 *
 * Two batch builders, for two kinds of test:
 * - `indexBatch(fields)` is the plain record: no block refs, no block hash, no tokens unless
 *   given. For tests of one store mechanism (a mint here, a lease there).
 * - `batch(spec)` is a batch as an indexer hands it over: a ref for every block (each linking to
 *   the one before), the hash of its last block, and metadata for every token it moves. For the
 *   contract suite and anything that rolls back or checks refs.
 */
import { ZERO_ADDRESS } from '../../internal/chains.js';
import type {
  BlockRef,
  IndexBatch,
  NeoBatchPart,
  SeedBalance,
  TokenMetadata,
  TransferRecord,
} from '../types.js';

/** `n` as a 32-byte hex hash (a transaction id or block hash). */
export const hash32 = (n: number | bigint): string => `0x${n.toString(16).padStart(64, '0')}`;

/** The hash the builders give block `n`; `blockRefs` links each block to the one before. */
export const blockHash = (n: number): string => hash32(0xb10c000000 + n);

/** A 20-byte address: the hex `prefix`, then `n` in hex, zero-padded. Larger `n` sorts later. */
export function address(prefix: string, n: number): string {
  return `0x${prefix}${n.toString(16).padStart(40 - prefix.length, '0')}`;
}

/** A holder address (never a burn address). */
export const holder = (n: number): string => address('11', n);

/** A token address; larger `n` sorts later. */
export const tokenAddress = (n: number): string => address('ee', n);

/** Metadata of `token`: by default named after its last four hex digits, 18 decimals. */
export function tokenMetadata(
  token: string,
  overrides: Partial<Omit<TokenMetadata, 'address'>> = {},
): TokenMetadata {
  return {
    address: token,
    name: `Token ${token.slice(-4)}`,
    symbol: `T${token.slice(-4)}`,
    decimals: 18,
    ...overrides,
  };
}

/**
 * A transfer; by default a mint of 1 of `tokenAddress(1)` to `holder(1)` in block 1, log 0.
 * Unless given, the transaction index is half the log index (two transfers a transaction), the
 * hash follows from block and transaction index, and the time from the block (12 s blocks).
 */
export function transferRecord(fields: Partial<TransferRecord> = {}): TransferRecord {
  const blockNumber = fields.blockNumber ?? 1;
  const logIndex = fields.logIndex ?? 0;
  const txIndex = fields.txIndex ?? Math.floor(logIndex / 2);
  return {
    token: tokenAddress(1),
    from: ZERO_ADDRESS,
    to: holder(1),
    value: 1n,
    txHash: hash32(blockNumber * 10_000 + txIndex),
    time: 1_600_000_000 + blockNumber * 12,
    ...fields,
    blockNumber,
    logIndex,
    txIndex,
  };
}

/** Transfers of one token in one block, `[from, to, value]` each, log indexes counting up from `firstLog`. */
export function moves(
  token: string,
  block: number,
  list: readonly (readonly [string, string, bigint])[],
  firstLog = 0,
): TransferRecord[] {
  return list.map(([from, to, value], i) =>
    transferRecord({ token, blockNumber: block, logIndex: firstLog + i, from, to, value }),
  );
}

/** Refs of blocks `from..to`, each with `blockHash(n)` and its parent's. */
export function blockRefs(from: number, to: number): BlockRef[] {
  const out: BlockRef[] = [];
  for (let n = from; n <= to; n++) out.push({ number: n, hash: blockHash(n), parentHash: blockHash(n - 1) });
  return out;
}

/**
 * A plain batch of blocks `fromBlock..toBlock` on eth: by default no transfers, tokens or block
 * refs, no block hash, the head at `toBlock` and nothing pruned.
 */
export function indexBatch(
  fields: Pick<IndexBatch, 'fromBlock' | 'toBlock'> & Partial<IndexBatch>,
): IndexBatch {
  return {
    chain: 'eth',
    toBlockHash: null,
    transfers: [],
    tokens: [],
    blocks: [],
    head: fields.toBlock,
    pruneBlocksBelow: 0,
    ...fields,
  };
}

/** What {@link batch} builds a batch from. */
export interface BatchSpec {
  /** Default eth. */
  chain?: string;
  from: number;
  to: number;
  transfers?: TransferRecord[];
  /** Default: `tokenMetadata` of every token the transfers move. */
  tokens?: TokenMetadata[];
  /** Default `to + 5`. */
  head?: number;
  /** `pruneBlocksBelow`; refs start there. Default 0. */
  prune?: number;
}

/** A batch as an indexer hands it over: refs for every block, metadata for every token in it, and the hash of `to`. */
export function batch(spec: BatchSpec): IndexBatch {
  const transfers = spec.transfers ?? [];
  const prune = spec.prune ?? 0;
  return {
    chain: spec.chain ?? 'eth',
    fromBlock: spec.from,
    toBlock: spec.to,
    toBlockHash: blockHash(spec.to),
    transfers,
    tokens: spec.tokens ?? [...new Set(transfers.map((t) => t.token))].map((token) => tokenMetadata(token)),
    blocks: blockRefs(Math.max(spec.from, prune), spec.to),
    head: spec.head ?? spec.to + 5,
    pruneBlocksBelow: prune,
  };
}

/**
 * `batch(spec)` carrying starting balances read at `seedBlock`, `[token, holder, amount]` each;
 * `partial` says the node could not give them all.
 */
export function seeded(
  spec: BatchSpec,
  seedBlock: number,
  balances: readonly (readonly [token: string, holder: string, amount: bigint])[],
  partial = false,
): IndexBatch {
  return {
    ...batch(spec),
    seeds: {
      block: seedBlock,
      balances: balances.map(([token, holder, amount]): SeedBalance => ({ token, holder, amount })),
      partial,
    },
  };
}

/** The NEO part of a batch; every list empty unless given. */
export function neoPart(fields: Partial<NeoBatchPart> = {}): NeoBatchPart {
  return {
    assetTransfers: fields.assetTransfers ?? [],
    outputsCreated: fields.outputsCreated ?? [],
    outputsSpent: fields.outputsSpent ?? [],
    deployments: fields.deployments ?? [],
    assets: fields.assets ?? [],
  };
}
