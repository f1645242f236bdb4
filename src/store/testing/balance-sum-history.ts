/**
 * A small history whose running sums (`StoreReader.getBalanceSum`) take every form a store keeps:
 * 0, small, past 2^53, past uint256, negative past 2^53 (a late start), a sum of many small
 * balances past 64 bits (SQLite's `sum()` gives up on it), and balance changes without a transfer.
 * For the upgrade tests of migration 0010 on both backends.
 */
import { ZERO_ADDRESS } from '../../internal/chains.js';
import type { IndexBatch, TransferRecord } from '../types.js';
import { batch, holder, moves, tokenAddress, tokenMetadata, transferRecord } from './batches.js';

/** Its tokens: every one of them has a stored balance. */
export const SUM_TOKENS = [1, 2, 3, 4, 5].map(tokenAddress);

/** 2^53 − 1: the largest amount SQLite stores as an INTEGER. */
const MAX_INTEGER = 2n ** 53n - 1n;

export function balanceSumHistory(): IndexBatch[] {
  const [T1, T2, T3, T4, T5] = SUM_TOKENS as [string, string, string, string, string];
  // 1,500 holders of 2^53 − 1 each: about 1.35e19 in all, past the 64 bits of an SQLite INTEGER.
  const many: TransferRecord[] = Array.from({ length: 1_500 }, (_, i) =>
    transferRecord({
      token: T3,
      blockNumber: 2,
      logIndex: i,
      from: ZERO_ADDRESS,
      to: holder(100 + i),
      value: MAX_INTEGER,
    }),
  );
  return [
    batch({
      from: 1,
      to: 1,
      transfers: [
        ...moves(T1, 1, [
          [ZERO_ADDRESS, holder(1), 10n],
          [holder(1), holder(2), 4n],
        ]),
        ...moves(T2, 1, [[ZERO_ADDRESS, holder(1), 2n ** 256n - 1n]], 5),
        ...moves(T2, 1, [[ZERO_ADDRESS, holder(2), 2n ** 256n - 1n]], 6),
        // History starts late for T4: holder 3 sends what it had before block 1.
        ...moves(T4, 1, [[holder(3), ZERO_ADDRESS, 2n ** 70n]], 7),
        ...moves(T4, 1, [[holder(3), holder(4), 1n]], 8),
      ],
    }),
    { ...batch({ from: 2, to: 2, transfers: many }) },
    {
      ...batch({ from: 3, to: 3 }),
      // A wrapped-native token's deposits and a withdrawal: no transfer at all.
      balanceChanges: [
        { token: T5, blockNumber: 3, logIndex: 0, holder: holder(5), amount: 3n * 10n ** 18n },
        { token: T5, blockNumber: 3, logIndex: 1, holder: holder(6), amount: 2n },
        { token: T5, blockNumber: 3, logIndex: 2, holder: holder(5), amount: -(10n ** 18n) },
      ],
      tokens: [tokenMetadata(T5)],
    },
  ];
}

/** The running sums of {@link balanceSumHistory}, token by token. */
export function balanceSumsOfHistory(): bigint[] {
  return [10n, 2n * (2n ** 256n - 1n), 1_500n * MAX_INTEGER, -(2n ** 70n), 2n * 10n ** 18n + 2n];
}
