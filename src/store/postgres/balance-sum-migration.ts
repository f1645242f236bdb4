/**
 * Migration `0011_balance_sums` of the PostgreSQL store: `tokens.balance_sum`, the running sum of
 * each token's stored balances without the zero address's (store/balance-sums.ts), `numeric` and
 * so exact at any size and sign. The column comes with a constant default (no table rewrite);
 * a store of the previous version is then filled in place, in the migration's transaction, by
 * chunks of tokens of about `CHUNK_HOLDERS` holders, one index-ordered aggregate of `balances`
 * each, with the percentage logged per chunk.
 */
import type pg from 'pg';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import type { Logger } from '../../internal/logger.js';
import { chunksOf } from './address-migration.js';
import { encodeHex } from './codec.js';

/** Holders of about this many tokens' balances are summed per chunk (and per progress line). */
const CHUNK_HOLDERS = 500_000;

export const BALANCE_SUMS_SQL = `
  ALTER TABLE tokens ADD COLUMN balance_sum numeric NOT NULL DEFAULT 0;
`;

const FILL_SQL = `
  UPDATE tokens AS t SET balance_sum = s.summed
  FROM (
    SELECT token_id, sum(amount) AS summed FROM balances
    WHERE token_id = ANY($1::integer[]) AND holder <> $2::bytea
    GROUP BY token_id
  ) AS s
  WHERE t.id = s.token_id AND s.summed <> 0`;

/** The `fill` of `0011_balance_sums`. */
export function fillBalanceSums(client: pg.ClientBase, logger: Logger): Promise<void> {
  return fillBalanceSumsInChunks(client, logger, CHUNK_HOLDERS);
}

/** {@link fillBalanceSums} with chunks of about `chunkHolders` holders (tests make them small). */
export async function fillBalanceSumsInChunks(
  client: pg.ClientBase,
  logger: Logger,
  chunkHolders: number,
): Promise<void> {
  // Sized by holder counts (plus one a token: rows at zero or below are not holders), which are exact.
  const tokens = await client.query<{ id: number; holders: string }>(
    'SELECT id, holder_count AS holders FROM tokens ORDER BY id',
  );
  const chunks = chunksOf(
    tokens.rows.map((row) => ({ id: row.id, transfers: Number(row.holders) + 1 })),
    chunkHolders,
  );
  if (chunks.length === 0) return;
  const total = chunks.reduce((sum, chunk) => sum + chunk.transfers, 0);
  logger.info(
    { migration: '0011_balance_sums', tokens: tokens.rows.length, chunks: chunks.length },
    'summing the stored balances of every token (the store is upgraded in place; this takes a while on a large store)',
  );
  const zero = encodeHex(ZERO_ADDRESS);
  let done = 0;
  for (const chunk of chunks) {
    await client.query(FILL_SQL, [chunk.ids, zero]);
    done += chunk.transfers;
    logger.info(
      { migration: '0011_balance_sums', percent: Math.floor((done / total) * 100) },
      'summed stored balances',
    );
  }
}
