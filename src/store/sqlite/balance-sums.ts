/**
 * The SQLite store's running per-token sums of stored balances (`tokens.balance_sum`, migration
 * 0011; see store/balance-sums.ts for what they are and why). Stored with the amounts' codec
 * (codec.ts `encodeAmount`: an INTEGER within 2^53, a BLOB above it, decimal TEXT for a large
 * negative sum), so they are exact at any size; SQLite has no arithmetic on such values, so an
 * update reads the sum, adds in JavaScript and writes it back, in the writer's transaction.
 */
import type Database from 'better-sqlite3';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import type { Logger } from '../../internal/logger.js';
import { decodeAmount, encodeAmount, encodeHex, type SqlValue } from './codec.js';
import { migrationProgress } from './migration-progress.js';

/** The writer's updates of the running sums; inside its write transaction. */
export interface BalanceSums {
  /** Adds `change` to the sum of token `id`'s stored balances. */
  add(id: number, change: bigint): void;
}

export function createBalanceSums(db: Database.Database): BalanceSums {
  const read = db.prepare<[number], SqlValue>('SELECT balance_sum FROM tokens WHERE id = ?').pluck();
  const write = db.prepare<[SqlValue, number]>('UPDATE tokens SET balance_sum = ? WHERE id = ?');
  return {
    add(id, change) {
      if (change === 0n) return;
      const stored = read.get(id);
      if (stored === undefined) return;
      write.run(encodeAmount(decodeAmount(stored) + change), id);
    },
  };
}

/** The reader's read of a token's running sum (`StoreReader.getBalanceSum`); null for an unknown token. */
export function createBalanceSumRead(db: Database.Database): (chain: string, token: string) => bigint | null {
  const read = db
    .prepare<[string, Buffer | string], SqlValue>(
      'SELECT balance_sum FROM tokens WHERE chain = ? AND address = ?',
    )
    .pluck();
  return (chain, token) => {
    const stored = read.get(chain, encodeHex(token));
    return stored === undefined ? null : decodeAmount(stored);
  };
}

/**
 * The sum of a token's stored balances without the zero address's, read from the balances table
 * (the migration's fill).
 */
function createSummedRows(db: Database.Database): (id: number) => bigint {
  const where = 'token_id = ? AND holder <> ?';
  const integers = db
    .prepare<[number, Buffer | string], SqlValue>(
      `SELECT sum(amount) FROM balances WHERE ${where} AND typeof(amount) = 'integer'`,
    )
    .pluck()
    // A sum past 2^53 (and within 64 bits) comes back as a BigInt, not a rounded double.
    .safeIntegers();
  const others = db
    .prepare<[number, Buffer | string], SqlValue>(
      `SELECT amount FROM balances WHERE ${where} AND typeof(amount) <> 'integer'`,
    )
    .pluck();
  const all = db
    .prepare<[number, Buffer | string], SqlValue>(`SELECT amount FROM balances WHERE ${where}`)
    .pluck();
  const zero = encodeHex(ZERO_ADDRESS);
  return (id) => {
    let sum = 0n;
    try {
      // Amounts within 2^53 are INTEGERs: SQLite sums them in C, and raises an error rather than
      // lose precision when the total leaves 64 bits (then JavaScript sums every row).
      const small = integers.get(id, zero);
      sum = small === null || small === undefined ? 0n : decodeAmount(small);
    } catch {
      for (const amount of all.iterate(id, zero)) sum += decodeAmount(amount);
      return sum;
    }
    for (const amount of others.iterate(id, zero)) sum += decodeAmount(amount);
    return sum;
  };
}

/**
 * The fill of migration 0011: every token's sum from its stored balances, in the migration's
 * transaction, token by token (a range of the balances' primary key each), with progress lines.
 */
export function fillBalanceSums(db: Database.Database, logger: Logger): void {
  const tokens = db
    .prepare<[], { id: number; holder_count: number }>('SELECT id, holder_count FROM tokens ORDER BY id')
    .all();
  if (tokens.length === 0) return;
  // Work units: a token's holders, and one for the token (rows at zero or negative are not counted).
  const total = tokens.reduce((sum, token) => sum + token.holder_count + 1, 0);
  logger.info(
    { migration: '0011_balance_sums', tokens: tokens.length },
    `upgrading the database: summing the stored balances of ${tokens.length} tokens (once; the store is locked meanwhile)`,
  );
  const summed = createSummedRows(db);
  const write = db.prepare<[SqlValue, number]>('UPDATE tokens SET balance_sum = ? WHERE id = ?');
  const report = migrationProgress(logger, '0011_balance_sums', 'balance sums', total);
  let done = 0;
  for (const { id, holder_count } of tokens) {
    const sum = summed(id);
    if (sum !== 0n) write.run(encodeAmount(sum), id);
    done += holder_count + 1;
    report(done);
  }
  logger.info({ migration: '0011_balance_sums', tokens: tokens.length }, 'upgrading the database: done');
}
