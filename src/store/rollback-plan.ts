/**
 * What a rollback to a common ancestor does to each token, decided alike for both backends;
 * each backend finds the tokens, deletes their transfers above the ancestor and writes these
 * decisions with its own SQL.
 */
import { namedCounts, netBalanceChanges, netChanges } from './batch-plan.js';
import type { RollbackResult } from './types.js';

/**
 * Whether the block journal finds every token a rollback to `toBlock` touches: it names every
 * token touched in blocks >= `journalFloor`; below that, the backend probes all tokens.
 */
export function journalCovers(toBlock: number, journalFloor: number): boolean {
  return toBlock + 1 >= journalFloor;
}

/** What a rollback does to a token it keeps. */
export interface TokenRollback {
  /** Net balance change per holder: the removed transfers taken off. */
  deltas: Map<string, bigint>;
  /** Change in each address's transfer count of the token (negative: the removed transfers that named it). */
  named: Map<string, number>;
  /** Transfers added: minus the removed ones. */
  transfers: number;
  /** The supply mark, set (not raised) to this block. */
  dirty: number;
}

/**
 * The rollback of one token that loses `rows`, its transfers above `toBlock` (decoded by `decode`
 * into `[from, to, value]`), and `changes`, its balance changes above it, first seen in `firstBlock`: null when it was first seen above
 * `toBlock`, so every transfer of it is gone and it was never seen: the backend drops it whole
 * (its holders were never seen either, and are seeded again if they show up again).
 */
export function rollBackToken<Row, ChangeRow = never>(
  firstBlock: number,
  toBlock: number,
  rows: readonly Row[],
  decode: (row: Row) => readonly [from: string, to: string, value: bigint],
  /** Its balance changes above `toBlock` (`IndexBatch.balanceChanges`), decoded into `[holder, amount]`. */
  changes?: {
    rows: readonly ChangeRow[];
    decode: (row: ChangeRow) => readonly [holder: string, amount: bigint];
  },
): TokenRollback | null {
  if (firstBlock > toBlock) return null;
  const deltas = netChanges(rows, decode, -1n);
  if (changes !== undefined) netBalanceChanges(changes.rows, changes.decode, -1n, deltas);
  // A supply read at or after the common ancestor reflects the surviving history.
  return {
    deltas,
    named: namedCounts(rows, decode, -1),
    transfers: -rows.length,
    dirty: toBlock,
  };
}

/** The rollback's result: `affected` (the tokens that lost transfers) sorted in place. */
export function rollbackResult(affected: string[], removedTransfers: number): RollbackResult {
  affected.sort();
  return { affectedTokens: affected, removedTransfers };
}
