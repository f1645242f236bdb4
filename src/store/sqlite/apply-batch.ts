/**
 * The SQLite writer's batch application: one IMMEDIATE transaction per batch that checks it
 * continues the checkpoint, gives its tokens ids, inserts its transfers, journals the blocks they
 * touch, and then (`finishBatch`) applies seeds, balances and holder counts, block refs, the NEO
 * part and the checkpoint. Two entries: a batch of transfer objects (`applyBatch`), and a batch as
 * the writer thread receives it, in columns (`applyWireBatch`, apply-wire.ts).
 */
import type Database from 'better-sqlite3';
import type { Logger } from '../../internal/logger.js';
import {
  admitNewToken,
  checkBatchStart,
  checkSeeds,
  planBatch,
  seedDeltas,
  type TokenWork,
} from '../batch-plan.js';
import { encodeRecentTransfers } from '../chain-activity.js';
import type { IndexBatch, SeedBalance, TransferRecord } from '../types.js';
import type { AddressEntries } from './address-transfers.js';
import type { BalanceChangeTable } from './balance-changes.js';
import type { Balances, BatchBalances } from './balances.js';
import { batchToWire, distinctList } from './batch-wire.js';
import { type BulkLoad, createBulkLoad } from './bulk-load.js';
import { type ChainRow, encodeHex, pushAmountParams, pushHexParams } from './codec.js';
import type { HexRows } from './hex-rows.js';
import { ROWS_PER_STATEMENT } from './multi-row.js';
import type { NeoTables } from './neo-tables.js';
import type { BulkStatements, Statements } from './statements.js';

/** What the batch steps work with: one connection's statements and the writer's other parts. */
export interface BatchContext {
  db: Database.Database;
  sql: Statements;
  bulk: BulkStatements;
  hexRows: HexRows;
  balances: Balances;
  neo: NeoTables;
  addresses: AddressEntries;
  /** Balance changes without a transfer (`IndexBatch.balanceChanges`). */
  changes: BalanceChangeTable;
  /** For the progress of long writes (a bulk load's build). */
  logger: Logger;
}

/** The steps a batch's transaction is made of, shared by the object path and the columnar one. */
export interface BatchSteps {
  /**
   * Opens a batch's write: the stored chain row, read under the write lock, checked against the
   * batch. A waiting bulk load the batch does not go on with is built first.
   */
  beginBatch(batch: Omit<IndexBatch, 'transfers'>): ChainRow | undefined;
  /** The bulk load (bulk-load.ts): a batch it `accepts` is appended instead of applied. */
  bulkLoad: BulkLoad;
  /**
   * The id of each token of `work`, in its order; a token met for the first time is inserted
   * from the batch's metadata, and its supply is marked to be read.
   */
  tokenIds(
    batch: Omit<IndexBatch, 'transfers'>,
    work: Map<string, TokenWork>,
  ): { ids: number[]; newTokens: number };
  /** The unfinalized window's journal of which tokens each block touched (see the schema notes). */
  blockJournal(batch: Omit<IndexBatch, 'transfers'>): { add(block: number, id: number): void; write(): void };
  /**
   * Everything of a batch after its transfers are inserted: seeds, balances and holder counts,
   * the tokens' counts and supply marks, block hashes, the NEO part, and the checkpoint.
   * `transferCounts` are per token of `work`; `recent` is the batch as far as
   * `encodeRecentTransfers` reads it.
   */
  finishBatch(
    batch: Omit<IndexBatch, 'transfers'>,
    stored: ChainRow | undefined,
    work: Map<string, TokenWork>,
    tokens: { ids: number[]; newTokens: number; transferCounts: number[] },
    recent: IndexBatch,
  ): BatchBalances;
}

/** Adds `t`'s parameters for the general multi-row insert of transfers (`bulk.insertTransfers`). */
export function pushTransferParams(rows: unknown[], id: number, t: Omit<TransferRecord, 'token'>): void {
  rows.push(id, t.blockNumber, t.logIndex, t.txIndex);
  pushHexParams(rows, t.txHash);
  pushHexParams(rows, t.from);
  pushHexParams(rows, t.to);
  pushAmountParams(rows, t.value);
  rows.push(t.time);
}

export function createBatchSteps(context: BatchContext): BatchSteps {
  const { sql, bulk, hexRows, balances, neo, addresses } = context;

  /**
   * Records the batch's starting balances and adds those of pairs not seeded before to the
   * holders' balance changes, so `applyDeltas` applies them with the transfers.
   */
  function addSeeds(
    seeds: SeedBalance[],
    ids: ReadonlyMap<string, number>,
    work: Map<string, TokenWork>,
  ): void {
    const seeded = seedDeltas(seeds, (token) => ids.get(token)!, work);
    const params: unknown[] = [];
    seeds.forEach((seed, i) => {
      params.push(seeded.tokenIds[i]);
      pushHexParams(params, seed.holder);
      pushAmountParams(params, seed.amount);
    });
    for (let start = 0; start < seeds.length; start += ROWS_PER_STATEMENT) {
      const rows = Math.min(ROWS_PER_STATEMENT, seeds.length - start);
      const part = params.slice(start * 5, (start + rows) * 5);
      for (const [id, holder] of bulk.insertSeeds.all(rows, part) as [number, string][]) {
        seeded.recorded(id, holder);
      }
    }
  }

  const steps: BatchSteps = {
    beginBatch(batch) {
      hexRows.discardBufferedRows();
      addresses.discard();
      balances.validateBalanceCache();
      // Read inside the write transaction, so the check and the write cannot interleave with another writer.
      let stored = sql.getChain.get(batch.chain);
      checkBatchStart(batch, stored?.indexed_block);
      if (stored?.bulk_block != null) {
        if (bulkLoad.accepts(batch, stored)) return stored;
        bulkLoad.build(batch.chain, stored);
        stored = sql.getChain.get(batch.chain);
      }
      balances.recoverBalances(batch.chain, stored);
      return stored;
    },

    get bulkLoad() {
      return bulkLoad;
    },

    tokenIds(batch, work) {
      const { chain } = batch;
      const metadata = new Map(batch.tokens.map((token) => [token.address, token]));
      const ids: number[] = [];
      let newTokens = 0;
      for (const token of work.values()) {
        const address = encodeHex(token.address);
        let id = sql.tokenId.get(chain, address);
        if (id === undefined) {
          const meta = admitNewToken(chain, metadata, token);
          id = Number(
            sql.insertToken.run(chain, address, meta.name, meta.symbol, meta.decimals, token.firstBlock)
              .lastInsertRowid,
          );
          newTokens++;
        }
        ids.push(id);
      }
      return { ids, newTokens };
    },

    blockJournal(batch) {
      const seen = new Set<string>();
      const rows: unknown[] = [];
      return {
        add(block, id) {
          if (block < batch.pruneBlocksBelow) return;
          const entry = `${block}:${id}`;
          if (!seen.has(entry)) {
            seen.add(entry);
            rows.push(batch.chain, block, id);
          }
        },
        write: () => bulk.insertJournal.run(rows),
      };
    },

    finishBatch(batch, stored, work, tokens, recent) {
      const { chain } = batch;
      const { ids } = tokens;
      const list = [...work.values()];
      const seeds = checkSeeds(
        batch,
        { indexedBlock: stored?.indexed_block ?? null, seedBlock: stored?.seed_block ?? null },
        work,
      );
      if (seeds.length > 0) addSeeds(seeds, new Map(list.map((token, i) => [token.address, ids[i]!])), work);
      const transferCount = tokens.transferCounts.reduce((sum, n) => sum + n, 0);
      // Seeds and NEO batches write their balances at once: a replay adds transfers, nothing else.
      const deferred =
        batch.deferBalances === true &&
        batch.neo === undefined &&
        seeds.length === 0 &&
        balances.fitsUnwritten(chain, list, transferCount);
      // The batch's address entries wait with its balances, or go with the unwritten ones.
      const entries = addresses.take();
      const flushed = !deferred && balances.writeUnwritten(chain, entries);
      const { holderChanges, writes } = balances.applyDeltas(
        chain,
        list.map((token, i) => ({ id: ids[i]!, deltas: token.deltas, named: token.named })),
        deferred,
      );
      list.forEach((token, i) => {
        sql.tokenAfterBatch.run({
          holders: holderChanges[i],
          transfers: tokens.transferCounts[i],
          dirty: token.dirtyBlock,
          id: ids[i],
        });
      });

      for (const ref of batch.blocks) {
        sql.upsertBlockRef.run(chain, ref.number, encodeHex(ref.hash), encodeHex(ref.parentHash));
      }
      sql.pruneBlockRefs.run(chain, batch.pruneBlocksBelow);
      sql.pruneJournal.run(chain, batch.pruneBlocksBelow);
      if (batch.neo !== undefined) neo.write(chain, batch.neo);
      sql.afterBatch.run({
        chain,
        block: batch.toBlock,
        hash: batch.toBlockHash === null ? null : encodeHex(batch.toBlockHash),
        head: batch.head,
        now: Date.now(),
        newTokens: tokens.newTokens,
        floor: batch.pruneBlocksBelow,
        transfers: transferCount,
        recent: encodeRecentTransfers(recent, stored?.recent_transfers ?? null),
        seedBlock: batch.seeds?.block ?? null,
        partial: batch.seeds?.partial === true ? 1 : 0,
        // Deferred: the table holds what it held before this batch (kept if already behind).
        balancesFrom: deferred ? (stored?.indexed_block ?? batch.fromBlock - 1) : null,
      });
      return {
        chain,
        writes,
        deferred,
        flushed,
        transfers: transferCount,
        ...(deferred ? { entries } : {}),
      };
    },
  };
  const bulkLoad = createBulkLoad(context, steps);
  return steps;
}

/**
 * Buffers the `address_transfers` entries of the transfers of `work` (token ids `ids`, in its
 * order): one per address a transfer names, a self-transfer once. `finishBatch` writes them.
 */
function writeAddressEntries(
  addresses: AddressEntries,
  chain: string,
  work: Map<string, TokenWork>,
  ids: readonly number[],
): void {
  const named = distinctList();
  for (const token of work.values()) {
    for (const t of token.transfers) {
      named.indexOf(t.from);
      named.indexOf(t.to);
    }
  }
  const addressIds = addresses.idsOf(chain, named.list);
  let k = 0;
  for (const token of work.values()) {
    const id = ids[k++]!;
    for (const t of token.transfers) {
      addresses.add(addressIds[named.indexOf(t.from)]!, id, t.blockNumber, t.logIndex);
      if (t.to !== t.from) addresses.add(addressIds[named.indexOf(t.to)]!, id, t.blockNumber, t.logIndex);
    }
  }
}

/** A batch's transaction, from its transfer objects; runs it with `.immediate`. */
export function createApplyBatchTx(context: BatchContext, steps: BatchSteps) {
  const { db, bulk, hexRows, addresses, changes } = context;
  const { insertIfHex, flushHexRows } = hexRows;
  const { beginBatch, tokenIds, blockJournal, finishBatch, bulkLoad } = steps;
  return db.transaction((batch: IndexBatch): BatchBalances => {
    const stored = beginBatch(batch);
    if (bulkLoad.accepts(batch, stored)) return bulkLoad.append(batchToWire(batch), stored);
    const work = planBatch(batch);
    const { ids, newTokens } = tokenIds(batch, work);
    const journal = blockJournal(batch);
    const transferRows: unknown[] = [];
    const transferCounts: number[] = [];
    let k = 0;
    for (const token of work.values()) {
      const id = ids[k++]!;
      transferCounts.push(token.transfers.length);
      for (const t of token.transfers) {
        if (!insertIfHex(id, t)) pushTransferParams(transferRows, id, t);
        journal.add(t.blockNumber, id);
      }
    }
    flushHexRows();
    bulk.insertTransfers.run(transferRows);
    writeAddressEntries(addresses, batch.chain, work, ids);
    changes.insert(work, ids, journal);
    journal.write();
    return finishBatch(batch, stored, work, { ids, newTokens, transferCounts }, batch);
  });
}
