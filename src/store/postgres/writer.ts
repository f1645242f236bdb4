/**
 * The PostgreSQL store's writer part, what the indexer writes through: batches, rollbacks and
 * supplies each in a write transaction (transactions.ts), the status outside one, and the few
 * reads the indexer decides by. A writer lease's writer is the same with a `fence`: every write
 * of its chain is fenced (writer-election.ts).
 */
import type pg from 'pg';
import { TokenqueryError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import type {
  BlockRef,
  Checkpoint,
  ExactnessUpdate,
  HistoryScans,
  IndexBatch,
  NeoOutputRow,
  NeoReader,
  RollbackResult,
  StoreReader,
  StoreWriter,
  SupplyUpdate,
} from '../types.js';
import { applyBatchIn } from './apply-batch.js';
import { byteaArray } from './binary-arrays.js';
import { type ChainRow, decodeHex, encodeHexDigits, storableMessage } from './codec.js';
import { getNeoOutputs } from './neo-tables.js';
import { rollbackIn } from './rollback.js';
import { run, runnerOn } from './statements.js';
import { setExactnessIn, tokensNeedingSupply, updateSuppliesIn } from './supplies.js';
import type { WriteTransactions } from './transactions.js';
import type { WriteFence } from './writer-election.js';

/**
 * The writer over `pool`; its reads of statuses, tokens and NEO tokens are `reader`'s and `neo`'s.
 * Batch tables of at least `copyFromRows` rows are written with `COPY` (bulk-copy.ts); `logger`
 * shows the progress of a bulk load's build (bulk-load.ts). With a `fence` (a writer lease's), each write checks that the lease is still the newest election
 * of its chain, and writes no other chain.
 */
export function createWriter(
  pool: pg.Pool,
  { transaction, lockChain }: WriteTransactions,
  reader: StoreReader,
  scans: Pick<HistoryScans, 'negativeBalances' | 'scanHoldings' | 'scanBalanceChanges'>,
  neo: NeoReader,
  copyFromRows: number,
  logger: Logger,
  fence?: WriteFence,
): StoreWriter {
  const onPool = runnerOn(pool);
  return {
    async getCheckpoint(chain: string): Promise<Checkpoint | null> {
      const row = (await run<ChainRow>(pool, 'getChain', [chain])).rows[0];
      if (row?.indexed_block == null) return null;
      return {
        block: row.indexed_block,
        hash: row.indexed_hash === null ? null : decodeHex(row.indexed_hash),
      };
    },

    async applyBatch(batch: IndexBatch): Promise<void> {
      await transaction((client) => applyBatchIn(client, lockChain, batch, copyFromRows, logger), fence);
    },

    async getBlockRefs(chain: string, from: number, to: number): Promise<BlockRef[]> {
      const result = await run<{ number: number; hash: string; parent_hash: string }>(pool, 'blockRefs', [
        chain,
        from,
        to,
      ]);
      return result.rows.map((row) => ({
        number: row.number,
        hash: decodeHex(row.hash),
        parentHash: decodeHex(row.parent_hash),
      }));
    },

    async rollback(chain: string, toBlock: number, toBlockHash: string | null): Promise<RollbackResult> {
      return transaction(
        (client) => rollbackIn(client, lockChain, chain, toBlock, toBlockHash, logger),
        fence,
      );
    },

    async tokensNeedingSupply(chain: string, staleBefore: number, limit: number): Promise<string[]> {
      return tokensNeedingSupply(pool, chain, staleBefore, limit);
    },

    async updateSupplies(chain: string, updates: SupplyUpdate[]): Promise<void> {
      if (updates.length === 0) return;
      await transaction((client) => updateSuppliesIn(client, lockChain, chain, updates), fence);
    },

    async setExactness(chain: string, updates: readonly ExactnessUpdate[]): Promise<void> {
      if (updates.length === 0) return;
      await transaction((client) => setExactnessIn(client, lockChain, chain, updates), fence);
    },

    async setChainStatus(chain: string, status: { head?: number; lastError?: string | null }): Promise<void> {
      const values = [
        chain,
        status.head ?? null,
        storableMessage(status.lastError ?? null),
        status.lastError !== undefined,
        Date.now(),
      ];
      if (fence === undefined) {
        await run(pool, 'setStatus', values);
        return;
      }
      if (chain !== fence.chain) {
        throw new TokenqueryError(`a writer lease of ${fence.chain} cannot write ${chain}`);
      }
      fence.assertHeld();
      const result = await run(pool, 'setStatusFenced', [...values, fence.epoch]);
      if ((result.rowCount ?? 0) === 0) throw fence.superseded(null);
    },

    async refreshStatistics(): Promise<void> {
      // The tables whose plans depend on their size; ANALYZE samples, so this is seconds at any size.
      await pool.query(
        'ANALYZE tokens, transfers, balances, balance_changes, address_transfers, seed_balances',
      );
    },

    async seededHolders(chain, pairs): Promise<boolean[]> {
      const out = new Array<boolean>(pairs.length).fill(false);
      if (pairs.length === 0) return out;
      const result = await run<{ ord: number }>(pool, 'seededHolders', [
        chain,
        byteaArray(pairs.map((p) => encodeHexDigits(p.token))),
        byteaArray(pairs.map((p) => encodeHexDigits(p.holder))),
      ]);
      for (const row of result.rows) out[row.ord - 1] = true;
      return out;
    },
    async getNeoOutputs(
      chain: string,
      refs: readonly { txid: string; n: number }[],
    ): Promise<NeoOutputRow[]> {
      return getNeoOutputs(onPool, chain, refs);
    },

    getChainStatus: reader.getChainStatus,
    getToken: reader.getToken,
    listHolders: reader.listHolders,
    getBalanceSum: reader.getBalanceSum,
    negativeBalances: scans.negativeBalances,
    getBalance: reader.getBalance,
    scanHoldings: scans.scanHoldings,
    scanBalanceChanges: scans.scanBalanceChanges,
    getNeoToken: neo.getNeoToken,
  };
}
