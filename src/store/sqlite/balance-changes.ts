/**
 * The SQLite writer's balance changes without a transfer (`IndexBatch.balanceChanges`, migration
 * 0008): stored per token beside its transfers, so a rollback can take them off and a replay of
 * deferred balances can add them again. A batch journals the blocks they touch like its transfers.
 */
import type Database from 'better-sqlite3';
import type { TokenWork } from '../batch-plan.js';
import type { HistoryScans } from '../types.js';
import { decodeAmount, decodeHex, encodeAmount, encodeHex, type SqlValue } from './codec.js';

/** The writer's statements over `balance_changes`. */
export interface BalanceChangeTable {
  /** Stores the changes of each token of `work` (ids `ids`, in its order); `journal` learns their blocks. */
  insert(
    work: Map<string, TokenWork>,
    ids: readonly number[],
    journal: { add(block: number, id: number): void },
  ): void;
  /** Token `id`'s changes above `block`, as `[holder, amount]`. */
  above(id: number, block: number): (readonly [holder: string, amount: bigint])[];
  /** Deletes token `id`'s changes above `block`. */
  deleteAbove(id: number, block: number): void;
  /** Tokens of `chain` with changes above `block` (a probe, when the block journal does not reach). */
  tokensAbove(chain: string, block: number): number[];
  /** `HistoryScans.scanBalanceChanges`. */
  scan: HistoryScans['scanBalanceChanges'];
}

export function createBalanceChangeTable(db: Database.Database): BalanceChangeTable {
  const insert = db.prepare(
    'INSERT INTO balance_changes (token_id, block_number, log_index, holder, amount) VALUES (?, ?, ?, ?, ?)',
  );
  const above = db
    .prepare<[number, number], [SqlValue, SqlValue]>(
      'SELECT holder, amount FROM balance_changes WHERE token_id = ? AND block_number > ?',
    )
    .raw();
  const deleteAbove = db.prepare('DELETE FROM balance_changes WHERE token_id = ? AND block_number > ?');
  const tokensAbove = db
    .prepare<[string, number], number>(`
      SELECT id FROM tokens AS k WHERE chain = ?
      AND EXISTS (SELECT 1 FROM balance_changes AS c WHERE c.token_id = k.id AND c.block_number > ?)`)
    .pluck();
  const scan = db
    .prepare<[string, SqlValue, number, number, number], [number, number, SqlValue, SqlValue]>(`
      SELECT block_number, log_index, holder, amount FROM balance_changes
      WHERE token_id = (SELECT id FROM tokens WHERE chain = ? AND address = ?)
        AND (block_number, log_index) > (?, ?)
      ORDER BY block_number, log_index LIMIT +?`)
    .raw();
  return {
    async scan(chain, token, after, limit) {
      const rows = scan.all(chain, encodeHex(token), after?.blockNumber ?? -1, after?.logIndex ?? -1, limit);
      return rows.map(([blockNumber, logIndex, holder, amount]) => ({
        token,
        blockNumber,
        logIndex,
        holder: decodeHex(holder),
        amount: decodeAmount(amount),
      }));
    },
    insert(work, ids, journal) {
      let k = 0;
      for (const token of work.values()) {
        const id = ids[k++]!;
        for (const change of token.changes) {
          insert.run(
            id,
            change.blockNumber,
            change.logIndex,
            encodeHex(change.holder),
            encodeAmount(change.amount),
          );
          journal.add(change.blockNumber, id);
        }
      }
    },
    above: (id, block) =>
      above.all(id, block).map(([holder, amount]) => [decodeHex(holder), decodeAmount(amount)] as const),
    deleteAbove(id, block) {
      deleteAbove.run(id, block);
    },
    tokensAbove: (chain, block) => tokensAbove.all(chain, block),
  };
}
