import pg from 'pg';
import { redactUrls, TokenqueryError, UserError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import { type ApiKeyLimitColumns, encodeApiKeyLimits, withApiKeyLimits } from '../api-key-limits.js';
import {
  addDelta,
  admitNewToken,
  checkBatchStart,
  checkRollback,
  checkSeeds,
  NON_HOLDERS,
  netChanges,
  planBatch,
  type TokenWork,
} from '../batch-plan.js';
import {
  batchTransferCount,
  decodeRecentTransfers,
  encodeRecentTransfers,
  needsStoredRecent,
} from '../chain-activity.js';
import type {
  ApiKeyLimits,
  ApiKeyRecord,
  BlockRef,
  ChainActivity,
  ChainStatus,
  Checkpoint,
  FlatStore,
  IndexBatch,
  NeoContractRecord,
  NeoOutputRow,
  NeoTokenPage,
  NeoTokenRecord,
  RollbackResult,
  SeedBalance,
  Store,
  StoreWriter,
  SupplyUpdate,
  TokenPage,
  TokenRecord,
  TransferRecord,
} from '../types.js';
import { storeOfParts } from '../types.js';
import { boolArray, byteaArray, int4Array, int8Array, numericArray } from './binary-arrays.js';
import {
  decodeAmount,
  decodeHex,
  decodeNullableAmount,
  decodeText,
  encodeHex,
  encodeHexDigits,
  encodeText,
} from './codec.js';
import { WRITE_LOCK_CLASS } from './locks.js';
import { MIGRATIONS, MIGRATIONS_TABLE, migrate } from './migrations.js';
import {
  getNeoOutputs,
  getNeoToken,
  hasNeoData,
  listNeoContracts,
  listNeoTokens,
  NEO_SQL,
  writeNeoPart,
} from './neo-tables.js';
import { createWriterElection, type WriteFence } from './writer-election.js';

export interface PostgresStoreOptions {
  /**
   * `postgres://` (or `postgresql://`) connection string, as node-postgres reads it; an
   * `options=-c search_path=...` parameter puts the store in its own schema.
   */
  url: string;
  logger: Logger;
  /** Connections in this process's pool. Default 10. */
  maxConnections?: number;
  /**
   * A read replica (`serve --db-read`): no migrations (a hot standby refuses writes; the primary
   * migrates and the replica replays it), and every session is read-only, so a write by mistake
   * fails instead of reaching a database that is not the primary. Default false.
   */
  readOnly?: boolean;
}

/*
 * Every write transaction of a chain first takes the chain's transaction-level advisory lock
 * (WRITE_LOCK_CLASS, locks.ts). It serializes a chain's writers between processes as SQLite's
 * write lock does, so the checkpoint check and the write cannot interleave, and an
 * `updateSupplies` cannot deadlock against an `applyBatch` on the same token rows. A writer
 * election takes it too, which is what makes the fencing of writer-election.ts exact.
 */

const INT8_OID = 20;
const BYTEA_OID = 17;

/**
 * Result parsing for this store's pools (not pg's global defaults, which other code may rely on):
 * `bigint` columns become numbers (block numbers, counts and times stay far below 2^53), and
 * `bytea` stays in its `\x…` text form, which codec.ts decodes without building a Buffer.
 * `numeric` already arrives as exact decimal text.
 */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === INT8_OID) return (value: string) => Number(value);
    if (oid === BYTEA_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** The connection string without credentials or parameters, for messages. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'the given postgres:// URL';
  }
}

/**
 * A password holding an unescaped `/` (or `@`) ends the URL's authority early, so node-postgres
 * would take a piece of the password for the host name and show it in its error ("getaddrinfo
 * ENOTFOUND <piece>"). Such a URL has an `@` after its authority: refuse it before connecting.
 */
function refuseUnescapedPassword(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return; // node-postgres reports an unparsable URL as "Invalid URL", without any of it
  }
  if (`${parsed.pathname}${parsed.hash}`.includes('@')) {
    throw new UserError(
      'the PostgreSQL connection string is malformed: percent-encode the special characters of its password (@ / ? # as %40 %2F %3F %23)',
    );
  }
}

/** Opens a PostgreSQL store: checks the connection, then brings the schema up to date (migrations.ts). */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const { url, logger } = options;
  const where = describePostgresUrl(url);
  refuseUnescapedPassword(url);
  let pool: pg.Pool;
  try {
    pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      // A server that does not answer (or a pool that stays exhausted) fails the call after
      // 10 s instead of hanging it; keep-alive notices a peer that vanished.
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      types: TYPES,
      application_name: 'tokenquery',
      // The store decodes hex output only; a server configured for `escape` output is overridden.
      onConnect: async (client) => {
        await client.query(
          options.readOnly === true
            ? "SET bytea_output = 'hex'; SET default_transaction_read_only = on"
            : "SET bytea_output = 'hex'",
        );
      },
    });
  } catch (error) {
    throw new UserError(`cannot use the PostgreSQL connection string for ${where}`, {
      cause: error,
      details: error instanceof Error ? error.message : String(error),
    });
  }
  // An idle connection that breaks (server restart) must not crash the process: the pool drops
  // it and the next query opens a new one.
  pool.on('error', (error) => {
    logger.warn({ err: redactUrls(error.message) }, 'idle PostgreSQL connection failed');
  });

  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    throw new UserError(`cannot connect to PostgreSQL at ${where}: ${message}`, { cause: error });
  }
  try {
    if (options.readOnly === true) await checkReplicaSchema(client, where);
    else await migrate(client, logger);
    client.release();
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    await pool.end().catch(() => {});
    throw error;
  }
  return createPostgresStore(pool, { url, logger });
}

/**
 * A replica must hold the schema this version writes: it replays the primary's migrations, which
 * the primary applies when the first process opens it. A replica that lags is waited for (up to
 * 30 s); one that is behind for longer, or ahead, is refused with a clear message.
 */
async function checkReplicaSchema(client: pg.PoolClient, where: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const exists = await client.query<{ table: string | null }>('SELECT to_regclass($1) AS "table"', [
      MIGRATIONS_TABLE,
    ]);
    const version =
      exists.rows[0]?.table == null
        ? 0
        : ((
            await client.query<{ version: number | null }>(
              `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`,
            )
          ).rows[0]?.version ?? 0);
    if (version === MIGRATIONS.length) return;
    if (version > MIGRATIONS.length) {
      throw new UserError(
        `the read replica at ${where} has a newer schema (version ${version}) than this tokenquery understands (${MIGRATIONS.length}); upgrade tokenquery`,
      );
    }
    if (Date.now() > deadline) {
      throw new UserError(
        `the read replica at ${where} has schema version ${version}, this tokenquery needs ${MIGRATIONS.length}: is it a replica of the --db database, and has a process opened that one since the upgrade?`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

interface ChainRow {
  chain: string;
  indexed_block: number | null;
  indexed_hash: string | null;
  head: number;
  last_error: string | null;
  updated_at: number;
  writer_epoch: number;
  writer_id: string | null;
  writer_since: number | null;
  seed_block: number | null;
  holders_partial: boolean;
}

interface TokenRow {
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  total_supply: string | null;
  cap: string | null;
  burned_balance: string | null;
  holder_count: number;
  transfer_count: number;
  first_block: number;
  icon: string;
}

interface ApiKeyRow extends ApiKeyLimitColumns {
  id: string;
  hash: string;
  label: string;
  created_at: number;
  revoked_at: number | null;
}

/** What a batch or a rollback does to one surviving token. */
interface TokenChange {
  id: number;
  deltas: Map<string, bigint>;
  /** Transfers added (negative: removed). */
  transfers: number;
  /** Block of the supply mark, or null for none. */
  dirty: number | null;
}

const TOKEN_COLUMNS =
  'address, name, symbol, decimals, total_supply, cap, burned_balance, holder_count, transfer_count, first_block, icon';
const API_KEY_COLUMNS = 'id, hash, label, created_at, revoked_at, rate_per_second, rate_burst, allow_ips';
const CHAIN_COLUMNS =
  'chain, indexed_block, indexed_hash, head, last_error, updated_at, writer_epoch, writer_id, writer_since, seed_block, holders_partial';

function toChainStatus(row: ChainRow): ChainStatus {
  const status: ChainStatus = {
    chain: row.chain,
    head: row.head,
    indexed: row.indexed_block,
    lastError: row.last_error,
    updatedAt: row.updated_at,
  };
  if (row.writer_epoch > 0) {
    status.writer = { id: row.writer_id ?? '', epoch: row.writer_epoch, since: row.writer_since ?? 0 };
  }
  if (row.seed_block !== null) status.seedBlock = row.seed_block;
  if (row.holders_partial) status.holdersPartial = true;
  return status;
}

/** A transfer row as `listTransfers` and `scanTransfers` select it. */
interface TransferRow {
  block_number: number;
  log_index: number;
  tx_index: number;
  tx_hash: string;
  from_addr: string;
  to_addr: string;
  value: string;
  time: number;
}

function transferOfRow(token: string, row: TransferRow): TransferRecord {
  return {
    token,
    blockNumber: row.block_number,
    logIndex: row.log_index,
    txIndex: row.tx_index,
    txHash: decodeHex(row.tx_hash),
    from: decodeHex(row.from_addr),
    to: decodeHex(row.to_addr),
    value: decodeAmount(row.value),
    time: row.time,
  };
}

function toTokenRecord(chain: string, row: TokenRow): TokenRecord {
  return {
    chain,
    address: decodeHex(row.address),
    name: decodeText(row.name),
    symbol: decodeText(row.symbol),
    decimals: row.decimals,
    totalSupply: decodeNullableAmount(row.total_supply),
    cap: decodeNullableAmount(row.cap),
    burnedBalance: decodeNullableAmount(row.burned_balance),
    holderCount: row.holder_count,
    transferCount: row.transfer_count,
    firstBlock: row.first_block,
    icon: row.icon,
  };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return withApiKeyLimits(
    {
      id: row.id,
      hash: row.hash,
      label: row.label,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
    },
    row,
  );
}

/** `text` cannot hold NUL; an error message is for reading, so NUL becomes U+FFFD there. */
function storableMessage(message: string | null): string | null {
  return message === null ? null : message.replaceAll('\0', '\uFFFD');
}

/*
 * Statements with a fixed text run as named prepared statements (parsed and planned once per
 * connection). Bulk statements take whole columns as array parameters and `unnest` them, so a
 * batch of any size is one statement per table.
 */
const SQL = {
  lockChain: 'SELECT pg_advisory_xact_lock($1, hashtext($2))',
  chainForWrite: 'SELECT indexed_block, journal_floor, writer_epoch, seed_block FROM chains WHERE chain = $1',
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
  // ORDER BY ord: ids follow first appearance in the batch, as in SQLite (tokensNeedingSupply breaks ties by id).
  insertTokens: `
    INSERT INTO tokens (chain, address, name, symbol, decimals, first_block)
    SELECT $1, address, name, symbol, decimals, first_block
    FROM unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bigint[], $6::bigint[])
      WITH ORDINALITY AS u(address, name, symbol, decimals, first_block, ord)
    ORDER BY ord
    RETURNING id, address`,
  insertTransfers: `
    INSERT INTO transfers (token_id, log_index, block_number, time, tx_index, tx_hash, from_addr, to_addr, value)
    SELECT * FROM unnest($1::integer[], $2::integer[], $3::bigint[], $4::bigint[], $5::integer[],
      $6::bytea[], $7::bytea[], $8::bytea[], $9::numeric[])`,
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
   * One statement applies the net balance changes and the token counters. The upsert returns
   * each new amount; the old one is new − delta, so the holder-count change per token needs no
   * second read. Rows that reach zero are returned, to be deleted (a zero balance has no row,
   * as in SQLite). `$8` replaces the supply mark (rollback) instead of raising it (batch).
   */
  applyChanges: `
    WITH d AS (
      SELECT * FROM unnest($1::integer[], $2::bytea[], $3::numeric[], $4::boolean[])
        AS d(token_id, holder, delta, counts)
    ), up AS (
      INSERT INTO balances AS b (token_id, holder, amount)
      SELECT token_id, holder, delta FROM d
      ON CONFLICT (token_id, holder) DO UPDATE SET amount = b.amount + excluded.amount
      RETURNING b.token_id, b.holder, b.amount
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
        supply_dirty = CASE WHEN $8::boolean THEN u.dirty ELSE greatest(t.supply_dirty, u.dirty) END
      FROM unnest($5::integer[], $6::bigint[], $7::bigint[]) AS u(id, transfers, dirty)
        LEFT JOIN changed ON changed.token_id = u.id
      WHERE t.id = u.id
    )
    SELECT token_id, holder FROM up WHERE amount = 0`,
  deleteEmptied: `
    DELETE FROM balances AS b USING unnest($1::integer[], $2::bytea[]) AS z(token_id, holder)
    WHERE b.token_id = z.token_id AND b.holder = z.holder AND b.amount = 0`,
  upsertBlockRefs: `
    INSERT INTO block_refs (chain, number, hash, parent_hash)
    SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::bytea[])
    ON CONFLICT (chain, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash`,
  blockRefs:
    'SELECT number, hash, parent_hash FROM block_refs WHERE chain = $1 AND number BETWEEN $2 AND $3 ORDER BY number',

  journalTokens: 'SELECT DISTINCT token_id FROM recent_block_tokens WHERE chain = $1 AND block_number > $2',
  probeTokens: `
    SELECT id AS token_id FROM tokens AS k WHERE chain = $1
    AND EXISTS (SELECT 1 FROM transfers AS t WHERE t.token_id = k.id AND t.block_number > $2)`,
  deleteTransfersAbove: `
    DELETE FROM transfers WHERE token_id = ANY($1::integer[]) AND block_number > $2
    RETURNING token_id, from_addr, to_addr, value`,
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

  getToken: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE chain = $1 AND address = $2`,
  /*
   * Two steps: the page's keys come from a backward index-only scan of the primary key (the
   * skipped OFFSET rows cost index entries, ~200 per page read, not one heap fetch each), then
   * only the page's rows are fetched. An index-only scan is also cheaper than any sort-based
   * plan whatever the planner believes about the token's size, so a busy token's deep page can
   * never turn into a sort of all its transfers.
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
  scanBalances: `
    SELECT holder, amount FROM balances
    WHERE token_id = (SELECT id FROM tokens WHERE chain = $1 AND address = $2)
      AND ($3::bytea IS NULL OR holder > $3::bytea)
    ORDER BY holder LIMIT $4`,
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

type StatementName = keyof typeof SQL;

/** The transfer-page statement, for benchmarks that show its plan. */
export const LIST_TRANSFERS_SQL: string = SQL.listTransfers;

/**
 * Runs `prepare` (encoding the next statement's parameters) while `inFlight` (the statement
 * before it) executes on the server, then waits for `inFlight`. One connection runs one statement
 * at a time, so this is the overlap there is: the server works while this thread encodes. When
 * `prepare` throws, `inFlight` is still waited for, so that the caller's ROLLBACK follows it.
 */
async function overlap<T>(inFlight: Promise<unknown> | undefined, prepare: () => T): Promise<T> {
  let prepared: T;
  try {
    prepared = prepare();
  } catch (error) {
    await inFlight?.catch(() => {});
    throw error;
  }
  await inFlight;
  return prepared;
}

/** Builds the store over a pool whose database is migrated. */
function createPostgresStore(pool: pg.Pool, context: { url: string; logger: Logger }): Store {
  let closed = false;
  /** The fence of each connection inside a transaction of a writer lease's store. */
  const fences = new WeakMap<pg.PoolClient, WriteFence>();

  /** Runs a named prepared statement on `on` (a transaction's client, or the pool). */
  function run<R extends pg.QueryResultRow>(
    on: pg.Pool | pg.PoolClient,
    name: StatementName,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return on.query<R>({ name, text: SQL[name], values });
  }

  /** {@link run} on the pool, in the shape the NEO helpers take. */
  const onPool = <R extends pg.QueryResultRow>(name: StatementName, values: unknown[]) =>
    run<R>(pool, name, values);

  /**
   * Runs `fn` in a transaction on one connection; rolls back on any error. With a `fence` (a
   * writer lease's write), `lockChain` checks it inside the transaction.
   */
  async function transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, fence?: WriteFence): Promise<T> {
    fence?.assertHeld();
    const client = await pool.connect();
    if (fence !== undefined) fences.set(client, fence);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        // The connection is unusable: the pool must discard it, not hand it out again.
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      }
      throw error;
    } finally {
      fences.delete(client);
      client.release(broken);
    }
  }

  /**
   * Takes the chain's write lock and reads its checkpoint row. In a writer lease's transaction it
   * also checks, under that lock, that the lease is still the chain's newest election: fencing
   * costs no extra round trip, and an election (which takes the same lock) cannot slip in
   * between the check and the commit.
   */
  async function lockChain(
    client: pg.PoolClient,
    chain: string,
  ): Promise<{ indexed_block: number | null; journal_floor: number; seed_block: number | null } | undefined> {
    await run(client, 'lockChain', [WRITE_LOCK_CLASS, chain]);
    const result = await run<{
      indexed_block: number | null;
      journal_floor: number;
      writer_epoch: number;
      seed_block: number | null;
    }>(client, 'chainForWrite', [chain]);
    const row = result.rows[0];
    const fence = fences.get(client);
    if (fence !== undefined) {
      if (chain !== fence.chain) {
        throw new TokenqueryError(`a writer lease of ${fence.chain} cannot write ${chain}`);
      }
      const stored = row?.writer_epoch ?? 0;
      if (stored !== fence.epoch) throw fence.superseded(stored);
    }
    return row;
  }

  /** A new writer's election (writer-election.ts), on its lock connection: returns the new epoch. */
  async function electWriter(client: pg.ClientBase, chain: string, writerId: string): Promise<number> {
    await client.query('BEGIN');
    try {
      await client.query({ name: 'lockChain', text: SQL.lockChain, values: [WRITE_LOCK_CLASS, chain] });
      const result = await client.query<{ writer_epoch: string | number }>({
        name: 'electWriter',
        text: SQL.electWriter,
        values: [chain, writerId, Date.now()],
      });
      await client.query('COMMIT');
      return Number(result.rows[0]!.writer_epoch);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /**
   * Parameters of the statement that applies net balance changes and counter updates for the
   * given tokens (`applyChanges`). `replaceDirty` sets the supply mark (rollback) instead of
   * raising it (batch).
   */
  function prepareChanges(
    changes: TokenChange[],
    replaceDirty: boolean,
    encoded: (address: string) => string = encodeHexDigits,
  ): unknown[] {
    const tokenIds: number[] = [];
    const holders: string[] = [];
    const deltas: bigint[] = [];
    const counts: boolean[] = [];
    for (const { id, deltas: map } of changes) {
      const rows: [string, bigint, boolean][] = [];
      for (const [holder, delta] of map) {
        if (delta !== 0n) rows.push([encoded(holder), delta, !NON_HOLDERS.has(holder)]);
      }
      // Sorted keys walk the (token_id, holder) B-tree in order.
      rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      for (const [holder, delta, count] of rows) {
        tokenIds.push(id);
        holders.push(holder);
        deltas.push(delta);
        counts.push(count);
      }
    }
    return [
      int4Array(tokenIds),
      byteaArray(holders),
      numericArray(deltas),
      boolArray(counts),
      int4Array(changes.map((c) => c.id)),
      int8Array(changes.map((c) => c.transfers)),
      int8Array(changes.map((c) => c.dirty)),
      replaceDirty,
    ];
  }

  /** Runs `applyChanges`, then deletes the balances that reached zero. */
  async function executeChanges(client: pg.PoolClient, params: unknown[]): Promise<void> {
    const emptied = await run<{ token_id: number; holder: string }>(client, 'applyChanges', params);
    if (emptied.rows.length > 0) {
      await run(client, 'deleteEmptied', [
        int4Array(emptied.rows.map((r) => r.token_id)),
        byteaArray(emptied.rows.map((r) => r.holder.slice(2))),
      ]);
    }
  }

  async function applyBatchIn(client: pg.PoolClient, batch: IndexBatch): Promise<void> {
    const { chain } = batch;
    // Read under the chain's write lock, so the check and the write cannot interleave with another writer.
    const stored = await lockChain(client, chain);
    checkBatchStart(batch, stored?.indexed_block);
    const work = planBatch(batch);
    const seeds = checkSeeds(
      batch,
      { indexedBlock: stored?.indexed_block ?? null, seedBlock: stored?.seed_block ?? null },
      work,
    );

    // Addresses repeat across transfers and balance keys: encode each once per batch.
    const encodedCache = new Map<string, string>();
    const encode = (value: string): string => {
      let digits = encodedCache.get(value);
      if (digits === undefined) {
        digits = encodeHexDigits(value);
        encodedCache.set(value, digits);
      }
      return digits;
    };

    // Token ids: the known ones in one read, the new ones in one insert.
    const tokens = [...work.values()];
    const ids = new Map<string, number>();
    let newTokens = 0;
    if (tokens.length > 0) {
      const known = await run<{ id: number; address: string }>(client, 'knownTokens', [
        chain,
        byteaArray(tokens.map((t) => encode(t.address))),
      ]);
      for (const row of known.rows) ids.set(row.address.slice(2), row.id);
      const metadata = new Map(batch.tokens.map((token) => [token.address, token]));
      const fresh: TokenWork[] = [];
      for (const token of tokens) {
        if (ids.has(encode(token.address))) continue;
        admitNewToken(chain, metadata, token);
        fresh.push(token);
      }
      if (fresh.length > 0) {
        const inserted = await run<{ id: number; address: string }>(client, 'insertTokens', [
          chain,
          byteaArray(fresh.map((t) => encode(t.address))),
          byteaArray(fresh.map((t) => encodeText(metadata.get(t.address)!.name).slice(2))),
          byteaArray(fresh.map((t) => encodeText(metadata.get(t.address)!.symbol).slice(2))),
          int8Array(fresh.map((t) => metadata.get(t.address)!.decimals)),
          int8Array(fresh.map((t) => t.firstBlock)),
        ]);
        for (const row of inserted.rows) ids.set(row.address.slice(2), row.id);
        newTokens = fresh.length;
      }
    }

    if (seeds.length > 0) await addSeeds(client, seeds, ids, work, encode);

    const journalFrom = batch.pruneBlocksBelow;
    // Every transfer of the work: the batch's own and, on NEO, its asset transfers.
    let count = 0;
    for (const token of tokens) count += token.transfers.length;
    const columns = {
      tokenId: new Array<number>(count),
      logIndex: new Array<number>(count),
      block: new Array<number>(count),
      time: new Array<number>(count),
      txIndex: new Array<number>(count),
      txHash: new Array<string>(count),
      from: new Array<string>(count),
      to: new Array<string>(count),
      value: new Array<bigint>(count),
    };
    const journal = new Set<string>();
    const journalBlocks: number[] = [];
    const journalTokens: number[] = [];
    const changes: TokenChange[] = [];
    let row = 0;
    // Grouped by token, in chain order within each: a token's rows of one batch share heap pages.
    for (const token of tokens) {
      const id = ids.get(encode(token.address))!;
      changes.push({ id, deltas: token.deltas, transfers: token.transfers.length, dirty: token.dirtyBlock });
      for (const t of token.transfers) {
        columns.tokenId[row] = id;
        columns.logIndex[row] = t.logIndex;
        columns.block[row] = t.blockNumber;
        columns.time[row] = t.time;
        columns.txIndex[row] = t.txIndex;
        columns.txHash[row] = encodeHexDigits(t.txHash);
        columns.from[row] = encode(t.from);
        columns.to[row] = encode(t.to);
        columns.value[row] = t.value;
        row++;
        if (t.blockNumber >= journalFrom) {
          const entry = `${t.blockNumber}:${id}`;
          if (!journal.has(entry)) {
            journal.add(entry);
            journalBlocks.push(t.blockNumber);
            journalTokens.push(id);
          }
        }
      }
    }
    // One statement is in flight while this thread encodes the parameters of the next (see overlap()).
    const inserting =
      count > 0
        ? run(client, 'insertTransfers', [
            int4Array(columns.tokenId),
            int4Array(columns.logIndex),
            int8Array(columns.block),
            int8Array(columns.time),
            int4Array(columns.txIndex),
            byteaArray(columns.txHash),
            byteaArray(columns.from),
            byteaArray(columns.to),
            numericArray(columns.value),
          ])
        : undefined;
    const changeParams = await overlap(inserting, () =>
      changes.length > 0 ? prepareChanges(changes, false, encode) : null,
    );
    if (journalBlocks.length > 0) {
      await run(client, 'insertJournal', [chain, int8Array(journalBlocks), int4Array(journalTokens)]);
    }
    const changing = changeParams === null ? undefined : executeChanges(client, changeParams);
    const refParams = await overlap(changing, () => {
      if (batch.blocks.length === 0) return null;
      // Last one wins when a block appears twice, as with SQLite's row-by-row upsert.
      const refs = new Map<number, BlockRef>();
      for (const ref of batch.blocks) refs.set(ref.number, ref);
      const list = [...refs.values()];
      return [
        chain,
        int8Array(list.map((r) => r.number)),
        byteaArray(list.map((r) => encodeHexDigits(r.hash))),
        byteaArray(list.map((r) => encodeHexDigits(r.parentHash))),
      ];
    });
    if (refParams !== null) await run(client, 'upsertBlockRefs', refParams);
    if (batch.neo !== undefined) {
      await writeNeoPart((name, values) => run(client, name, values), chain, batch.neo);
    }
    // A small batch tops its newest transfers up with those stored before it (the chain is locked).
    const storedRecent = needsStoredRecent(batch)
      ? ((await run<{ recent_transfers: string | null }>(client, 'chainActivity', [chain])).rows[0]
          ?.recent_transfers ?? null)
      : null;
    await run(client, 'afterBatch', [
      chain,
      batch.toBlock,
      batch.toBlockHash === null ? null : encodeHex(batch.toBlockHash),
      batch.head,
      Date.now(),
      newTokens,
      batch.pruneBlocksBelow,
      batchTransferCount(batch),
      encodeRecentTransfers(batch, storedRecent),
      batch.seeds?.block ?? null,
      batch.seeds?.partial === true,
    ]);
  }

  /**
   * Records the batch's starting balances and adds those of pairs not seeded before to the
   * holders' balance changes, so `applyChanges` applies them with the transfers.
   */
  async function addSeeds(
    client: pg.PoolClient,
    seeds: SeedBalance[],
    ids: ReadonlyMap<string, number>,
    work: Map<string, TokenWork>,
    encode: (address: string) => string,
  ): Promise<void> {
    const byId = new Map<number, TokenWork>();
    const amounts = new Map<string, bigint>();
    const tokenIds: number[] = [];
    for (const seed of seeds) {
      const id = ids.get(encode(seed.token))!;
      tokenIds.push(id);
      byId.set(id, work.get(seed.token)!);
      amounts.set(`${id}:${seed.holder}`, seed.amount);
    }
    const inserted = await run<{ token_id: number; holder: string }>(client, 'insertSeeds', [
      int4Array(tokenIds),
      byteaArray(seeds.map((seed) => encode(seed.holder))),
      numericArray(seeds.map((seed) => seed.amount)),
    ]);
    for (const row of inserted.rows) {
      const holder = decodeHex(row.holder);
      const amount = amounts.get(`${row.token_id}:${holder}`)!;
      if (amount !== 0n) addDelta(byId.get(row.token_id)!.deltas, holder, amount);
    }
  }

  async function rollbackIn(
    client: pg.PoolClient,
    chain: string,
    toBlock: number,
    toBlockHash: string | null,
  ): Promise<RollbackResult> {
    const current = await lockChain(client, chain);
    const neoData = await hasNeoData((name, values) => run(client, name, values), chain);
    checkRollback(chain, current?.indexed_block, toBlock, neoData);
    // The journal names every token touched in blocks >= journal_floor; below that, probe all tokens.
    const candidates = await run<{ token_id: number }>(
      client,
      toBlock + 1 >= current.journal_floor ? 'journalTokens' : 'probeTokens',
      [chain, toBlock],
    );
    const tokenIds = candidates.rows.map((r) => r.token_id);

    const affected: string[] = [];
    let removedTransfers = 0;
    let removedTokens = 0;
    if (tokenIds.length > 0) {
      const removed = await run<{ token_id: number; from_addr: string; to_addr: string; value: string }>(
        client,
        'deleteTransfersAbove',
        [int4Array(tokenIds), toBlock],
      );
      removedTransfers = removed.rows.length;
      const byToken = new Map<number, typeof removed.rows>();
      for (const r of removed.rows) {
        let list = byToken.get(r.token_id);
        if (list === undefined) {
          list = [];
          byToken.set(r.token_id, list);
        }
        list.push(r);
      }
      const tokens = await run<{ id: number; address: string; first_block: number }>(client, 'tokensById', [
        int4Array([...byToken.keys()]),
      ]);
      const dropped: number[] = [];
      const changes: TokenChange[] = [];
      for (const token of tokens.rows) {
        const rows = byToken.get(token.id)!;
        affected.push(decodeHex(token.address));
        if (token.first_block > toBlock) {
          // Every transfer of the token is gone, so it was never seen: drop it whole.
          dropped.push(token.id);
          continue;
        }
        const deltas = netChanges(
          rows,
          (r) => [decodeHex(r.from_addr), decodeHex(r.to_addr), decodeAmount(r.value)] as const,
          -1n,
        );
        // A supply read at or after the common ancestor reflects the surviving history.
        changes.push({ id: token.id, deltas, transfers: -rows.length, dirty: toBlock });
      }
      if (dropped.length > 0) {
        await run(client, 'dropTokens', [int4Array(dropped)]);
        removedTokens = dropped.length;
      }
      if (changes.length > 0) await executeChanges(client, prepareChanges(changes, true));
    }
    await run(client, 'afterRollback', [
      chain,
      toBlock,
      toBlockHash === null ? null : encodeHex(toBlockHash),
      Date.now(),
      removedTokens,
      removedTransfers,
    ]);
    affected.sort();
    return { affectedTokens: affected, removedTransfers };
  }

  async function updateSuppliesIn(
    client: pg.PoolClient,
    chain: string,
    updates: SupplyUpdate[],
  ): Promise<void> {
    // Applied one after another, the last update of a token sets its values, and the mark is
    // cleared when any of them was read at or after it: the same as one row per token with the
    // last values and the newest block.
    const merged = new Map<string, { update: SupplyUpdate; newest: number }>();
    for (const update of updates) {
      const seen = merged.get(update.address);
      merged.set(update.address, {
        update,
        newest: Math.max(seen?.newest ?? update.atBlock, update.atBlock),
      });
    }
    const list = [...merged.values()];
    await lockChain(client, chain);
    await run(client, 'updateSupplies', [
      chain,
      byteaArray(list.map((m) => encodeHexDigits(m.update.address))),
      numericArray(list.map((m) => m.update.totalSupply)),
      numericArray(list.map((m) => m.update.cap)),
      numericArray(list.map((m) => m.update.burnedBalance)),
      int8Array(list.map((m) => m.update.atBlock)),
      int8Array(list.map((m) => m.newest)),
    ]);
  }

  const flat: FlatStore = {
    async getCheckpoint(chain: string): Promise<Checkpoint | null> {
      const row = (await run<ChainRow>(pool, 'getChain', [chain])).rows[0];
      if (row?.indexed_block == null) return null;
      return {
        block: row.indexed_block,
        hash: row.indexed_hash === null ? null : decodeHex(row.indexed_hash),
      };
    },

    async applyBatch(batch: IndexBatch): Promise<void> {
      await transaction((client) => applyBatchIn(client, batch));
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
      return transaction((client) => rollbackIn(client, chain, toBlock, toBlockHash));
    },

    async tokensNeedingSupply(chain: string, staleBefore: number, limit: number): Promise<string[]> {
      const dirty = (await run<{ address: string }>(pool, 'dirtyTokens', [chain, limit])).rows;
      const stale =
        dirty.length < limit
          ? (await run<{ address: string }>(pool, 'staleTokens', [chain, staleBefore, limit - dirty.length]))
              .rows
          : [];
      return [...dirty, ...stale].map((row) => decodeHex(row.address));
    },

    async updateSupplies(chain: string, updates: SupplyUpdate[]): Promise<void> {
      if (updates.length === 0) return;
      await transaction((client) => updateSuppliesIn(client, chain, updates));
    },

    async setChainStatus(chain: string, status: { head?: number; lastError?: string | null }): Promise<void> {
      await run(pool, 'setStatus', [
        chain,
        status.head ?? null,
        storableMessage(status.lastError ?? null),
        status.lastError !== undefined,
        Date.now(),
      ]);
    },

    async getChainStatus(chain: string): Promise<ChainStatus | null> {
      const row = (await run<ChainRow>(pool, 'getChain', [chain])).rows[0];
      return row === undefined ? null : toChainStatus(row);
    },

    async listChainStatuses(): Promise<ChainStatus[]> {
      return (await run<ChainRow>(pool, 'listChains', [])).rows.map(toChainStatus);
    },

    async getChainActivity(chain: string): Promise<ChainActivity | null> {
      const result = await run<{ transfer_count: number; recent_transfers: string | null }>(
        pool,
        'chainActivity',
        [chain],
      );
      const row = result.rows[0];
      if (row === undefined) return null;
      return { chain, transfers: row.transfer_count, recent: decodeRecentTransfers(row.recent_transfers) };
    },

    async storageBytes(): Promise<number> {
      return (await run<{ bytes: number }>(pool, 'databaseSize', [])).rows[0]?.bytes ?? 0;
    },

    async getToken(chain: string, address: string): Promise<TokenRecord | null> {
      const row = (await run<TokenRow>(pool, 'getToken', [chain, encodeHex(address)])).rows[0];
      return row === undefined ? null : toTokenRecord(chain, row);
    },

    async listTransfers(
      chain: string,
      token: string,
      offset: number,
      limit: number,
    ): Promise<TransferRecord[]> {
      const result = await run<TransferRow>(pool, 'listTransfers', [chain, encodeHex(token), limit, offset]);
      return result.rows.map((row) => transferOfRow(token, row));
    },

    async scanTransfers(chain, token, after, limit): Promise<TransferRecord[]> {
      const result = await run<TransferRow>(pool, 'scanTransfers', [
        chain,
        encodeHex(token),
        after?.blockNumber ?? -1,
        after?.logIndex ?? -1,
        limit,
      ]);
      return result.rows.map((row) => transferOfRow(token, row));
    },

    async scanBalances(chain, token, afterHolder, limit) {
      const result = await run<{ holder: string; amount: string }>(pool, 'scanBalances', [
        chain,
        encodeHex(token),
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      ]);
      return result.rows.map((row) => ({ holder: decodeHex(row.holder), amount: decodeAmount(row.amount) }));
    },

    async scanSeedBalances(chain, token, afterHolder, limit): Promise<SeedBalance[]> {
      const result = await run<{ holder: string; amount: string }>(pool, 'scanSeeds', [
        chain,
        encodeHex(token),
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      ]);
      return result.rows.map((row) => ({
        token,
        holder: decodeHex(row.holder),
        amount: decodeAmount(row.amount),
      }));
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

    async listTokens(chain: string, offset: number, limit: number): Promise<TokenPage> {
      const result = await run<TokenRow & { total: number | null }>(pool, 'listTokens', [
        chain,
        limit,
        offset,
      ]);
      const tokens: TokenRecord[] = [];
      for (const row of result.rows) if (row.address !== null) tokens.push(toTokenRecord(chain, row));
      return { total: result.rows[0]?.total ?? 0, tokens };
    },

    async getBalance(chain: string, token: string, holder: string): Promise<bigint> {
      const result = await run<{ amount: string }>(pool, 'getBalance', [
        chain,
        encodeHex(token),
        encodeHex(holder),
      ]);
      const row = result.rows[0];
      return row === undefined ? 0n : decodeAmount(row.amount);
    },

    async getNeoOutputs(
      chain: string,
      refs: readonly { txid: string; n: number }[],
    ): Promise<NeoOutputRow[]> {
      return getNeoOutputs(onPool, chain, refs);
    },

    async getNeoToken(chain: string, address: string): Promise<NeoTokenRecord | null> {
      return getNeoToken(onPool, chain, address);
    },

    async listNeoTokens(chain: string, offset: number, limit: number): Promise<NeoTokenPage> {
      return listNeoTokens(onPool, chain, offset, limit);
    },

    async listNeoContracts(chain: string, offset: number, limit: number): Promise<NeoContractRecord[]> {
      return listNeoContracts(onPool, chain, offset, limit);
    },

    async createApiKey(key: ApiKeyRecord): Promise<void> {
      try {
        await run(pool, 'insertKey', [
          key.id,
          key.hash,
          key.label,
          key.createdAt,
          key.revokedAt,
          ...encodeApiKeyLimits(key),
        ]);
      } catch (error) {
        if (error instanceof pg.DatabaseError && error.code === '23505') {
          throw new TokenqueryError('an API key with this id or hash already exists', { cause: error });
        }
        throw error;
      }
    },

    async listApiKeys(): Promise<ApiKeyRecord[]> {
      return (await run<ApiKeyRow>(pool, 'listKeys', [])).rows.map(toApiKey);
    },

    async revokeApiKey(idOrHash: string, at: number): Promise<boolean> {
      return ((await run(pool, 'revokeKey', [idOrHash, at])).rowCount ?? 0) > 0;
    },

    async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
      const row = (await run<ApiKeyRow>(pool, 'findKey', [hash])).rows[0];
      return row === undefined ? null : toApiKey(row);
    },

    async setApiKeyLimits(idOrHash: string, limits: ApiKeyLimits): Promise<boolean> {
      const result = await run(pool, 'setKeyLimits', [idOrHash, ...encodeApiKeyLimits(limits)]);
      return (result.rowCount ?? 0) > 0;
    },
  };

  const store: { -readonly [K in keyof Store]: Store[K] } = storeOfParts('postgres', flat, async () => {
    if (closed) return;
    closed = true;
    await election.close();
    await pool.end();
  });

  /** The writer a writer lease writes through: every write of the lease's chain is fenced. */
  function fencedWriter(fence: WriteFence): StoreWriter {
    return {
      ...flat,
      async applyBatch(batch: IndexBatch): Promise<void> {
        await transaction((client) => applyBatchIn(client, batch), fence);
      },
      async rollback(chain: string, toBlock: number, toBlockHash: string | null): Promise<RollbackResult> {
        return transaction((client) => rollbackIn(client, chain, toBlock, toBlockHash), fence);
      },
      async updateSupplies(chain: string, updates: SupplyUpdate[]): Promise<void> {
        if (updates.length === 0) return;
        await transaction((client) => updateSuppliesIn(client, chain, updates), fence);
      },
      async setChainStatus(chain: string, status: { head?: number; lastError?: string | null }) {
        if (chain !== fence.chain) {
          throw new TokenqueryError(`a writer lease of ${fence.chain} cannot write ${chain}`);
        }
        fence.assertHeld();
        const result = await run(pool, 'setStatusFenced', [
          chain,
          status.head ?? null,
          storableMessage(status.lastError ?? null),
          status.lastError !== undefined,
          Date.now(),
          fence.epoch,
        ]);
        if ((result.rowCount ?? 0) === 0) throw fence.superseded(null);
      },
    };
  }

  const election = createWriterElection({
    url: context.url,
    logger: context.logger,
    elect: electWriter,
    fencedWriter,
    currentWriter: async (chain) => (await store.reader.getChainStatus(chain))?.writer ?? null,
  });
  store.acquireWriterLease = (chain, options) => election.acquire(chain, options);
  return store;
}
