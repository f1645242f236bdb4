/**
 * The SQLite store's `writer` part: batches (apply-batch.ts, apply-wire.ts), rollbacks
 * (rollback.ts), supplies, chain status and the few reads the indexer decides by. The writer
 * thread (writer-thread.ts) replaces this part with one that sends the writes to its own
 * connection, where this same part applies them.
 */
import { dirtyThenStale } from '../supply-reads.js';
import type {
  ExactnessUpdate,
  HistoryScans,
  NeoReader,
  StoreReader,
  StoreWriter,
  SupplyUpdate,
} from '../types.js';
import { type BatchContext, createApplyBatchTx, createBatchSteps } from './apply-batch.js';
import { createApplyWireTx } from './apply-wire.js';
import { batchFromWire, type WireBatch } from './batch-wire.js';
import { decodeHex, encodeHex, encodeNullableAmount, pushHexParams } from './codec.js';
import { ROWS_PER_STATEMENT } from './multi-row.js';
import { createRollback } from './rollback.js';

/** The SQLite store's writer, with what its writer thread alone uses of it. */
export interface SqliteWriter extends StoreWriter {
  /** `applyBatch` of a batch as the writer thread receives it, without a transfer object each. */
  applyWireBatch(wire: WireBatch): Promise<void>;
}

/** Builds the writer part over one connection; `reader` and `neoReader` answer its reads. */
export function createWriter(
  context: BatchContext,
  reader: Pick<StoreReader, 'getChainStatus' | 'getToken' | 'listHolders' | 'getBalance' | 'getBalanceSum'>,
  scans: Pick<HistoryScans, 'negativeBalances' | 'scanHoldings' | 'scanBalanceChanges'>,
  neoReader: Pick<NeoReader, 'getNeoToken'>,
): SqliteWriter {
  const { db, sql, bulk, balances, neo } = context;
  const steps = createBatchSteps(context);
  const applyBatchTx = createApplyBatchTx(context, steps);
  const applyWireTx = createApplyWireTx(context, steps);
  /**
   * A waiting bulk load that `batch` does not go on with is built before the batch's
   * transaction, in chunks that commit on their own (bulk-build.ts). Read without the write
   * lock: each chunk checks again under it, and the batch's own check still builds (inside its
   * transaction) whatever another writer left meanwhile.
   */
  const buildBefore = (batch: Parameters<typeof steps.bulkLoad.accepts>[0] | null, chain: string): void => {
    const stored = sql.getChain.get(chain);
    if (stored?.bulk_block == null || (batch !== null && steps.bulkLoad.accepts(batch, stored))) return;
    try {
      steps.bulkLoad.build(chain, stored);
    } finally {
      balances.clearBalanceCache();
    }
  };

  const rollback = createRollback(context, steps.bulkLoad);

  const updateSuppliesTx = db.transaction((chain: string, updates: SupplyUpdate[]): void => {
    for (const update of updates) {
      sql.updateSupply.run({
        chain,
        address: encodeHex(update.address),
        totalSupply: encodeNullableAmount(update.totalSupply),
        cap: encodeNullableAmount(update.cap),
        burnedBalance: encodeNullableAmount(update.burnedBalance),
        atBlock: update.atBlock,
      });
    }
  });

  const setExactnessTx = db.transaction((chain: string, updates: readonly ExactnessUpdate[]): void => {
    for (const { address, mark } of updates) {
      sql.setExactness.run({
        chain,
        address: encodeHex(address),
        atBlock: mark?.atBlock ?? null,
        drift: mark?.supplyDrift.toString() ?? null,
        sampled: mark?.sampled ?? null,
        differing: mark?.differing ?? null,
      });
    }
  });

  return {
    async getCheckpoint(chain) {
      const row = sql.getChain.get(chain);
      if (row?.indexed_block == null) return null;
      return {
        block: row.indexed_block,
        hash: row.indexed_hash === null ? null : decodeHex(row.indexed_hash),
      };
    },

    // IMMEDIATE: the transaction takes the write lock up front, so a concurrent writer waits on
    // busy_timeout instead of failing with SQLITE_BUSY when a read lock would be upgraded.
    async applyBatch(batch) {
      buildBefore(batch, batch.chain);
      balances.cachingBalances(() => applyBatchTx.immediate(batch));
    },

    async applyWireBatch(wire: WireBatch): Promise<void> {
      // The NEO part's transfers and outputs are planned from objects (`planBatch`).
      if (wire.neo !== undefined) return this.applyBatch(batchFromWire(wire));
      buildBefore(wire, wire.chain);
      balances.cachingBalances(() => applyWireTx.immediate(wire));
    },

    async getBlockRefs(chain, from, to) {
      return sql.blockRefs.all(chain, from, to).map((row) => ({
        number: row.number,
        hash: decodeHex(row.hash),
        parentHash: decodeHex(row.parent_hash),
      }));
    },

    rollback: async (chain, toBlock, toBlockHash) => {
      buildBefore(null, chain);
      return rollback(chain, toBlock, toBlockHash);
    },

    tokensNeedingSupply(chain, staleBefore, limit) {
      return dirtyThenStale(
        limit,
        (n) => sql.dirtyTokens.all(chain, n),
        (n) => sql.staleTokens.all(chain, staleBefore, n),
        decodeHex,
      );
    },

    async updateSupplies(chain, updates) {
      updateSuppliesTx.immediate(chain, updates);
    },

    async setExactness(chain, updates) {
      setExactnessTx.immediate(chain, updates);
    },

    async refreshStatistics() {
      // A bounded sample per index (SQLite's own recommendation for `optimize`), so that a
      // large store is analyzed in about a second; 0x10002 checks every table, not only those
      // this connection has queried.
      db.pragma('analysis_limit = 1000');
      db.pragma('optimize = 0x10002');
    },

    async seededHolders(chain, pairs) {
      const out = new Array<boolean>(pairs.length).fill(false);
      const byToken = new Map<string, number[]>();
      pairs.forEach(({ token }, i) => {
        const list = byToken.get(token);
        if (list === undefined) byToken.set(token, [i]);
        else list.push(i);
      });
      for (const [token, positions] of byToken) {
        const id = sql.tokenId.get(chain, encodeHex(token));
        if (id === undefined) continue;
        for (let start = 0; start < positions.length; start += ROWS_PER_STATEMENT) {
          const part = positions.slice(start, start + ROWS_PER_STATEMENT);
          const params: unknown[] = [];
          for (const i of part) pushHexParams(params, pairs[i]!.holder);
          params.push(id);
          for (const [position] of bulk.readSeeded.all(part.length, params))
            out[part[position as number]!] = true;
        }
      }
      return out;
    },

    async setChainStatus(chain, status) {
      sql.setStatus.run({
        chain,
        head: status.head ?? null,
        setError: status.lastError === undefined ? 0 : 1,
        lastError: status.lastError ?? null,
        now: Date.now(),
      });
    },

    async getNeoOutputs(chain, refs) {
      return neo.getOutputs(chain, refs);
    },

    getChainStatus: reader.getChainStatus,
    getToken: reader.getToken,
    listHolders: reader.listHolders,
    getBalanceSum: reader.getBalanceSum,
    negativeBalances: scans.negativeBalances,
    getBalance: reader.getBalance,
    scanHoldings: scans.scanHoldings,
    scanBalanceChanges: scans.scanBalanceChanges,
    getNeoToken: neoReader.getNeoToken,
  };
}
