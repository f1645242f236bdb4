/**
 * Migration `0007_address_index` of the PostgreSQL store: what the address operations and the
 * token holder list read (types.ts, `listAddressBalances` … `scanHolders`).
 *
 * - `balances.transfer_count`: transfers of the token that name the holder as sender or recipient
 *   (a self-transfer once). A row is kept while `amount <> 0 OR transfer_count > 0`: an address
 *   that emptied its balance still answers its transfer count.
 * - `address_transfers`: one row per address a transfer names (a self-transfer once; the zero
 *   address and `""` too), keyed (address, token, block, log) for one token's page, with a second
 *   index (address, chain, block, log) for the page of every token of a chain. Only keys: the page
 *   is found in the index, then only its rows are read from `transfers`.
 * - `balances_by_rank` (token, amount desc, holder) over the holders `holderCount` counts, and
 *   `balances_by_holder` (holder, token) over positive balances: the holder list and the tokens
 *   an address holds are index ranges.
 *
 * A store of the previous version is upgraded in place, in the migration's transaction (a failure
 * leaves it as it was): the counts and `address_transfers` are filled from `transfers` in chunks of
 * tokens, with the percentage logged per chunk, and the indexes are built after the fill (one sort
 * each, faster than growing them row by row). It takes about as long as reading every transfer
 * twice, and room for about twice the size of `transfers`' keys.
 */
import type pg from 'pg';
import type { Logger } from '../../internal/logger.js';
import { NON_HOLDERS } from '../batch-plan.js';
import { encodeHex } from './codec.js';

/**
 * The balances that are holders (positive, and not the zero address or `""`): the predicate of
 * `balances_by_rank`, repeated verbatim by the statements that read it, so that the planner can use
 * the partial index. Built from {@link NON_HOLDERS}: the one rule of who is never a holder.
 */
export const HOLDER_PREDICATE = [
  'amount > 0',
  ...[...NON_HOLDERS].sort().map((address) => `holder <> '${encodeHex(address)}'::bytea`),
].join(' AND ');

/** Transfers of about this many are filled per chunk (and per progress line). */
const CHUNK_TRANSFERS = 500_000;

const SCHEMA_SQL = `
  ALTER TABLE balances ADD COLUMN transfer_count bigint NOT NULL DEFAULT 0;
  CREATE TABLE address_transfers (
    block_number bigint NOT NULL,
    token_id integer NOT NULL,
    log_index integer NOT NULL,
    address bytea NOT NULL,
    chain text COLLATE "C" NOT NULL
  );
`;

/*
 * Each address a transfer names (a self-transfer once), for the tokens `$1` of one chunk. It feeds
 * both `address_transfers` and the holders' transfer counts, read once from `transfers`.
 */
const FILL_SQL = `
  WITH named AS MATERIALIZED (
    SELECT t.token_id, t.block_number, t.log_index, n.address
    FROM transfers AS t
    CROSS JOIN LATERAL (SELECT t.from_addr UNION ALL SELECT t.to_addr WHERE t.to_addr <> t.from_addr) AS n(address)
    WHERE t.token_id = ANY($1::integer[])
  ), listed AS (
    INSERT INTO address_transfers (block_number, token_id, log_index, address, chain)
    SELECT n.block_number, n.token_id, n.log_index, n.address, k.chain
    FROM named AS n JOIN tokens AS k ON k.id = n.token_id
  )
  INSERT INTO balances AS b (token_id, holder, amount, transfer_count)
  SELECT token_id, address, 0, count(*) FROM named GROUP BY token_id, address
  ON CONFLICT (token_id, holder) DO UPDATE SET transfer_count = excluded.transfer_count`;

const INDEX_SQL = `
  ALTER TABLE address_transfers
    ADD CONSTRAINT address_transfers_pkey PRIMARY KEY (address, token_id, block_number, log_index);
  CREATE INDEX address_transfers_newest ON address_transfers (address, chain, block_number, log_index)
    INCLUDE (token_id);
  CREATE INDEX balances_by_rank ON balances (token_id, amount DESC, holder) WHERE ${HOLDER_PREDICATE};
  CREATE INDEX balances_by_holder ON balances (holder, token_id) WHERE amount > 0;
  ANALYZE balances;
  ANALYZE address_transfers;
`;

/** Token ids in chunks of about `size` transfers (a larger token is a chunk of its own). */
export function chunksOf(
  tokens: readonly { id: number; transfers: number }[],
  size: number,
): { ids: number[]; transfers: number }[] {
  const chunks: { ids: number[]; transfers: number }[] = [];
  let current = { ids: [] as number[], transfers: 0 };
  for (const token of tokens) {
    current.ids.push(token.id);
    current.transfers += token.transfers;
    if (current.transfers >= size) {
      chunks.push(current);
      current = { ids: [], transfers: 0 };
    }
  }
  if (current.ids.length > 0) chunks.push(current);
  return chunks;
}

/** The `fill` of `0007_address_index`: schema, then the fill from `transfers`, then the indexes. */
export function upgradeAddressIndex(client: pg.ClientBase, logger: Logger): Promise<void> {
  return upgradeAddressIndexInChunks(client, logger, CHUNK_TRANSFERS);
}

/** {@link upgradeAddressIndex} with chunks of about `chunkTransfers` transfers (tests make them small). */
export async function upgradeAddressIndexInChunks(
  client: pg.ClientBase,
  logger: Logger,
  chunkTransfers: number,
): Promise<void> {
  await client.query(SCHEMA_SQL);
  // `tokens.transfer_count` is exact (every batch and rollback keeps it), so it sizes the chunks.
  const tokens = await client.query<{ id: number; transfers: string }>(
    'SELECT id, transfer_count AS transfers FROM tokens ORDER BY id',
  );
  const chunks = chunksOf(
    tokens.rows.map((row) => ({ id: row.id, transfers: Number(row.transfers) })),
    chunkTransfers,
  );
  const total = chunks.reduce((sum, chunk) => sum + chunk.transfers, 0);
  if (total > 0) {
    logger.info(
      { migration: '0007_address_index', transfers: total, chunks: chunks.length },
      'indexing the stored transfers by address (the store is upgraded in place; this takes a while on a large store)',
    );
  }
  let done = 0;
  for (const chunk of chunks) {
    await client.query(FILL_SQL, [chunk.ids]);
    done += chunk.transfers;
    if (total > 0) {
      logger.info(
        { migration: '0007_address_index', percent: Math.floor((done / total) * 100), transfers: done },
        'indexed stored transfers by address',
      );
    }
  }
  if (total > 0) logger.info({ migration: '0007_address_index' }, 'building the address and holder indexes');
  await client.query(INDEX_SQL);
}
