/**
 * The SQLite writer's rollback: undoes every block above a common ancestor exactly (transfers,
 * balances, holder and transfer counts, tokens first seen above it, block refs), finding the
 * tokens to undo through the unfinalized window's block journal, in one IMMEDIATE transaction.
 */
import { checkRollback } from '../batch-plan.js';
import { journalCovers, rollBackToken, rollbackResult } from '../rollback-plan.js';
import type { RollbackResult, StoreWriter } from '../types.js';
import type { BatchContext } from './apply-batch.js';
import type { BulkLoad } from './bulk-load.js';
import { decodeHex, decodeTransferRow, encodeHex } from './codec.js';

/** The writer's `rollback`. */
export function createRollback(
  context: Omit<BatchContext, 'bulk'>,
  bulkLoad: Pick<BulkLoad, 'build'>,
): StoreWriter['rollback'] {
  const { db, sql, hexRows, balances, neo, addresses, changes } = context;
  const rollbackTx = db.transaction(
    (chain: string, toBlock: number, toBlockHash: string | null): RollbackResult => {
      hexRows.discardBufferedRows();
      addresses.discard();
      balances.validateBalanceCache();
      let current = sql.getChain.get(chain);
      checkRollback(chain, current?.indexed_block, toBlock, false);
      // A waiting bulk load is built first: the rollback works on the tables it fills.
      if (bulkLoad.build(chain, current)) current = sql.getChain.get(chain)!;
      // The rollback takes the removed transfers off the balances table: make it whole first.
      // (`rollback` drops `unwritten` and the cache afterwards, written or not.)
      balances.recoverBalances(chain, current);
      balances.writeUnwritten(chain);
      const tokenIds = journalCovers(toBlock, current.journal_floor)
        ? sql.journalTokens.all(chain, toBlock)
        : [...new Set([...sql.probeTokens.all(chain, toBlock), ...changes.tokensAbove(chain, toBlock)])];

      const affected: string[] = [];
      let removedTransfers = 0;
      let removedTokens = 0;
      for (const id of tokenIds) {
        const token = sql.tokenById.get(id);
        if (token === undefined) continue;
        const rows = sql.transfersAbove.all(id, toBlock);
        const changeRows = changes.above(id, toBlock);
        if (rows.length === 0 && changeRows.length === 0) continue;
        removedTransfers += rows.length;
        sql.deleteTransfersAbove.run(id, toBlock);
        changes.deleteAbove(id, toBlock);
        // The removed transfers' entries, found by the addresses they name.
        const named = new Set<string>();
        for (const [from, to] of rows) {
          named.add(decodeHex(from));
          named.add(decodeHex(to));
        }
        addresses.removeAbove(chain, id, named, toBlock);
        affected.push(decodeHex(token.address));
        const kept = rollBackToken(token.first_block, toBlock, rows, decodeTransferRow, {
          rows: changeRows,
          decode: (c) => c,
        });
        if (kept === null) {
          sql.deleteTokenBalances.run(id);
          sql.deleteTokenSeeds.run(id);
          sql.deleteToken.run(id);
          removedTokens++;
          continue;
        }
        const [holders] = balances.applyDeltas(chain, [
          { id, deltas: kept.deltas, named: kept.named },
        ]).holderChanges;
        sql.tokenAfterRollback.run({ holders, removed: -kept.transfers, dirty: kept.dirty, id });
      }
      sql.deleteJournalAbove.run(chain, toBlock);
      sql.deleteBlockRefsAbove.run(chain, toBlock);
      sql.afterRollback.run({
        chain,
        block: toBlock,
        hash: toBlockHash === null ? null : encodeHex(toBlockHash),
        now: Date.now(),
        removedTokens,
        removedTransfers,
      });
      return rollbackResult(affected, removedTransfers);
    },
  );

  return async (chain: string, toBlock: number, toBlockHash: string | null): Promise<RollbackResult> => {
    // NEO has one-block finality; its outputs, deployments and asset facts are not journaled.
    if (neo.hasData(chain)) checkRollback(chain, null, toBlock, true);
    try {
      return rollbackTx.immediate(chain, toBlock, toBlockHash);
    } finally {
      // Rare: start over rather than track what the rollback rewrote.
      balances.clearBalanceCache();
    }
  };
}
