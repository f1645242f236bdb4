/**
 * The SQLite writer's balances: net changes applied to the balances table and to holder counts,
 * the write-through balance cache that spares most reads, and the balances written behind the
 * checkpoint during a backfill (`IndexBatch.deferBalances`) with their replay after a crash.
 * The `address_transfers` entries of deferred batches wait with those balances and are written
 * with them, many batches' at once in key order (a B-tree takes sorted bulk inserts several times
 * faster than each batch's scattered ones), so the address views lag the checkpoint like balances.
 */
import type Database from 'better-sqlite3';
import { balanceSumChange } from '../balance-sums.js';
import { NON_HOLDERS, namedCounts, netBalanceChanges, netChanges, type TokenWork } from '../batch-plan.js';
import type { AddressEntries, EntryPart } from './address-transfers.js';
import type { BalanceChangeTable } from './balance-changes.js';
import { createBalanceSums } from './balance-sums.js';
import { distinctList } from './batch-wire.js';
import { indexedWrite } from './bulk-indexes.js';
import {
  type ChainRow,
  decodeAmount,
  decodeHex,
  decodeTransferRow,
  pushAmountParams,
  pushHexParams,
  pushRankParams,
  type SqlValue,
} from './codec.js';
import type { HexRows } from './hex-rows.js';
import { ROWS_PER_STATEMENT } from './multi-row.js';
import type { BulkStatements, Statements } from './statements.js';

/**
 * Bounds on balances written behind the checkpoint (see `unwritten`): past either, the batch
 * writes them all. About 150 bytes an entry; a replay after a crash reads at most this many
 * transfers back (seconds).
 */
const MAX_UNWRITTEN_BALANCES = 250_000;
const MAX_UNWRITTEN_TRANSFERS = 1_000_000;

/**
 * Balances written by a transaction, put in the cache only once it has committed: the amounts,
 * what the transaction added to each holder's transfer count, and to the token's running sum
 * (`sum`, balance-sums.ts: written with the rows, so a deferred batch's waits with them).
 */
export type BalanceWrites = {
  id: number;
  holders: string[];
  amounts: bigint[];
  counts: number[];
  sum: bigint;
}[];

/** A token's changes: net balance changes, and transfer-count changes (`TokenWork.named`). */
export interface TokenChanges {
  id: number;
  deltas: Map<string, bigint>;
  named?: Map<string, number>;
}

/**
 * What a batch's transaction did with balances, applied to the cache and to `unwritten` once it
 * has committed: `writes` were written (or, `deferred`, left unwritten); `flushed`, the chain's
 * unwritten balances were written first.
 */
export interface BatchBalances {
  chain: string;
  writes: BalanceWrites;
  deferred: boolean;
  flushed: boolean;
  /** Transfers of the batch (for the bound on what a replay would read). */
  transfers: number;
  /** Deferred: the batch's `address_transfers` entries (`AddressEntries.take`), written later. */
  entries?: EntryPart;
}

/** The writer's balances over one connection (see createBalances). */
export interface Balances {
  /** Drops the cache, and the unwritten balances with it: the cache may hold amounts ahead of the table. */
  clearBalanceCache(): void;
  /** Must run inside the write transaction, before any balance is read. */
  validateBalanceCache(): void;
  /**
   * Applies net balance changes per token of `chain` and returns each token's change in holder
   * count, and the balances written (for the cache, once committed); with `defer`, the rows are
   * left for later (`unwritten`), and only the holder counts change now.
   */
  applyDeltas(
    chain: string,
    changes: TokenChanges[],
    defer?: boolean,
  ): { holderChanges: number[]; writes: BalanceWrites };
  /**
   * Writes the chain's unwritten balances and address entries, with `entries` (the batch's, when
   * it does not defer), and marks its balances current; false when there were no unwritten ones.
   */
  writeUnwritten(chain: string, entries?: EntryPart): boolean;
  /** Replays the balances a crash lost, when the table lags the checkpoint (`stored.balances_block`). */
  recoverBalances(chain: string, stored: ChainRow | undefined): void;
  /** Whether the balances of `tokens` and `transfers` more transfers fit behind the checkpoint. */
  fitsUnwritten(chain: string, tokens: readonly TokenWork[], transfers: number): boolean;
  /** Runs a batch's transaction and caches the balances it wrote once it has committed. */
  cachingBalances(apply: () => BatchBalances): void;
  /** Writes every chain's unwritten balances, then forgets them: the store is closing. */
  close(): void;
}

/** The balances part of the writer; `balanceCacheSize` bounds the cache (see `balanceCache`). */
export function createBalances(
  db: Database.Database,
  sql: Statements,
  bulk: BulkStatements,
  hexRows: HexRows,
  addresses: AddressEntries,
  balanceCacheSize: number,
  /** Called whenever the cache is dropped (the writer's other caches go with it). */
  onClear: () => void = () => {},
  /** Balance changes without a transfer, replayed with the transfers. */
  changes?: BalanceChangeTable,
): Balances {
  const { upsertIfHex, flushBalanceRows, discardBufferedRows } = hexRows;
  // The running sums move with the rows: now, or when unwritten rows are written.
  const sums = createBalanceSums(db);
  // Unwritten balances go in one write, its holder indexes made after it when it outweighs the table.
  const writeBalanceRows = indexedWrite(db, 'balances', ['balances_by_rank', 'balances_by_holder']);
  /**
   * Balances this connection has read or written, per token id and holder: the indexer adds
   * each batch's deltas to the balances it wrote itself a moment before, so most reads never
   * reach SQLite. Values are exact (0n: no row). The cache is only trusted while this
   * connection is the only writer: `PRAGMA data_version` changes when another connection
   * commits, and the cache is then dropped. Rollbacks and failed transactions drop it too.
   * Bounded: past `balanceCacheSize` entries the oldest are dropped (misses just read SQLite).
   */
  const balanceCache = new Map<number, Map<string, bigint>>();
  let cachedBalances = 0;
  let cacheDataVersion: number | null = null;
  /**
   * Balances written behind the checkpoint (`IndexBatch.deferBalances`), per chain, token id and
   * holder: the exact amounts after committed batches whose rows are not written yet (0n: the
   * row goes). They are read before the cache, and written, all of a chain at once, by the first
   * batch that does not defer, a rollback, or `close`. The chain row's `balances_block` says what
   * the table holds meanwhile, so losing them (a crash, or dropping them with the cache) loses
   * nothing: the next write replays the stored transfers above that block (`replayBalances`).
   */
  const unwritten = new Map<
    string,
    {
      balances: Map<number, Map<string, bigint>>;
      /** What the unwritten batches add to each holder's transfer count. */
      counts: Map<number, Map<string, number>>;
      /** The unwritten batches' `address_transfers` entries, a batch a part. */
      entries: EntryPart[];
      /** What the unwritten balances add to each token's running sum. */
      sums: Map<number, bigint>;
      count: number;
      transfers: number;
    }
  >();
  const clearBalanceCache = (): void => {
    balanceCache.clear();
    cachedBalances = 0;
    cacheDataVersion = null;
    unwritten.clear();
    onClear();
  };
  const validateBalanceCache = (): void => {
    const version = sql.cacheDataVersion.get()!;
    if (version !== cacheDataVersion) {
      clearBalanceCache();
      cacheDataVersion = version;
    }
  };
  /** Sets `writes` in `byToken` (token id → holder → amount); returns how many entries are new. */
  const setBalances = (byToken: Map<number, Map<string, bigint>>, writes: BalanceWrites): number => {
    let added = 0;
    for (const { id, holders, amounts } of writes) {
      let perToken = byToken.get(id);
      if (perToken === undefined) {
        perToken = new Map();
        byToken.set(id, perToken);
      }
      const before = perToken.size;
      for (let i = 0; i < holders.length; i++) perToken.set(holders[i]!, amounts[i]!);
      added += perToken.size - before;
    }
    return added;
  };
  const unwrittenOf = (chain: string) => unwritten.get(chain)?.balances;
  const rememberUnwritten = (chain: string, done: BatchBalances): void => {
    const { writes, transfers } = done;
    let entry = unwritten.get(chain);
    if (entry === undefined) {
      entry = {
        balances: new Map(),
        counts: new Map(),
        entries: [],
        sums: new Map(),
        count: 0,
        transfers: 0,
      };
      unwritten.set(chain, entry);
    }
    entry.transfers += transfers;
    if (done.entries !== undefined) entry.entries.push(done.entries);
    entry.count += setBalances(entry.balances, writes);
    for (const { id, sum } of writes) if (sum !== 0n) entry.sums.set(id, (entry.sums.get(id) ?? 0n) + sum);
    for (const { id, holders, counts } of writes) {
      let perToken = entry.counts.get(id);
      if (perToken === undefined) {
        perToken = new Map();
        entry.counts.set(id, perToken);
      }
      for (let i = 0; i < holders.length; i++) {
        if (counts[i] !== 0) perToken.set(holders[i]!, (perToken.get(holders[i]!) ?? 0) + counts[i]!);
      }
    }
  };
  const rememberBalances = (writes: BalanceWrites): void => {
    cachedBalances += setBalances(balanceCache, writes);
    if (cachedBalances > balanceCacheSize) evictBalances();
  };
  /**
   * Drops the oldest quarter of every token's cached balances (a Map iterates in insertion
   * order). Starting over instead would make a store with more holders than the bound read
   * every balance again in every batch.
   */
  const evictBalances = (): void => {
    for (const [id, perToken] of balanceCache) {
      let drop = Math.ceil(perToken.size / 4);
      for (const holder of perToken.keys()) {
        if (drop-- <= 0) break;
        perToken.delete(holder);
        cachedBalances--;
      }
      if (perToken.size === 0) balanceCache.delete(id);
    }
  };

  /**
   * See {@link Balances.applyDeltas}. Balances are exact BigInts and may be negative while
   * history starts late; a zero balance keeps its row only while transfers name the holder
   * (`transfer_count`), and `getBalance` answers 0n for it like for an address never seen.
   */
  function applyDeltas(
    chain: string,
    changes: TokenChanges[],
    defer = false,
  ): {
    holderChanges: number[];
    writes: BalanceWrites;
  } {
    const upserts: unknown[] = [];
    const writes: BalanceWrites = [];
    const pending = unwrittenOf(chain);
    const holderChanges = changes.map(({ id, deltas, named }) => {
      const cached = balanceCache.get(id);
      const pendingOfToken = pending?.get(id);
      const holders: string[] = [];
      const changesOf: bigint[] = [];
      const counts: number[] = [];
      const before: bigint[] = [];
      const misses: number[] = [];
      const visit = (holder: string, delta: bigint, count: number): void => {
        if (delta === 0n && count === 0) return;
        const known = pendingOfToken?.get(holder) ?? cached?.get(holder);
        if (known === undefined) misses.push(holders.length);
        holders.push(holder);
        changesOf.push(delta);
        counts.push(count);
        before.push(known ?? 0n);
      };
      for (const [holder, delta] of deltas) visit(holder, delta, named?.get(holder) ?? 0);
      if (named !== undefined) {
        for (const [holder, count] of named) if (!deltas.has(holder)) visit(holder, 0n, count);
      }
      // Misses are read in key order, which walks the (token_id, holder) B-tree in order.
      misses.sort((a, b) => (holders[a]! < holders[b]! ? -1 : 1));
      for (let start = 0; start < misses.length; start += ROWS_PER_STATEMENT) {
        const part = misses.slice(start, start + ROWS_PER_STATEMENT);
        const params: unknown[] = [];
        for (const i of part) pushHexParams(params, holders[i]!);
        params.push(id);
        for (const [position, amount] of bulk.readBalances.all(part.length, params)) {
          const index = part[position as number]!;
          before[index] = decodeAmount(amount as SqlValue);
        }
      }
      const amounts: bigint[] = new Array(holders.length);
      let change = 0;
      for (let i = 0; i < holders.length; i++) {
        const holder = holders[i]!;
        const old = before[i]!;
        const after = old + changesOf[i]!;
        amounts[i] = after;
        if (!defer) writeBalance(upserts, id, holder, after, counts[i]!);
        const holds = after > 0n;
        if (holds !== old > 0n && !NON_HOLDERS.has(holder)) change += holds ? 1 : -1;
      }
      const sum = balanceSumChange(deltas);
      if (!defer) sums.add(id, sum);
      writes.push({ id, holders, amounts, counts, sum });
      return change;
    });
    finishBalanceWrites(upserts);
    return { holderChanges, writes };
  }

  /**
   * Writes `amount` as the balance row of (`id`, `holder`) and adds `transfers` to its transfer
   * count: an upsert, or for a zero balance whose count did not grow (a rollback, NEO outputs)
   * an update that leaves a missing row missing, and a delete once no transfer names the holder.
   * A row stays at zero while its count is positive; a holder named by the batch has one.
   */
  function writeBalance(
    upserts: unknown[],
    id: number,
    holder: string,
    amount: bigint,
    transfers: number,
  ): void {
    if (amount === 0n && transfers <= 0) {
      const key: unknown[] = [id];
      pushHexParams(key, holder);
      sql.zeroBalance.run(transfers, ...key);
      sql.dropUnnamedBalance.run(key);
    } else if (!upsertIfHex(id, holder, amount, transfers)) {
      upserts.push(id);
      pushHexParams(upserts, holder);
      pushAmountParams(upserts, amount);
      upserts.push(transfers);
      pushRankParams(upserts, holder, amount);
    }
  }

  /** Runs the balance writes `writeBalance` buffered. */
  function finishBalanceWrites(upserts: unknown[]): void {
    flushBalanceRows();
    bulk.upsertBalances.run(upserts);
  }

  /**
   * Writes the chain's unwritten balances and marks its balances current; inside the write
   * transaction. The entries go from `unwritten` only once it commits (`cachingBalances`).
   */
  function writeUnwritten(chain: string, entries?: EntryPart): boolean {
    const entry = unwritten.get(chain);
    const batch = entries === undefined ? [] : [entries];
    if (entry === undefined) {
      addresses.write(batch);
      return false;
    }
    addresses.write([...entry.entries, ...batch]);
    writeBalanceRows(entry.count, () => {
      const upserts: unknown[] = [];
      // In key order (token id, then holder: the order of hex text is that of the bytes), so each
      // write lands next to the one before in the table and in balances_by_holder.
      for (const id of [...entry.balances.keys()].sort((a, b) => a - b)) {
        const holders = entry.balances.get(id)!;
        const counts = entry.counts.get(id);
        for (const holder of [...holders.keys()].sort()) {
          writeBalance(upserts, id, holder, holders.get(holder)!, counts?.get(holder) ?? 0);
        }
      }
      finishBalanceWrites(upserts);
    });
    for (const [id, sum] of entry.sums) sums.add(id, sum);
    sql.balancesCurrent.run(chain);
    return true;
  }

  /**
   * Brings the balances table of `chain` up to its checkpoint after unwritten balances were lost
   * (a crash, or the cache dropped): adds the stored transfers and balance changes above
   * `balancesBlock`, the block the table holds, token by token. Holder counts committed with those
   * batches already count them.
   */
  function replayBalances(chain: string, balancesBlock: number): void {
    const entries: EntryPart[] = [];
    const ids = new Set(sql.probeTokens.all(chain, balancesBlock));
    for (const id of changes?.tokensAbove(chain, balancesBlock) ?? []) ids.add(id);
    for (const id of ids) {
      entries.push(replayedEntries(chain, id, balancesBlock));
      const rows = sql.transfersAbove.all(id, balancesBlock);
      const deltas = netChanges(rows, decodeTransferRow, 1n);
      if (changes !== undefined) netBalanceChanges(changes.above(id, balancesBlock), (c) => c, 1n, deltas);
      applyDeltas(chain, [{ id, deltas, named: namedCounts(rows, decodeTransferRow, 1) }]);
    }
    addresses.write(entries, true);
    sql.balancesCurrent.run(chain);
  }

  /** The `address_transfers` entries of token `id`'s stored transfers above `block`. */
  function replayedEntries(chain: string, id: number, block: number): EntryPart {
    const rows = sql.partiesAbove.all(id, block);
    const named = distinctList();
    const parties = rows.map(([from, to]) => [named.indexOf(decodeHex(from)), named.indexOf(decodeHex(to))]);
    const ids = addresses.idsOf(chain, named.list);
    rows.forEach(([, , block, logIndex], i) => {
      const [from, to] = parties[i]!;
      addresses.add(ids[from!]!, id, block, logIndex);
      if (to !== from) addresses.add(ids[to!]!, id, block, logIndex);
    });
    return addresses.take();
  }

  const writeAllUnwrittenTx = db.transaction((): void => {
    validateBalanceCache(); // another connection's commit drops them: its next write replays instead
    discardBufferedRows();
    for (const chain of [...unwritten.keys()]) writeUnwritten(chain);
  });

  return {
    clearBalanceCache,
    validateBalanceCache,
    applyDeltas,
    writeUnwritten,
    // When the table lags the checkpoint and this connection does not hold the difference. First
    // thing in every write transaction that reads or writes balances.
    recoverBalances(chain, stored) {
      if (stored?.balances_block != null && !unwritten.has(chain))
        replayBalances(chain, stored.balances_block);
    },
    fitsUnwritten(chain, tokens, transfers) {
      const pending = unwritten.get(chain);
      return (
        (pending?.count ?? 0) +
          tokens.reduce((sum, token) => sum + token.deltas.size + (token.named?.size ?? 0), 0) <=
          MAX_UNWRITTEN_BALANCES && (pending?.transfers ?? 0) + transfers <= MAX_UNWRITTEN_TRANSFERS
      );
    },
    // A transaction that fails drops the cache.
    cachingBalances(apply) {
      let done: BatchBalances;
      try {
        done = apply();
      } catch (error) {
        clearBalanceCache();
        throw error;
      }
      rememberBalances(done.writes);
      if (done.flushed) unwritten.delete(done.chain);
      if (done.deferred) rememberUnwritten(done.chain, done);
    },
    close() {
      try {
        // Balances written behind the checkpoint go now; were this to fail, the next start replays them.
        if (unwritten.size > 0) writeAllUnwrittenTx.immediate();
      } finally {
        unwritten.clear();
      }
    },
  };
}
