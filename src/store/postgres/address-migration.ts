/**
 * Migration `0007_address_index` of the PostgreSQL store: what the address operations and the
 * token holder list read (types.ts, `listAddressBalances` … `scanHolders`).
 *
 * - `balances.transfer_count`: transfers of the token that name the holder as sender or recipient
 *   (a self-transfer once). A row is kept while `amount <> 0 OR transfer_count > 0`: an address
 *   that emptied its balance still answers its transfer count.
 * - `transfers` itself is indexed by address: by sender and by recipient (a self-transfer only by
 *   sender: the recipient indexes are partial), each once per token (one token's page) and once
 *   per chain (the page of every token of a chain). A page is a merge of the two ordered index
 *   ranges (statements.ts). No second table: a batch inserts no extra heap rows and a rollback's
 *   deletes remove the index entries with the rows. Token ids are global and an EVM address is
 *   the same on every chain, so the per-chain indexes need the chain in their key: `transfers`
 *   gains a `chain` column (without it, the eth page of an address busy on bsc would walk all of
 *   its bsc transfers, whose block numbers are higher, before the first eth one).
 * - `balances_by_rank` (token, amount desc, holder) over the holders `holderCount` counts, and
 *   `balances_by_holder` (holder, token) over positive balances: the holder list and the tokens
 *   an address holds are index ranges.
 *
 * A store of the previous version is upgraded in place, in the migration's transaction (a failure
 * leaves it as it was): `transfers` is copied into a new table with the chain column, in chunks of
 * tokens, filling the holders' transfer counts from the same read, with the percentage logged per
 * chunk; then the old table is dropped and the indexes are built (one sort each, faster than
 * growing them row by row). It takes about as long as reading and writing every transfer twice,
 * and room for about the size of `transfers` with its indexes while it runs.
 *
 * (Before release, this migration first kept a separate `address_transfers` table of one row per
 * address a transfer names; it cost twice the server CPU of this design per batch. It never
 * shipped, so it was rewritten rather than followed by 0008.)
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

/*
 * The new `transfers` is the old one's columns, then the chain (its tokens'), copied per chunk.
 * Without the constraint and indexes until the copy is done.
 */
const SCHEMA_SQL = `
  ALTER TABLE balances ADD COLUMN transfer_count bigint NOT NULL DEFAULT 0;
  ALTER TABLE transfers RENAME TO transfers_previous;
  ALTER TABLE transfers_previous RENAME CONSTRAINT transfers_pkey TO transfers_previous_pkey;
  CREATE TABLE transfers (
    token_id integer NOT NULL,
    log_index integer NOT NULL,
    block_number bigint NOT NULL,
    time bigint NOT NULL,
    tx_index integer NOT NULL,
    tx_hash bytea NOT NULL,
    from_addr bytea NOT NULL,
    to_addr bytea NOT NULL,
    value numeric(78, 0) NOT NULL,
    chain text COLLATE "C" NOT NULL
  );
`;

/*
 * The transfers of the tokens `$1` of one chunk, copied with their chain; each address they name
 * (a self-transfer once) counts for that holder's transfer count, from the same read.
 */
const FILL_SQL = `
  WITH copied AS (
    INSERT INTO transfers (token_id, log_index, block_number, time, tx_index, tx_hash, from_addr, to_addr, value, chain)
    SELECT t.token_id, t.log_index, t.block_number, t.time, t.tx_index, t.tx_hash, t.from_addr, t.to_addr, t.value, k.chain
    FROM transfers_previous AS t JOIN tokens AS k ON k.id = t.token_id
    WHERE t.token_id = ANY($1::integer[])
    ORDER BY t.token_id, t.block_number, t.log_index
    RETURNING token_id, from_addr, to_addr
  ), named AS (
    SELECT token_id, from_addr AS address FROM copied
    UNION ALL
    SELECT token_id, to_addr FROM copied WHERE to_addr <> from_addr
  )
  INSERT INTO balances AS b (token_id, holder, amount, transfer_count)
  SELECT token_id, address, 0, count(*) FROM named GROUP BY token_id, address
  ON CONFLICT (token_id, holder) DO UPDATE SET transfer_count = excluded.transfer_count`;

/**
 * The address indexes of `transfers`. The recipient ones leave out self-transfers (listed by
 * sender), so a page's two ranges never hold the same transfer and stay index-only.
 */
const TRANSFER_ADDRESS_INDEXES_SQL = `
  CREATE INDEX transfers_by_sender ON transfers (from_addr, token_id, block_number, log_index);
  CREATE INDEX transfers_by_recipient ON transfers (to_addr, token_id, block_number, log_index)
    WHERE to_addr <> from_addr;
  CREATE INDEX transfers_by_sender_chain ON transfers (from_addr, chain, block_number, log_index)
    INCLUDE (token_id);
  CREATE INDEX transfers_by_recipient_chain ON transfers (to_addr, chain, block_number, log_index)
    INCLUDE (token_id) WHERE to_addr <> from_addr;
`;

const INDEX_SQL = `
  DROP TABLE transfers_previous;
  ALTER TABLE transfers ADD CONSTRAINT transfers_pkey PRIMARY KEY (token_id, block_number, log_index);
  ${TRANSFER_ADDRESS_INDEXES_SQL}
  CREATE INDEX balances_by_rank ON balances (token_id, amount DESC, holder) WHERE ${HOLDER_PREDICATE};
  CREATE INDEX balances_by_holder ON balances (holder, token_id) WHERE amount > 0;
  ANALYZE balances;
  ANALYZE transfers;
`;

/** Token ids in chunks of about `size` transfers (a larger token is a chunk of its own). */
function chunksOf(
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
      'copying the stored transfers with their chain, to index them by address (the store is upgraded in place; this takes a while on a large store)',
    );
  }
  let done = 0;
  for (const chunk of chunks) {
    await client.query(FILL_SQL, [chunk.ids]);
    done += chunk.transfers;
    if (total > 0) {
      logger.info(
        { migration: '0007_address_index', percent: Math.floor((done / total) * 100), transfers: done },
        'copied stored transfers',
      );
    }
  }
  if (total > 0) logger.info({ migration: '0007_address_index' }, 'building the address and holder indexes');
  await client.query(INDEX_SQL);
}
