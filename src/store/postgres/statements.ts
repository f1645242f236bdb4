/**
 * The PostgreSQL store's SQL: every statement with a fixed text, by name, and `run`, which
 * executes one as a named prepared statement. The parts of the store (apply-batch.ts,
 * rollback.ts, reads.ts, ...) name statements from here and hold no SQL text of their own.
 */
import type pg from 'pg';
import { HOLDER_PREDICATE } from './address-migration.js';
import { inChainRange, TOKEN_ID_BITS } from './chain-partitions.js';
import { NEGATIVE_BALANCE } from './migrations.js';
import { NEO_SQL } from './neo-tables.js';

const TOKEN_COLUMNS =
  'address, name, symbol, decimals, total_supply, cap, burned_balance, holder_count, transfer_count, first_block, icon';
/** {@link TOKEN_COLUMNS} of the `tokens` row aliased `t`. */
export const TOKEN_COLUMNS_OF_T = TOKEN_COLUMNS.split(', ')
  .map((column) => `t.${column}`)
  .join(', ');
/** A transfer's columns as `TransferRow` reads them, of the `transfers` row aliased `t`. */
const TRANSFER_COLUMNS_OF_T =
  't.block_number, t.log_index, t.tx_index, t.tx_hash, t.from_addr, t.to_addr, t.value, t.time';
const API_KEY_COLUMNS = 'id, hash, label, created_at, revoked_at, rate_per_second, rate_burst, allow_ips';
const CHAIN_COLUMNS =
  'chain, indexed_block, indexed_hash, head, last_error, updated_at, writer_epoch, writer_id, writer_since, seed_block, holders_partial, bulk_block';

/*
 * Statements with a fixed text run as named prepared statements (parsed and planned once per
 * connection). Bulk statements take whole columns as array parameters and `unnest` them, so a
 * batch of any size is one statement per table.
 */
export const SQL = {
  lockChain: 'SELECT pg_advisory_xact_lock($1, hashtext($2))',
  chainForWrite:
    'SELECT indexed_block, journal_floor, writer_epoch, seed_block, bulk_block, transfer_count FROM chains WHERE chain = $1',
  getChain: `SELECT ${CHAIN_COLUMNS} FROM chains WHERE chain = $1`,
  listChains: `SELECT ${CHAIN_COLUMNS} FROM chains ORDER BY chain`,
  chainActivity: 'SELECT transfer_count, recent_transfers FROM chains WHERE chain = $1',
  databaseSize: 'SELECT pg_database_size(current_database()) AS bytes',
  setStatus: `
    INSERT INTO chains (chain, head, last_error, updated_at)
    VALUES ($1, coalesce($2::bigint, 0), $3, $5)
    ON CONFLICT (chain) DO UPDATE SET
      head = coalesce($2::bigint, chains.head),
      last_error = CASE WHEN $4::boolean THEN $3 ELSE chains.last_error END,
      updated_at = $5`,
  // The same through a writer lease: it changes nothing unless the lease is the newest election.
  setStatusFenced: `
    UPDATE chains SET
      head = coalesce($2::bigint, head),
      last_error = CASE WHEN $4::boolean THEN $3 ELSE last_error END,
      updated_at = $5
    WHERE chain = $1 AND writer_epoch = $6`,
  /*
   * A new writer's election, under the chain's write lock (taken first, in the same transaction):
   * every write transaction of the previous writer either committed before it, and the new writer
   * reads its checkpoint after it, or starts after it and finds its own epoch outdated.
   */
  electWriter: `
    INSERT INTO chains (chain, updated_at, writer_epoch, writer_id, writer_since)
    VALUES ($1, $3, 1, $2, $3)
    ON CONFLICT (chain) DO UPDATE SET
      writer_epoch = chains.writer_epoch + 1,
      writer_id = excluded.writer_id,
      writer_since = excluded.writer_since
    RETURNING writer_epoch`,
  // Prunes the journal and the block refs below the window, then moves the checkpoint.
  afterBatch: `
    WITH pruned_refs AS (DELETE FROM block_refs WHERE chain = $1 AND number < $7),
    pruned_journal AS (DELETE FROM recent_block_tokens WHERE chain = $1 AND block_number < $7)
    INSERT INTO chains (chain, indexed_block, indexed_hash, head, updated_at, token_count, journal_floor,
      transfer_count, recent_transfers, seed_block, holders_partial)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
    ON CONFLICT (chain) DO UPDATE SET
      seed_block = coalesce(chains.seed_block, excluded.seed_block),
      holders_partial = chains.holders_partial OR excluded.holders_partial,
      indexed_block = excluded.indexed_block,
      indexed_hash = excluded.indexed_hash,
      head = excluded.head,
      updated_at = excluded.updated_at,
      token_count = chains.token_count + excluded.token_count,
      journal_floor = greatest(chains.journal_floor, excluded.journal_floor),
      transfer_count = chains.transfer_count + excluded.transfer_count,
      recent_transfers = coalesce(excluded.recent_transfers, chains.recent_transfers)`,
  afterRollback: `
    WITH dropped_journal AS (DELETE FROM recent_block_tokens WHERE chain = $1 AND block_number > $2),
    dropped_refs AS (DELETE FROM block_refs WHERE chain = $1 AND number > $2)
    UPDATE chains SET indexed_block = $2, indexed_hash = $3, updated_at = $4,
      token_count = token_count - $5, transfer_count = transfer_count - $6, recent_transfers = NULL
    WHERE chain = $1`,

  knownTokens: 'SELECT id, address FROM tokens WHERE chain = $1 AND address = ANY($2::bytea[])',
  // Ids from the chain's own range (chain-partitions.ts), in order of first appearance in the
  // batch, as in SQLite (tokensNeedingSupply breaks ties by id). The batch's caller holds the
  // chain's write lock, so nobody else draws from the range meanwhile.
  insertTokens: `
    WITH drawn AS (
      UPDATE chain_partitions SET next_token = next_token + cardinality($2::bytea[])
      WHERE chain = $1
      RETURNING ordinal * ${2 ** TOKEN_ID_BITS} + (next_token - cardinality($2::bytea[])) AS first
    )
    INSERT INTO tokens (id, chain, address, name, symbol, decimals, first_block)
    SELECT drawn.first + u.ord - 1, $1, address, name, symbol, decimals, first_block
    FROM drawn, unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bigint[], $6::bigint[])
      WITH ORDINALITY AS u(address, name, symbol, decimals, first_block, ord)
    ORDER BY ord
    RETURNING id, address`,
  // The transfers, and one `address_transfers` row per address each names (a self-transfer once),
  // from the rows inserted, so the columns cross the wire once.
  insertTransfers: `
    WITH inserted AS (
      INSERT INTO transfers (token_id, log_index, block_number, time, tx_index, tx_hash, from_addr, to_addr, value)
      SELECT * FROM unnest($1::integer[], $2::integer[], $3::bigint[], $4::bigint[], $5::integer[],
        $6::bytea[], $7::bytea[], $8::bytea[], $9::numeric[])
      RETURNING token_id, log_index, block_number, from_addr, to_addr
    )
    INSERT INTO address_transfers (block_number, token_id, log_index, address, chain)
    SELECT block_number, token_id, log_index, address, $10 FROM (
      SELECT block_number, token_id, log_index, from_addr AS address FROM inserted
      UNION ALL
      SELECT block_number, token_id, log_index, to_addr FROM inserted WHERE to_addr <> from_addr
    ) AS named
    ORDER BY address, token_id, block_number, log_index`,
  // Answers the rows actually inserted: a pair seeded before is left alone and not answered.
  insertSeeds: `
    INSERT INTO seed_balances (token_id, holder, amount)
    SELECT * FROM unnest($1::integer[], $2::bytea[], $3::numeric[])
    ON CONFLICT DO NOTHING
    RETURNING token_id, holder`,
  seededHolders: `
    SELECT u.ord FROM unnest($2::bytea[], $3::bytea[]) WITH ORDINALITY AS u(address, holder, ord)
    JOIN tokens AS t ON t.chain = $1 AND t.address = u.address
    JOIN seed_balances AS s ON s.token_id = t.id AND s.holder = u.holder`,
  insertJournal: `
    INSERT INTO recent_block_tokens (chain, block_number, token_id)
    SELECT $1, * FROM unnest($2::bigint[], $3::integer[])
    ON CONFLICT DO NOTHING`,
  /*
   * One statement applies the net balance and per-holder transfer count changes and the token
   * counters. The upsert returns each new amount; the old one is new − delta, so the holder-count
   * change per token needs no second read. Rows left with a zero amount and no transfer naming
   * the holder are returned, to be deleted. `$8` replaces the supply mark (rollback) instead of
   * raising it (batch).
   */
  applyChanges: `
    WITH d AS (
      SELECT * FROM unnest($1::integer[], $2::bytea[], $3::numeric[], $4::boolean[], $9::bigint[])
        AS d(token_id, holder, delta, counts, named)
    ), up AS (
      INSERT INTO balances AS b (token_id, holder, amount, transfer_count)
      SELECT token_id, holder, delta, named FROM d
      ON CONFLICT (token_id, holder) DO UPDATE SET
        amount = b.amount + excluded.amount,
        transfer_count = b.transfer_count + excluded.transfer_count
      RETURNING b.token_id, b.holder, b.amount, b.transfer_count
    ), changed AS (
      SELECT up.token_id,
        sum(CASE WHEN d.counts THEN (up.amount > 0)::integer - (up.amount - d.delta > 0)::integer ELSE 0 END)
          AS holders
      FROM up JOIN d ON d.token_id = up.token_id AND d.holder = up.holder
      GROUP BY up.token_id
    ), touched AS (
      UPDATE tokens AS t SET
        holder_count = t.holder_count + coalesce(changed.holders, 0),
        transfer_count = t.transfer_count + u.transfers,
        supply_dirty = CASE WHEN $8::boolean THEN u.dirty ELSE greatest(t.supply_dirty, u.dirty) END,
        balance_sum = t.balance_sum + u.summed
      FROM unnest($5::integer[], $6::bigint[], $7::bigint[], $10::numeric[]) AS u(id, transfers, dirty, summed)
        LEFT JOIN changed ON changed.token_id = u.id
      WHERE t.id = u.id
    )
    SELECT token_id, holder FROM up WHERE amount = 0 AND transfer_count = 0`,
  deleteEmptied: `
    DELETE FROM balances AS b USING unnest($1::integer[], $2::bytea[]) AS z(token_id, holder)
    WHERE b.token_id = z.token_id AND b.holder = z.holder AND b.amount = 0 AND b.transfer_count = 0`,
  upsertBlockRefs: `
    INSERT INTO block_refs (chain, number, hash, parent_hash)
    SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::bytea[])
    ON CONFLICT (chain, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash`,
  blockRefs:
    'SELECT number, hash, parent_hash FROM block_refs WHERE chain = $1 AND number BETWEEN $2 AND $3 ORDER BY number',

  journalTokens: 'SELECT DISTINCT token_id FROM recent_block_tokens WHERE chain = $1 AND block_number > $2',
  probeTokens: `
    SELECT id AS token_id FROM tokens AS k WHERE chain = $1
    AND (EXISTS (SELECT 1 FROM transfers AS t WHERE t.token_id = k.id AND t.block_number > $2)
      OR EXISTS (SELECT 1 FROM balance_changes AS c WHERE c.token_id = k.id AND c.block_number > $2))`,
  // Balance changes without a transfer (`IndexBatch.balanceChanges`, migration 0008).
  insertBalanceChanges: `
    INSERT INTO balance_changes (token_id, log_index, block_number, holder, amount)
    SELECT * FROM unnest($1::integer[], $2::integer[], $3::bigint[], $4::bytea[], $5::numeric[])`,
  deleteBalanceChangesAbove: `
    DELETE FROM balance_changes WHERE token_id = ANY($1::integer[]) AND block_number > $2
    RETURNING token_id, holder, amount`,
  // The transfers above the block and their `address_transfers` rows (found by primary key).
  deleteTransfersAbove: `
    WITH removed AS (
      DELETE FROM transfers WHERE token_id = ANY($1::integer[]) AND block_number > $2
      RETURNING token_id, block_number, log_index, from_addr, to_addr, value
    ), unlisted AS (
      DELETE FROM address_transfers AS a USING (
        SELECT from_addr AS address, token_id, block_number, log_index FROM removed
        UNION ALL
        SELECT to_addr, token_id, block_number, log_index FROM removed WHERE to_addr <> from_addr
      ) AS r
      WHERE a.address = r.address AND a.token_id = r.token_id AND a.block_number = r.block_number
        AND a.log_index = r.log_index
    )
    SELECT token_id, from_addr, to_addr, value FROM removed`,
  tokensById: 'SELECT id, address, first_block FROM tokens WHERE id = ANY($1::integer[])',
  dropTokens: `
    WITH gone AS (DELETE FROM balances WHERE token_id = ANY($1::integer[])),
    gone_seeds AS (DELETE FROM seed_balances WHERE token_id = ANY($1::integer[]))
    DELETE FROM tokens WHERE id = ANY($1::integer[])`,

  dirtyTokens:
    'SELECT address FROM tokens WHERE chain = $1 AND supply_dirty IS NOT NULL ORDER BY supply_dirty, id LIMIT $2',
  staleTokens: `
    SELECT address FROM tokens WHERE chain = $1 AND supply_dirty IS NULL AND supply_block < $2
    ORDER BY supply_block, id LIMIT $3`,
  updateSupplies: `
    UPDATE tokens AS t SET total_supply = u.total_supply, cap = u.cap, burned_balance = u.burned_balance,
      supply_block = u.at_block,
      supply_dirty = CASE WHEN t.supply_dirty <= u.clear_below THEN NULL ELSE t.supply_dirty END
    FROM unnest($2::bytea[], $3::numeric[], $4::numeric[], $5::numeric[], $6::bigint[], $7::bigint[])
      AS u(address, total_supply, cap, burned_balance, at_block, clear_below)
    WHERE t.chain = $1 AND t.address = u.address`,

  setExactness: `
    UPDATE tokens AS t SET not_exact_block = u.at_block, not_exact_drift = u.drift,
      not_exact_sampled = u.sampled, not_exact_differing = u.differing
    FROM unnest($2::bytea[], $3::bigint[], $4::numeric[], $5::bigint[], $6::bigint[])
      AS u(address, at_block, drift, sampled, differing)
    WHERE t.chain = $1 AND t.address = u.address`,
  getNotExact: `
    SELECT not_exact_block, not_exact_drift, not_exact_sampled, not_exact_differing FROM tokens
    WHERE chain = $1 AND address = $2 AND not_exact_block IS NOT NULL`,
  countNotExact:
    'SELECT chain, count(*)::integer AS n FROM tokens WHERE not_exact_block IS NOT NULL GROUP BY chain',
  // The running sum (migration 0011, store/balance-sums.ts), as decimal text.
  getBalanceSum: 'SELECT balance_sum::text AS balance_sum FROM tokens WHERE chain = $1 AND address = $2',

  getToken: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE chain = $1 AND address = $2`,
  getTokenLabels:
    'SELECT address, name, symbol, decimals FROM tokens WHERE chain = $1 AND address = ANY($2::bytea[])',
  /*
   * Two steps: the page's keys come from a backward index-only scan of the primary key (the
   * skipped OFFSET rows cost index entries, not one heap fetch each), then only the page's rows
   * are fetched. An index-only scan is also cheaper than any sort-based plan whatever the planner
   * believes about the token's size, so a busy token's deep page can never turn into a sort of all
   * its transfers. Costs: docs/benchmarks.md#postgresql.
   */
  listTransfers: `
    SELECT t.block_number, t.log_index, t.tx_index, t.tx_hash, t.from_addr, t.to_addr, t.value, t.time
    FROM (
      SELECT token_id, block_number, log_index FROM transfers
      WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      ORDER BY block_number DESC, log_index DESC LIMIT $3 OFFSET $4
    ) AS page
    JOIN transfers AS t
      ON t.token_id = page.token_id AND t.block_number = page.block_number AND t.log_index = page.log_index
    ORDER BY page.block_number DESC, page.log_index DESC`,
  // One statement, so the total and the page come from one snapshot; the LEFT JOIN keeps one
  // row (with the total) when the page is empty.
  listTokens: `
    SELECT (SELECT token_count FROM chains WHERE chain = $1) AS total, p.*
    FROM (VALUES (1)) AS one
    LEFT JOIN LATERAL (
      SELECT ${TOKEN_COLUMNS} FROM tokens WHERE chain = $1
      ORDER BY holder_count DESC, transfer_count DESC, address ASC LIMIT $2 OFFSET $3
    ) AS p ON true`,
  scanTransfers: `
    SELECT block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time FROM transfers
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      AND (block_number, log_index) > ($3, $4)
    ORDER BY block_number, log_index LIMIT $5`,
  scanBalanceChanges: `
    SELECT block_number, log_index, holder, amount FROM balance_changes
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      AND (block_number, log_index) > ($3, $4)
    ORDER BY block_number, log_index LIMIT $5`,
  scanBalances: `
    SELECT holder, amount FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      AND ($3::bytea IS NULL OR holder > $3::bytea) AND amount <> 0
    ORDER BY holder LIMIT $4`,
  negativeBalances: `
    SELECT holder, amount FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2) AND ${NEGATIVE_BALANCE}
    ORDER BY holder LIMIT $3`,
  scanHoldings: `
    SELECT holder, amount, transfer_count FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      AND ($3::bytea IS NULL OR holder > $3::bytea)
    ORDER BY holder LIMIT $4`,
  getHolding: `
    SELECT amount, transfer_count FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2) AND holder = $3`,
  // Only the token's label: an address may hold 10,000 tokens (types.ts, TokenLabel).
  listAddressBalances: `
    SELECT t.address, t.name, t.symbol, t.decimals, b.amount AS holding_amount, b.transfer_count AS holding_transfers
    FROM balances AS b JOIN tokens AS t ON t.id = b.token_id
    WHERE b.holder = $2 AND b.amount > 0 AND t.chain = $1 AND ${inChainRange('b.token_id', '$1')}
    ORDER BY t.holder_count DESC, t.transfer_count DESC, t.address ASC`,
  /*
   * An address's page like listTransfers': the keys from an index-only range of
   * address_transfers, then the page's rows. Deep pages skip index entries only (the API's
   * deepest offset is 2,450).
   */
  listAddressTokenTransfers: `
    SELECT ${TRANSFER_COLUMNS_OF_T}
    FROM (
      SELECT token_id, block_number, log_index FROM address_transfers
      WHERE address = $3 AND token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      ORDER BY block_number DESC, log_index DESC LIMIT $4 OFFSET $5
    ) AS page
    JOIN transfers AS t
      ON t.token_id = page.token_id AND t.block_number = page.block_number AND t.log_index = page.log_index
    ORDER BY page.block_number DESC, page.log_index DESC`,
  /*
   * The same over every token of the chain. Transfers of two tokens can share (block, log index)
   * (NEO: asset transfers and NEP-5 notifications are numbered apart); those ties go by token
   * address descending. The index gives (block, log) order, so the planner only sorts each run of
   * equal keys (an incremental sort), looking up the token address of the rows it reads.
   */
  listAddressTransfers: `
    SELECT ${TRANSFER_COLUMNS_OF_T}, k.address AS token
    FROM (
      SELECT a.token_id, a.block_number, a.log_index FROM address_transfers AS a
      WHERE a.address = $2 AND a.chain = $1
      ORDER BY a.block_number DESC, a.log_index DESC, (SELECT address FROM tokens WHERE id = a.token_id) DESC
      LIMIT $3 OFFSET $4
    ) AS page
    JOIN transfers AS t
      ON t.token_id = page.token_id AND t.block_number = page.block_number AND t.log_index = page.log_index
    JOIN tokens AS k ON k.id = page.token_id
    ORDER BY page.block_number DESC, page.log_index DESC, k.address DESC`,
  /*
   * The same on an EVM chain, where a log index is unique in its block across every token, so no
   * two transfers tie on (block, log index): the page is the index range alone, without the token
   * address of each row it skips (a deep page skips 2,450).
   */
  listEvmAddressTransfers: `
    SELECT ${TRANSFER_COLUMNS_OF_T}, k.address AS token
    FROM (
      SELECT a.token_id, a.block_number, a.log_index FROM address_transfers AS a
      WHERE a.address = $2 AND a.chain = $1
      ORDER BY a.block_number DESC, a.log_index DESC
      LIMIT $3 OFFSET $4
    ) AS page
    JOIN transfers AS t
      ON t.token_id = page.token_id AND t.block_number = page.block_number AND t.log_index = page.log_index
    JOIN tokens AS k ON k.id = page.token_id
    ORDER BY page.block_number DESC, page.log_index DESC`,
  listHolders: `
    SELECT holder, amount FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2) AND ${HOLDER_PREDICATE}
    ORDER BY amount DESC, holder ASC LIMIT $3 OFFSET $4`,
  /*
   * The holders after ($3 amount, $4 holder) in listHolders' order, as a seek in two index ranges
   * (reads.ts): the rest of the holders with that amount, then those with less. A walk over a token
   * with a million equal balances never rereads the ones before.
   */
  scanHoldersTied: `
    SELECT holder, amount FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2) AND ${HOLDER_PREDICATE}
      AND amount = $3::numeric AND holder > $4
    ORDER BY holder ASC LIMIT $5`,
  scanHoldersBelow: `
    SELECT holder, amount FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2) AND ${HOLDER_PREDICATE}
      AND amount < $3::numeric
    ORDER BY amount DESC, holder ASC LIMIT $4`,
  scanSeeds: `
    SELECT holder, amount FROM seed_balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      AND ($3::bytea IS NULL OR holder > $3::bytea)
    ORDER BY holder LIMIT $4`,
  getBalance: `
    SELECT amount FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2) AND holder = $3`,

  insertKey: `
    INSERT INTO api_keys (id, hash, label, created_at, revoked_at, rate_per_second, rate_burst, allow_ips)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  listKeys: `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`,
  revokeKey: 'UPDATE api_keys SET revoked_at = $2 WHERE (id = $1 OR hash = $1) AND revoked_at IS NULL',
  findKey: `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE hash = $1`,
  setKeyLimits: `
    UPDATE api_keys SET rate_per_second = $2, rate_burst = $3, allow_ips = $4
    WHERE (id = $1 OR hash = $1) AND revoked_at IS NULL`,

  ...NEO_SQL,
} as const;

/** The temporary table a large batch COPYs its balance changes into (bulk-copy.ts). */
export const STAGED_CHANGES_TABLE = 'pg_temp.staged_balance_changes';

/**
 * `applyChanges` reading the (token, holder) rows from {@link STAGED_CHANGES_TABLE} instead of
 * its array parameters: the same statement text otherwise (derived from it, so the two cannot
 * drift apart), its per-token parameters renumbered from `$5…$8` to `$1…$4` and `$10` (the
 * running sums) to `$5`.
 */
function stagedApplyChanges(applyChanges: string): string {
  const staged = applyChanges.replace(
    /WITH d AS \([\s\S]*?\), up AS/,
    `WITH d AS (SELECT token_id, holder, delta, counts, named FROM ${STAGED_CHANGES_TABLE}), up AS`,
  );
  const renumbered = staged
    .replace(/\$([5-8])\b/g, (_, n: string) => `$${Number(n) - 4}`)
    .replace(/\$10\b/g, '$5');
  if (staged === applyChanges || /\$(?:[6-9]|\d\d)/.test(renumbered)) {
    throw new Error('statements.ts: applyChanges changed shape; update stagedApplyChanges');
  }
  return renumbered;
}

export const STAGED_SQL = {
  createStagedChanges: `
    CREATE TEMPORARY TABLE IF NOT EXISTS ${STAGED_CHANGES_TABLE.slice('pg_temp.'.length)} (
      token_id integer NOT NULL, holder bytea NOT NULL, delta numeric NOT NULL, counts boolean NOT NULL,
      named bigint NOT NULL
    ) ON COMMIT DELETE ROWS`,
  applyStagedChanges: stagedApplyChanges(SQL.applyChanges),
} as const;

export type StatementName = keyof typeof SQL;

/**
 * `COPY … FROM STDIN (FORMAT binary)` of the bulk rows of a large batch (bulk-copy.ts), in the
 * column order copy-binary.ts writes them. They run through copy-from.ts, not as prepared
 * statements.
 */
export const COPY_SQL = {
  transfers:
    'COPY transfers (token_id, log_index, block_number, time, tx_index, tx_hash, from_addr, to_addr, value) FROM STDIN (FORMAT binary)',
  addressTransfers:
    'COPY address_transfers (address, token_id, block_number, log_index, chain) FROM STDIN (FORMAT binary)',
  balanceChanges:
    'COPY balance_changes (token_id, log_index, block_number, holder, amount) FROM STDIN (FORMAT binary)',
  stagedChanges: `COPY ${STAGED_CHANGES_TABLE} (token_id, holder, delta, counts, named) FROM STDIN (FORMAT binary)`,
} as const;

/** The transfer-page statement, for benchmarks that show its plan. */
export const LIST_TRANSFERS_SQL: string = SQL.listTransfers;

/** Runs a named prepared statement on `on` (a transaction's client, or the pool). */
export function run<R extends pg.QueryResultRow>(
  on: pg.Pool | pg.PoolClient,
  name: StatementName,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  return on.query<R>({ name, text: SQL[name], values });
}

/** {@link run} bound to one client or pool, in the shape the NEO helpers (neo-tables.ts) take. */
export function runnerOn(on: pg.Pool | pg.PoolClient) {
  return <R extends pg.QueryResultRow>(name: StatementName, values: unknown[]) => run<R>(on, name, values);
}
