/**
 * How a batch's transfers cross to the SQLite writer thread.
 *
 * `postMessage` copies an array of transfer objects field by field (nine values per transfer,
 * each tagged, each string copied and rebuilt on the other side), a large share of a backfill's
 * CPU. Sent as columns instead (the numbers in one Float64Array, the transaction hashes joined
 * into one string, the amounts as one BigInt array), the same transfers cost a fraction of that
 * (docs/benchmarks.md, "Where the time goes").
 *
 * Addresses (`from`, `to`) are sent once per batch, as a list of the distinct ones, and each
 * transfer names its two by position. A batch names far fewer addresses than it has transfers, and
 * on the writer's side every transfer of one holder then shares one string object, whose hash V8
 * computes once: grouping the batch's balance changes by holder (`planBatch`) cost about twice as
 * much with a fresh string per transfer, each hashed and compared character by character.
 */
import { TokenqueryError } from '../../internal/errors.js';
import { addBalanceChanges, checkInBatch, SUPPLY_ADDRESSES, type TokenWork } from '../batch-plan.js';
import { RECENT_TRANSFERS_KEPT } from '../chain-activity.js';
import type { IndexBatch, TransferRecord } from '../types.js';

/** The transfers of a batch, as columns. */
export interface TransferColumns {
  count: number;
  /** Distinct token addresses; `tokenOf[i]` indexes this list. */
  tokens: string[];
  tokenOf: Uint32Array;
  /** Distinct `from` and `to` addresses; `fromOf[i]` and `toOf[i]` index this list. */
  addresses: string[];
  fromOf: Uint32Array;
  toOf: Uint32Array;
  /** Per transfer: block number, log index, transaction index, time. */
  numbers: Float64Array;
  /**
   * The transaction hashes, joined without separators, each once per run of consecutive
   * transfers of one transaction; `hashOf[i]` is the position of transfer `i`'s hash in that list.
   */
  hashes: string;
  /** Per hash of `hashes`: its length. */
  hashLengths: Uint32Array;
  hashOf: Uint32Array;
  values: bigint[];
}

/** A batch as sent: every field but `transfers` as it is, the transfers as columns. */
export type WireBatch = Omit<IndexBatch, 'transfers'> & { transferColumns: TransferColumns };

/** Positions in a list of distinct strings, the list growing as new ones are met. */
export function distinctList(): { list: string[]; indexOf(value: string): number } {
  const list: string[] = [];
  const positions = new Map<string, number>();
  return {
    list,
    indexOf(value) {
      let index = positions.get(value);
      if (index === undefined) {
        index = list.length;
        list.push(value);
        positions.set(value, index);
      }
      return index;
    },
  };
}

/**
 * `indexOf` of `list`, asked first of the value it was last given: consecutive transfers often
 * repeat a token or a sender, and comparing with the last one is cheaper than the map's lookup.
 */
function lastFirst(list: ReturnType<typeof distinctList>): (value: string) => number {
  let last: string | undefined;
  let lastIndex = 0;
  return (value) => {
    if (value !== last) {
      last = value;
      lastIndex = list.indexOf(value);
    }
    return lastIndex;
  };
}

export function batchToWire(batch: IndexBatch): WireBatch {
  const { transfers, ...rest } = batch;
  const count = transfers.length;
  const tokens = distinctList();
  const addresses = distinctList();
  const tokenOf = new Uint32Array(count);
  const fromOf = new Uint32Array(count);
  const toOf = new Uint32Array(count);
  const numbers = new Float64Array(count * 4);
  const hashes: string[] = [];
  const hashOf = new Uint32Array(count);
  const values = new Array<bigint>(count);
  const tokenIndex = lastFirst(tokens);
  const fromIndex = lastFirst(addresses);
  const toIndex = lastFirst(addresses);
  for (let i = 0; i < count; i++) {
    const t = transfers[i]!;
    tokenOf[i] = tokenIndex(t.token);
    fromOf[i] = fromIndex(t.from);
    toOf[i] = toIndex(t.to);
    numbers[i * 4] = t.blockNumber;
    numbers[i * 4 + 1] = t.logIndex;
    numbers[i * 4 + 2] = t.txIndex;
    numbers[i * 4 + 3] = t.time;
    // A transaction's transfers are consecutive (chain order): its hash goes once.
    if (hashes.length === 0 || t.txHash !== hashes[hashes.length - 1]) hashes.push(t.txHash);
    hashOf[i] = hashes.length - 1;
    values[i] = t.value;
  }
  return {
    ...rest,
    transferColumns: {
      count,
      tokens: tokens.list,
      tokenOf,
      addresses: addresses.list,
      fromOf,
      toOf,
      numbers,
      hashes: hashes.join(''),
      hashLengths: Uint32Array.from(hashes, (hash) => hash.length),
      hashOf,
      values,
    },
  };
}

/** The batch as objects again; `hashStarts` as {@link hashStartsOf} gives them, when at hand. */
export function batchFromWire(
  wire: WireBatch,
  hashStarts: Uint32Array = hashStartsOf(wire.transferColumns),
): IndexBatch {
  const { transferColumns: columns, ...rest } = wire;
  const { count, tokens, tokenOf, addresses, fromOf, toOf, numbers, hashes, hashOf, values } = columns;
  const transfers = new Array<TransferRecord>(count);
  let lastHash = -1;
  let txHash = '';
  for (let i = 0; i < count; i++) {
    const k = hashOf[i]!;
    if (k !== lastHash) {
      lastHash = k;
      txHash = hashes.slice(hashStarts[k]!, hashStarts[k + 1]!);
    }
    transfers[i] = {
      token: tokens[tokenOf[i]!]!,
      blockNumber: numbers[i * 4]!,
      logIndex: numbers[i * 4 + 1]!,
      txIndex: numbers[i * 4 + 2]!,
      txHash,
      from: addresses[fromOf[i]!]!,
      to: addresses[toOf[i]!]!,
      value: values[i]!,
      time: numbers[i * 4 + 3]!,
    };
  }
  return { ...rest, transfers } as IndexBatch;
}

/** Where each hash of `hashes` starts, and where the last one ends (one entry more than hashes). */
export function hashStartsOf(columns: Pick<TransferColumns, 'hashLengths'>): Uint32Array {
  const { hashLengths } = columns;
  const starts = new Uint32Array(hashLengths.length + 1);
  for (let k = 0; k < hashLengths.length; k++) starts[k + 1] = starts[k]! + hashLengths[k]!;
  return starts;
}

/** A token's part of a wire batch: {@link TokenWork} with its transfers as rows of the columns. */
export interface WireTokenWork extends TokenWork {
  /** Positions in the columns of the token's transfers, in batch order (`transfers` stays empty). */
  rows: number[];
}

/** What {@link planWire} works out of a wire batch. */
export interface WirePlan {
  work: Map<string, WireTokenWork>;
  /** Where each of the batch's distinct hashes starts in `hashes` ({@link hashStartsOf}). */
  hashStarts: Uint32Array;
  /**
   * The batch with only its newest transfers as objects (as many as the chain's recent list
   * keeps): what `encodeRecentTransfers` reads of a batch, without building all of them.
   */
  recent: IndexBatch;
}

/**
 * {@link planBatch} from the columns, for batches without a NEO part: the same
 * grouping by token, first blocks, supply marks and net balance changes (balance changes without
 * a transfer included), with the changes summed
 * by address position instead of by address (a `Map` keyed by small integers), and no object per
 * transfer. `sqlite-store.test.ts` holds both to the same stored result. `rowsOnly` leaves the
 * deltas and counts empty: a bulk load's batch (bulk-load.ts) builds them after the load.
 */
export function planWire(wire: WireBatch, rowsOnly = false): WirePlan {
  if (wire.neo !== undefined)
    throw new TokenqueryError('planWire: a batch with a NEO part is planned by planBatch');
  const columns = wire.transferColumns;
  // The loops are functions of the columns alone: a batch object's shape varies (optional
  // fields), and the optimized loops, had they read it, would be thrown away for each new shape.
  const [lowest, highest] = blockRange(columns.numbers, columns.count);
  if (columns.count > 0) {
    checkInBatch(wire, lowest, 'transfer');
    checkInBatch(wire, highest, 'transfer');
  }
  const work = groupByToken(columns);
  // A bulk load's batch leaves balances and counts to the build after the load (bulk-load.ts).
  if (!rowsOnly) sumChanges(columns, work);
  // Rare, and few: as objects, after the transfers' sums (which set each holder's delta).
  if (wire.balanceChanges !== undefined) {
    addBalanceChanges(wire, wire.balanceChanges, work, (token) => ({ ...token, rows: [] }));
  }
  const { transferColumns: _columns, ...rest } = wire;
  const newestFrom = Math.max(0, columns.count - RECENT_TRANSFERS_KEPT);
  const hashStarts = hashStartsOf(columns);
  const newest = batchFromWire({ ...rest, transferColumns: sliceColumns(columns, newestFrom) }, hashStarts);
  return { work, hashStarts, recent: newest };
}

/** The lowest and highest block number of the columns' transfers. */
function blockRange(numbers: Float64Array, count: number): [number, number] {
  let lowest = Number.POSITIVE_INFINITY;
  let highest = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    const block = numbers[i * 4]!;
    if (block < lowest) lowest = block;
    if (block > highest) highest = block;
  }
  return [lowest, highest];
}

/** The transfers' rows per token, with each token's first block and supply mark. */
function groupByToken(columns: TransferColumns): Map<string, WireTokenWork> {
  const { count, tokens, tokenOf, addresses, fromOf, toOf, numbers } = columns;
  const supply = Uint8Array.from(addresses, (address) => (SUPPLY_ADDRESSES.has(address) ? 1 : 0));
  const byToken: (WireTokenWork | undefined)[] = new Array(tokens.length);
  const work = new Map<string, WireTokenWork>();
  for (let i = 0; i < count; i++) {
    const block = numbers[i * 4]!;
    const t = tokenOf[i]!;
    let token = byToken[t];
    if (token === undefined) {
      token = {
        address: tokens[t]!,
        transfers: [],
        changes: [],
        rows: [],
        deltas: new Map(),
        named: new Map(),
        firstBlock: block,
        dirtyBlock: null,
      };
      byToken[t] = token;
      work.set(token.address, token);
    }
    token.rows.push(i);
    if (block < token.firstBlock) token.firstBlock = block;
    if (supply[fromOf[i]!] === 1 || supply[toOf[i]!] === 1) {
      token.dirtyBlock = Math.max(token.dirtyBlock ?? block, block);
    }
  }
  return work;
}

/**
 * Each token's net balance changes into its `deltas` and transfer-count changes into its `named`,
 * one token at a time, summed by address position in arrays shared by all tokens (an array slot
 * costs less than a map entry; each token leaves them empty again).
 */
function sumChanges(columns: TransferColumns, work: Map<string, WireTokenWork>): void {
  const { addresses, fromOf, toOf, values } = columns;
  const sums: (bigint | undefined)[] = new Array(addresses.length);
  const named = new Uint32Array(addresses.length);
  const touched: number[] = [];
  const namedTouched: number[] = [];
  for (const token of work.values()) {
    const { rows } = token;
    for (let k = 0; k < rows.length; k++) {
      const i = rows[k]!;
      const from = fromOf[i]!;
      const to = toOf[i]!;
      const fromNamed = named[from]!;
      if (fromNamed === 0) namedTouched.push(from);
      named[from] = fromNamed + 1;
      if (from === to) continue;
      const toNamed = named[to]!;
      if (toNamed === 0) namedTouched.push(to);
      named[to] = toNamed + 1;
      const value = values[i]!;
      const fromSum = sums[from];
      if (fromSum === undefined) touched.push(from);
      sums[from] = (fromSum ?? 0n) - value;
      const toSum = sums[to];
      if (toSum === undefined) touched.push(to);
      sums[to] = (toSum ?? 0n) + value;
    }
    for (const position of touched) {
      token.deltas.set(addresses[position]!, sums[position]!);
      sums[position] = undefined;
    }
    touched.length = 0;
    for (const position of namedTouched) {
      token.named!.set(addresses[position]!, named[position]!);
      named[position] = 0;
    }
    namedTouched.length = 0;
  }
}

/** The columns' transfers from position `from` on (the hashes stay whole: `hashOf` indexes them). */
function sliceColumns(columns: TransferColumns, from: number): TransferColumns {
  return {
    ...columns,
    count: columns.count - from,
    tokenOf: columns.tokenOf.subarray(from),
    fromOf: columns.fromOf.subarray(from),
    toOf: columns.toOf.subarray(from),
    numbers: columns.numbers.subarray(from * 4),
    hashOf: columns.hashOf.subarray(from),
    values: columns.values.slice(from),
  };
}
