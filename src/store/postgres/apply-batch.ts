/**
 * `applyBatch` of the PostgreSQL store: the batch's plan (batch-plan.ts) written in one
 * transaction, a few bulk statements per batch whatever its size: token ids (known ones read,
 * new ones inserted), starting balances, transfers, the rollback journal, the net balance and
 * counter changes (shared with rollback.ts), block refs, the NEO tables, then the checkpoint.
 */
import type pg from 'pg';
import type { Logger } from '../../internal/logger.js';
import { balanceSumChange } from '../balance-sums.js';
import {
  admitNewToken,
  checkBatchStart,
  checkSeeds,
  NON_HOLDERS,
  planBatch,
  seedDeltas,
  type TokenWork,
} from '../batch-plan.js';
import { batchTransferCount, encodeRecentTransfers, needsStoredRecent } from '../chain-activity.js';
import type { BlockRef, IndexBatch, SeedBalance, TokenMetadata } from '../types.js';
import { boolArray, byteaArray, int4Array, int8Array, numericArray } from './binary-arrays.js';
import { copyBalanceChanges, copyTransfers, stageChanges, type TransferColumns } from './bulk-copy.js';
import { acceptsBulk, afterBulkBatch, appendBulkTransfers, buildBulkLoad } from './bulk-load.js';
import { ensureChainPartition } from './chain-partitions.js';
import { decodeHex, encodeHex, encodeHexDigits, encodeText } from './codec.js';
import { writeNeoPart } from './neo-tables.js';
import { run, runnerOn } from './statements.js';
import type { LockChain } from './transactions.js';

/** What a batch or a rollback does to one surviving token. */
export interface TokenChange {
  id: number;
  deltas: Map<string, bigint>;
  /** Change of each holder's transfer count (see {@link countNamed}). */
  named: Map<string, number>;
  /** Transfers added (negative: removed). */
  transfers: number;
  /** Block of the supply mark, or null for none. */
  dirty: number | null;
}

/**
 * Adds `sign` to the transfer count of each address a transfer from `from` to `to` names: both,
 * or one for a self-transfer (types.ts, `AddressHolding.transferCount`).
 */
export function countNamed(named: Map<string, number>, from: string, to: string, sign: 1 | -1): void {
  named.set(from, (named.get(from) ?? 0) + sign);
  if (to !== from) named.set(to, (named.get(to) ?? 0) + sign);
}

/**
 * Runs `prepare` (encoding the next statement's parameters) while `inFlight` (the statement
 * before it) executes on the server, then waits for `inFlight`. One connection runs one statement
 * at a time, so this is the overlap there is: the server works while this thread encodes. When
 * `prepare` throws, `inFlight` is still waited for, so that the caller's ROLLBACK follows it.
 */
async function overlap<T>(inFlight: Promise<unknown> | undefined, prepare: () => T): Promise<T> {
  let prepared: T;
  try {
    prepared = prepare();
  } catch (error) {
    await inFlight?.catch(() => {});
    throw error;
  }
  await inFlight;
  return prepared;
}

/** The rows of `applyChanges`: one per (token, holder) that changes, and one per token. */
export interface ChangeRows {
  tokenIds: number[];
  /** Hex digits of the stored bytes (codec.ts). */
  holders: string[];
  deltas: bigint[];
  /** The holder counts as a holder (not the zero address or `""`). */
  counts: boolean[];
  namedCounts: number[];
  /** Per token: its id, transfers added, supply mark block. */
  ids: number[];
  transfers: number[];
  dirty: (number | null)[];
  /** Per token: what its changes add to its running sum (store/balance-sums.ts). */
  sums: bigint[];
}

/** The rows of the net balance changes and counter updates of the given tokens (`applyChanges`). */
export function changeRows(
  changes: TokenChange[],
  encoded: (address: string) => string = encodeHexDigits,
): ChangeRows {
  const out: ChangeRows = {
    tokenIds: [],
    holders: [],
    deltas: [],
    counts: [],
    namedCounts: [],
    ids: changes.map((c) => c.id),
    transfers: changes.map((c) => c.transfers),
    dirty: changes.map((c) => c.dirty),
    sums: changes.map((c) => balanceSumChange(c.deltas)),
  };
  for (const { id, deltas: map, named } of changes) {
    const rows: [string, bigint, boolean, number][] = [];
    // Only the rows that change: a balance that moves, or a holder a transfer names.
    for (const [holder, delta] of map) {
      const times = named.get(holder) ?? 0;
      if (delta !== 0n || times !== 0) rows.push([encoded(holder), delta, !NON_HOLDERS.has(holder), times]);
    }
    for (const [holder, times] of named) {
      if (times !== 0 && !map.has(holder)) rows.push([encoded(holder), 0n, !NON_HOLDERS.has(holder), times]);
    }
    // Sorted keys walk the (token_id, holder) B-tree in order.
    rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [holder, delta, count, times] of rows) {
      out.tokenIds.push(id);
      out.holders.push(holder);
      out.deltas.push(delta);
      out.counts.push(count);
      out.namedCounts.push(times);
    }
  }
  return out;
}

/**
 * Parameters of the statement that applies net balance changes and counter updates for the
 * given tokens (`applyChanges`). `replaceDirty` sets the supply mark (rollback) instead of
 * raising it (batch).
 */
export function prepareChanges(
  changes: TokenChange[] | ChangeRows,
  replaceDirty: boolean,
  encoded: (address: string) => string = encodeHexDigits,
): unknown[] {
  const rows = Array.isArray(changes) ? changeRows(changes, encoded) : changes;
  return [
    int4Array(rows.tokenIds),
    byteaArray(rows.holders),
    numericArray(rows.deltas),
    boolArray(rows.counts),
    int4Array(rows.ids),
    int8Array(rows.transfers),
    int8Array(rows.dirty),
    replaceDirty,
    int8Array(rows.namedCounts),
    // What each token's changes add to its running sum (store/balance-sums.ts).
    numericArray(rows.sums),
  ];
}

/** Runs `applyChanges`, then deletes the balance rows left with nothing (no amount, no transfer). */
export async function executeChanges(client: pg.PoolClient, params: unknown[]): Promise<void> {
  const emptied = await run<EmptiedRow>(client, 'applyChanges', params);
  await deleteEmptied(client, emptied.rows);
}

/** A balance row `applyChanges` left with no amount and no transfer. */
export interface EmptiedRow {
  token_id: number;
  holder: string;
}

/** Deletes the balance rows `applyChanges` answered as emptied. */
export async function deleteEmptied(client: pg.PoolClient, emptied: readonly EmptiedRow[]): Promise<void> {
  if (emptied.length > 0) {
    await run(client, 'deleteEmptied', [
      int4Array(emptied.map((r) => r.token_id)),
      byteaArray(emptied.map((r) => r.holder.slice(2))),
    ]);
  }
}

/**
 * Applies `batch` in `client`'s transaction, under the chain's write lock (`lockChain`). Tables
 * that get at least `copyFromRows` rows from it are written with binary `COPY` (bulk-copy.ts). A
 * bulk load's batch only appends its transfers (bulk-load.ts); any other batch of a chain whose
 * load waits builds the load first (`logger` shows its progress).
 */
export async function applyBatchIn(
  client: pg.PoolClient,
  lockChain: LockChain,
  batch: IndexBatch,
  copyFromRows: number,
  logger: Logger,
): Promise<void> {
  const { chain } = batch;
  // Read under the chain's write lock, so the check and the write cannot interleave with another writer.
  const stored = await lockChain(client, chain);
  checkBatchStart(batch, stored?.indexed_block);
  const bulk = acceptsBulk(batch, stored);
  if (!bulk && stored?.bulk_block != null) await buildBulkLoad(client, chain, stored, logger);
  const work = planBatch(batch);
  const seeds = checkSeeds(
    batch,
    { indexedBlock: stored?.indexed_block ?? null, seedBlock: stored?.seed_block ?? null },
    work,
  );

  // Addresses repeat across transfers and balance keys: encode each once per batch.
  const encodedCache = new Map<string, string>();
  const encode = (value: string): string => {
    let digits = encodedCache.get(value);
    if (digits === undefined) {
      digits = encodeHexDigits(value);
      encodedCache.set(value, digits);
    }
    return digits;
  };

  // Token ids: the known ones in one read, the new ones in one insert.
  const tokens = [...work.values()];
  const ids = new Map<string, number>();
  let newTokens = 0;
  if (tokens.length > 0) {
    const known = await run<{ id: number; address: string }>(client, 'knownTokens', [
      chain,
      byteaArray(tokens.map((t) => encode(t.address))),
    ]);
    for (const row of known.rows) ids.set(row.address.slice(2), row.id);
    const metadata = new Map(batch.tokens.map((token) => [token.address, token]));
    const fresh: TokenWork[] = [];
    const admitted: TokenMetadata[] = [];
    for (const token of tokens) {
      if (ids.has(encode(token.address))) continue;
      admitted.push(admitNewToken(chain, metadata, token));
      fresh.push(token);
    }
    if (fresh.length > 0) {
      await ensureChainPartition(client, chain);
      const inserted = await run<{ id: number; address: string }>(client, 'insertTokens', [
        chain,
        byteaArray(fresh.map((t) => encode(t.address))),
        byteaArray(admitted.map((m) => encodeText(m.name).slice(2))),
        byteaArray(admitted.map((m) => encodeText(m.symbol).slice(2))),
        int8Array(admitted.map((m) => m.decimals)),
        int8Array(fresh.map((t) => t.firstBlock)),
      ]);
      for (const row of inserted.rows) ids.set(row.address.slice(2), row.id);
      newTokens = fresh.length;
    }
  }

  if (seeds.length > 0) await addSeeds(client, seeds, ids, work, encode);

  const journalFrom = batch.pruneBlocksBelow;
  // Every transfer of the work: the batch's own and, on NEO, its asset transfers.
  let count = 0;
  for (const token of tokens) count += token.transfers.length;
  const columns: TransferColumns = {
    tokenId: new Array<number>(count),
    logIndex: new Array<number>(count),
    block: new Array<number>(count),
    time: new Array<number>(count),
    txIndex: new Array<number>(count),
    txHash: new Array<string>(count),
    from: new Array<string>(count),
    to: new Array<string>(count),
    value: new Array<bigint>(count),
  };
  const journal = new Set<string>();
  const journalBlocks: number[] = [];
  const journalTokens: number[] = [];
  const changes: TokenChange[] = [];
  let row = 0;
  // Grouped by token, in chain order within each: a token's rows of one batch share heap pages.
  for (const token of tokens) {
    const id = ids.get(encode(token.address))!;
    const named = new Map<string, number>();
    changes.push({
      id,
      deltas: token.deltas,
      named,
      transfers: token.transfers.length,
      dirty: token.dirtyBlock,
    });
    for (const t of token.transfers) {
      if (!bulk) countNamed(named, t.from, t.to, 1);
      columns.tokenId[row] = id;
      columns.logIndex[row] = t.logIndex;
      columns.block[row] = t.blockNumber;
      columns.time[row] = t.time;
      columns.txIndex[row] = t.txIndex;
      columns.txHash[row] = encodeHexDigits(t.txHash);
      columns.from[row] = encode(t.from);
      columns.to[row] = encode(t.to);
      columns.value[row] = t.value;
      row++;
      if (t.blockNumber >= journalFrom) {
        const entry = `${t.blockNumber}:${id}`;
        if (!journal.has(entry)) {
          journal.add(entry);
          journalBlocks.push(t.blockNumber);
          journalTokens.push(id);
        }
      }
    }
  }
  // One statement is in flight while this thread encodes the parameters of the next (see overlap()).
  const inserting =
    count === 0
      ? undefined
      : bulk
        ? appendBulkTransfers(client, columns, count)
        : count >= copyFromRows
          ? copyTransfers(client, chain, columns, count)
          : run(client, 'insertTransfers', [
              int4Array(columns.tokenId),
              int4Array(columns.logIndex),
              int8Array(columns.block),
              int8Array(columns.time),
              int4Array(columns.txIndex),
              byteaArray(columns.txHash),
              byteaArray(columns.from),
              byteaArray(columns.to),
              numericArray(columns.value),
              chain,
            ]);
  // Encoded while the transfers are written: the rows, and the array parameters unless COPYed.
  const changed = await overlap(inserting, (): { staged: ChangeRows } | { params: unknown[] } | null => {
    // A bulk batch's balances and counts are the build's; its supply marks are written below.
    if (changes.length === 0 || bulk) return null;
    const rows = changeRows(changes, encode);
    return rows.tokenIds.length >= copyFromRows ? { staged: rows } : { params: prepareChanges(rows, false) };
  });
  const balanceChanges = tokens.flatMap((token) => token.changes);
  if (balanceChanges.length > 0) {
    const tokenIds = balanceChanges.map((c) => ids.get(encode(c.token))!);
    if (balanceChanges.length >= copyFromRows) {
      await copyBalanceChanges(client, balanceChanges, tokenIds, encode);
    } else {
      await run(client, 'insertBalanceChanges', [
        int4Array(tokenIds),
        int4Array(balanceChanges.map((c) => c.logIndex)),
        int8Array(balanceChanges.map((c) => c.blockNumber)),
        byteaArray(balanceChanges.map((c) => encode(c.holder))),
        numericArray(balanceChanges.map((c) => c.amount)),
      ]);
    }
    // Journaled like transfers, so a rollback finds their tokens.
    balanceChanges.forEach((c, i) => {
      const entry = `${c.blockNumber}:${tokenIds[i]}`;
      if (c.blockNumber >= journalFrom && !journal.has(entry)) {
        journal.add(entry);
        journalBlocks.push(c.blockNumber);
        journalTokens.push(tokenIds[i]!);
      }
    });
  }
  if (journalBlocks.length > 0) {
    await run(client, 'insertJournal', [chain, int8Array(journalBlocks), int4Array(journalTokens)]);
  }
  const changing =
    changed === null
      ? undefined
      : 'staged' in changed
        ? stageChanges(client, changed.staged).then((emptied) => deleteEmptied(client, emptied))
        : executeChanges(client, changed.params);
  const refParams = await overlap(changing, () => {
    if (batch.blocks.length === 0) return null;
    // Last one wins when a block appears twice, as with SQLite's row-by-row upsert.
    const refs = new Map<number, BlockRef>();
    for (const ref of batch.blocks) refs.set(ref.number, ref);
    const list = [...refs.values()];
    return [
      chain,
      int8Array(list.map((r) => r.number)),
      byteaArray(list.map((r) => encodeHexDigits(r.hash))),
      byteaArray(list.map((r) => encodeHexDigits(r.parentHash))),
    ];
  });
  if (refParams !== null) await run(client, 'upsertBlockRefs', refParams);
  if (batch.neo !== undefined) {
    await writeNeoPart(runnerOn(client), chain, batch.neo);
  }
  // A small batch tops its newest transfers up with those stored before it (the chain is locked).
  const storedRecent = needsStoredRecent(batch)
    ? ((await run<{ recent_transfers: string | null }>(client, 'chainActivity', [chain])).rows[0]
        ?.recent_transfers ?? null)
    : null;
  await run(client, 'afterBatch', [
    chain,
    batch.toBlock,
    batch.toBlockHash === null ? null : encodeHex(batch.toBlockHash),
    batch.head,
    Date.now(),
    newTokens,
    batch.pruneBlocksBelow,
    batchTransferCount(batch),
    encodeRecentTransfers(batch, storedRecent),
    batch.seeds?.block ?? null,
    batch.seeds?.partial === true,
  ]);
  // After `afterBatch`, which makes the chain's row on its first batch.
  if (bulk) {
    // The tables hold the chain as it was before the load's first batch.
    const before = stored?.bulk_block ?? stored?.indexed_block ?? batch.fromBlock - 1;
    await afterBulkBatch(client, chain, before, {
      ids: changes.map((c) => c.id),
      blocks: changes.map((c) => c.dirty),
    });
  }
}

/**
 * Records the batch's starting balances and adds those of pairs not seeded before to the
 * holders' balance changes, so `applyChanges` applies them with the transfers.
 */
async function addSeeds(
  client: pg.PoolClient,
  seeds: SeedBalance[],
  ids: ReadonlyMap<string, number>,
  work: Map<string, TokenWork>,
  encode: (address: string) => string,
): Promise<void> {
  const seeded = seedDeltas(seeds, (token) => ids.get(encode(token))!, work);
  const inserted = await run<{ token_id: number; holder: string }>(client, 'insertSeeds', [
    int4Array(seeded.tokenIds),
    byteaArray(seeds.map((seed) => encode(seed.holder))),
    numericArray(seeds.map((seed) => seed.amount)),
  ]);
  for (const row of inserted.rows) seeded.recorded(row.token_id, decodeHex(row.holder));
}
