import { mkdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { TokenqueryError, UserError } from '../../internal/errors.js';
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
import { decodeRecentTransfers, encodeRecentTransfers } from '../chain-activity.js';
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
import { batchFromWire, planWire, type WireBatch } from './batch-wire.js';
import {
  amountHexDigits,
  decodeAmount,
  decodeHex,
  decodeNullableAmount,
  encodeHex,
  encodeNullableAmount,
  isLowerHex,
  pushAmountParams,
  pushHexParams,
  type SqlValue,
  UNHEX_OR_VALUE,
} from './codec.js';
import { migrate } from './migrations.js';
import { createNeoTables } from './neo-tables.js';

export interface SqliteStoreOptions {
  /** Database file; its parent directory is created when missing. `:memory:` works for throwaway stores. */
  path: string;
  logger: Logger;
  /** How long a statement waits for another process's write lock. Default 10 000 ms. */
  busyTimeoutMs?: number;
  /** Balances the writer keeps in memory (see `balanceCache`). Default 500,000 (~75 MiB). */
  balanceCacheSize?: number;
  /** SQLite's page cache of this connection, in KiB. Default 32 MiB (for the writer's balance pages). */
  cacheKiB?: number;
}

/** The SQLite store's writer, with what its writer thread alone uses of it. */
export interface SqliteWriter extends StoreWriter {
  /** `applyBatch` of a batch as the writer thread receives it, without a transfer object each. */
  applyWireBatch(wire: WireBatch): Promise<void>;
}

/** The SQLite store. */
export interface SqliteStore extends Store {
  readonly writer: SqliteWriter;
}

/** Opens (creating and migrating when needed) a SQLite store. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const { path, logger } = options;
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  let db: Database.Database;
  try {
    if (path !== ':memory:' && path !== '') mkdirSync(dirname(path), { recursive: true });
    db = new Database(path, { timeout: busyTimeoutMs });
  } catch (error) {
    throw new UserError(`cannot open the SQLite database ${path}`, {
      cause: error,
      details: error instanceof Error ? error.message : String(error),
    });
  }
  try {
    // Several processes (index, serve, keys) share one file: readers never block the writer in
    // WAL mode, and a second writer waits up to busy_timeout instead of failing at once.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL syncs at checkpoints only: a committed transaction survives a crash of
    // the process (it is in the WAL file), and only an OS crash or power loss can lose the last
    // few commits, never consistency. The indexer then simply re-indexes from its checkpoint.
    db.pragma('synchronous = NORMAL');
    db.pragma(`cache_size = -${Math.max(64, Math.floor(options.cacheKiB ?? 32 * 1024))}`);
    db.pragma('temp_store = MEMORY');
    // Checkpoint after 16 Ki pages (64 MiB) of WAL instead of SQLite's 1 000: indexing rewrites the
    // same balance pages batch after batch, and a bigger WAL copies each page back (and fsyncs)
    // once per checkpoint instead of once per batch. Measured ~1.5x on applyBatch. The WAL file
    // is truncated back to this size after a checkpoint.
    db.pragma('wal_autocheckpoint = 16384');
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    migrate(db, logger);
    return createSqliteStore(db, options.balanceCacheSize ?? DEFAULT_BALANCE_CACHE_SIZE);
  } catch (error) {
    db.close();
    throw error;
  }
}

interface ChainRow {
  chain: string;
  indexed_block: number | null;
  indexed_hash: SqlValue;
  head: number;
  last_error: string | null;
  updated_at: number;
  token_count: number;
  journal_floor: number;
  transfer_count: number;
  recent_transfers: string | null;
  seed_block: number | null;
  holders_partial: number;
  balances_block: number | null;
}

interface ApiKeyRow extends ApiKeyLimitColumns {
  id: string;
  hash: string;
  label: string;
  created_at: number;
  revoked_at: number | null;
}

function toChainStatus(row: ChainRow): ChainStatus {
  const status: ChainStatus = {
    chain: row.chain,
    head: row.head,
    indexed: row.indexed_block,
    lastError: row.last_error,
    updatedAt: row.updated_at,
  };
  if (row.seed_block !== null) status.seedBlock = row.seed_block;
  if (row.holders_partial !== 0) status.holdersPartial = true;
  if (row.balances_block !== null) status.balancesBlock = row.balances_block;
  return status;
}

/**
 * SQL giving a column written by `encodeHex` back as its original text: `0x` + lower-case hex for a
 * BLOB, the stored TEXT otherwise. Equal to `decodeHex` of the column, computed by SQLite.
 */
function hexText(column: string): string {
  return `CASE WHEN typeof(${column}) = 'blob' THEN '0x' || lower(hex(${column})) ELSE ${column} END`;
}

/**
 * SQL giving a column written by `encodeAmount` as something `decodeAmount` reads without a Buffer:
 * a BLOB becomes `0x0` + its hex (`BigInt` reads it; the extra 0 keeps an empty BLOB valid); an
 * INTEGER (a JS number, exact below 2^53), decimal TEXT and NULL pass unchanged.
 */
function amountText(column: string): string {
  return `CASE WHEN typeof(${column}) = 'blob' THEN '0x0' || hex(${column}) ELSE ${column} END`;
}

/** (holder, amount) rows of one token in `table` (balances or seeds), by holder after a cursor. */
function scanHolderAmounts(db: Database.Database, table: 'balances' | 'seed_balances') {
  return db
    .prepare<[string, SqlValue, number, SqlValue, number], [string, SqlValue]>(`
      SELECT ${hexText('holder')}, ${amountText('amount')} FROM ${table}
      WHERE token_id = (SELECT id FROM tokens WHERE chain = ? AND address = ?)
        AND (? OR holder > ?)
      ORDER BY holder LIMIT +?`)
    .raw();
}

/** A token row as the API reads it: {@link TOKEN_READ_COLUMNS}, in order. */
type TokenReadRow = [
  address: string,
  name: string,
  symbol: string,
  decimals: number,
  totalSupply: SqlValue,
  cap: SqlValue,
  burnedBalance: SqlValue,
  holderCount: number,
  transferCount: number,
  firstBlock: number,
  icon: string,
];

/** A Token List row: the chain's token count (the same on every row), then a {@link TokenReadRow}. */
type TokenListRow = [total: number | null, ...TokenReadRow];

const TOKEN_READ_COLUMNS = [
  hexText('address'),
  'name',
  'symbol',
  'decimals',
  amountText('total_supply'),
  amountText('cap'),
  amountText('burned_balance'),
  'holder_count',
  'transfer_count',
  'first_block',
  'icon',
].join(', ');

/** {@link TokenReadRow} (from its `offset`-th value on) → TokenRecord. */
function readTokenRecord(chain: string, row: unknown[], offset = 0): TokenRecord {
  return {
    chain,
    address: row[offset] as string,
    name: row[offset + 1] as string,
    symbol: row[offset + 2] as string,
    decimals: row[offset + 3] as number,
    totalSupply: decodeNullableAmount(row[offset + 4] as SqlValue),
    cap: decodeNullableAmount(row[offset + 5] as SqlValue),
    burnedBalance: decodeNullableAmount(row[offset + 6] as SqlValue),
    holderCount: row[offset + 7] as number,
    transferCount: row[offset + 8] as number,
    firstBlock: row[offset + 9] as number,
    icon: row[offset + 10] as string,
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

/**
 * Many rows per statement: one native call per chunk of rows instead of one per row, which
 * saves much of better-sqlite3's per-call cost in bulk writes. A statement for each chunk size
 * is prepared on first use and kept.
 */
function multiRow(db: Database.Database, build: (rows: number) => string, width: number, maxRows: number) {
  const cache = new Map<number, Database.Statement>();
  const statement = (rows: number): Database.Statement => {
    let prepared = cache.get(rows);
    if (prepared === undefined) {
      prepared = db.prepare(build(rows));
      cache.set(rows, prepared);
    }
    return prepared;
  };
  return {
    /** Runs the statement over `flat` (`width` values per row), `maxRows` rows at a time. */
    run(flat: unknown[]): void {
      const chunk = maxRows * width;
      for (let start = 0; start < flat.length; start += chunk) {
        const part = flat.length <= chunk ? flat : flat.slice(start, start + chunk);
        statement(part.length / width).run(part);
      }
    },
    /** Raw rows of the statement for `rows` rows, bound to `params`. */
    all(rows: number, params: unknown[]): unknown[][] {
      return statement(rows).raw().all(params) as unknown[][];
    },
  };
}

const ROWS_PER_STATEMENT = 100;

/** A stored transfer row's `[from, to, value]` (`from_addr`, `to_addr`, `value`), decoded. */
const decodeTransferRow = ([from, to, value]: [SqlValue, SqlValue, SqlValue]) =>
  [decodeHex(from), decodeHex(to), decodeAmount(value)] as const;

/**
 * The rows of a multi-row statement, written in place into one reused parameter array and run
 * each time it is full (the rest, fewer rows, by `flush`): one native call and one result object
 * per `rows` rows instead of one per row. For the hot inserts of a batch, where building a fresh
 * parameter array per chunk (as `multiRow` takes it) would cost what the statement calls save.
 * Measured on the transfers table: 1.8 µs a row against 2.2 for one statement call per row.
 */
function bufferedRows(db: Database.Database, build: (rows: number) => string, width: number, rows: number) {
  const full = db.prepare(build(rows));
  const tail = multiRow(db, build, width, rows);
  const params: unknown[] = new Array(width * rows);
  let filled = 0;
  return {
    params,
    /** Where in `params` the next row's `width` values go; runs the full statement first if need be. */
    next(): number {
      if (filled === params.length) {
        full.run(params);
        filled = 0;
      }
      const at = filled;
      filled += width;
      return at;
    },
    /** Runs the rows not yet written. */
    flush(): void {
      if (filled === 0) return;
      const part = filled === params.length ? params : params.slice(0, filled);
      filled = 0;
      tail.run(part);
    },
    /** Forgets rows not yet written (a transaction that failed part-way). */
    discard(): void {
      filled = 0;
    },
  };
}

/**
 * Bounds on balances written behind the checkpoint (see `unwritten` in the store): past either,
 * the batch writes them all. About 150 bytes an entry; a replay after a crash reads at most
 * this many transfers back (seconds).
 */
const MAX_UNWRITTEN_BALANCES = 250_000;
const MAX_UNWRITTEN_TRANSFERS = 1_000_000;

/** Addresses whose bytes the writer keeps at most (see `bytesOfAddress`). */
const ADDRESS_BYTES_KEPT = 200_000;

/** Rows per statement of {@link bufferedRows}: about the fastest for both tables (16 to 64 measure alike). */
const BUFFERED_ROWS = 32;

/** How stale `readVersion` may be about other connections' commits. */
export const DATA_VERSION_CHECK_MS = 5;

/** Per character code below 128: 0 for 0-9 and a-f, 1 for anything else. */
const NOT_LOWER_HEX = new Uint8Array(128).fill(1);
for (const c of '0123456789abcdef') NOT_LOWER_HEX[c.charCodeAt(0)] = 0;

/**
 * Whether `hashes` is `count` transaction hashes joined, each `0x` and 64 lower-case hex digits:
 * one pass over the text instead of a check per hash (a regular expression over the whole text
 * overflows its backtracking stack at about 100,000 hashes).
 */
function allHashesLowerHex(hashes: string, count: number): boolean {
  if (hashes.length !== count * 66) return false;
  let bad = 0;
  for (let at = 0; at < hashes.length; at += 66) {
    bad |= (hashes.charCodeAt(at) ^ 48) | (hashes.charCodeAt(at + 1) ^ 120);
    for (let i = at + 2; i < at + 66; i++) {
      const c = hashes.charCodeAt(i);
      bad |= c < 128 ? NOT_LOWER_HEX[c]! : 1;
    }
  }
  return bad === 0;
}

/** Default bound of the indexer's balance cache: about 150 bytes each, so ~75 MiB at most. */
const DEFAULT_BALANCE_CACHE_SIZE = 500_000;

/** `sql` repeated `rows` times, comma-separated: the VALUES list or IN list of a multi-row statement. */
function rowsOf(sql: string, rows: number): string {
  return Array(rows).fill(sql).join(', ');
}

/** Builds the store over an open, migrated connection. Every statement is prepared once, here. */
function createSqliteStore(db: Database.Database, balanceCacheSize: number): SqliteStore {
  const sql = {
    // ---- chains ----
    getChain: db.prepare<[string], ChainRow>('SELECT * FROM chains WHERE chain = ?'),
    listChains: db.prepare<[], ChainRow>('SELECT * FROM chains ORDER BY chain'),
    tokenCount: db.prepare<[string], number>('SELECT token_count FROM chains WHERE chain = ?').pluck(),
    afterBatch: db.prepare(`
      INSERT INTO chains (chain, indexed_block, indexed_hash, head, updated_at, token_count, journal_floor,
        transfer_count, recent_transfers, seed_block, holders_partial, balances_block)
      VALUES (@chain, @block, @hash, @head, @now, @newTokens, @floor, @transfers, @recent, @seedBlock, @partial,
        @balancesFrom)
      ON CONFLICT (chain) DO UPDATE SET
        balances_block = CASE WHEN @balancesFrom IS NULL THEN NULL ELSE coalesce(balances_block, @balancesFrom) END,
        seed_block = coalesce(seed_block, excluded.seed_block),
        holders_partial = max(holders_partial, excluded.holders_partial),
        indexed_block = excluded.indexed_block,
        indexed_hash = excluded.indexed_hash,
        head = excluded.head,
        updated_at = excluded.updated_at,
        token_count = token_count + excluded.token_count,
        journal_floor = max(journal_floor, excluded.journal_floor),
        transfer_count = transfer_count + excluded.transfer_count,
        recent_transfers = coalesce(excluded.recent_transfers, recent_transfers)`),
    afterRollback: db.prepare(`
      UPDATE chains SET indexed_block = @block, indexed_hash = @hash, updated_at = @now,
        token_count = token_count - @removedTokens,
        transfer_count = transfer_count - @removedTransfers, recent_transfers = NULL
      WHERE chain = @chain`),
    setStatus: db.prepare(`
      INSERT INTO chains (chain, head, last_error, updated_at)
      VALUES (@chain, coalesce(@head, 0), @lastError, @now)
      ON CONFLICT (chain) DO UPDATE SET
        head = coalesce(@head, head),
        last_error = CASE WHEN @setError THEN @lastError ELSE last_error END,
        updated_at = @now`),

    // ---- indexing ----
    tokenId: db
      .prepare<[string, SqlValue], number>('SELECT id FROM tokens WHERE chain = ? AND address = ?')
      .pluck(),
    insertToken: db.prepare(
      'INSERT INTO tokens (chain, address, name, symbol, decimals, first_block) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    tokenAfterBatch: db.prepare(`
      UPDATE tokens SET
        holder_count = holder_count + @holders,
        transfer_count = transfer_count + @transfers,
        supply_dirty = CASE WHEN @dirty IS NULL THEN supply_dirty ELSE max(coalesce(supply_dirty, @dirty), @dirty) END
      WHERE id = @id`),
    deleteBalance: db.prepare(`DELETE FROM balances WHERE token_id = ? AND holder = ${UNHEX_OR_VALUE}`),
    balancesCurrent: db.prepare('UPDATE chains SET balances_block = NULL WHERE chain = ?'),
    pruneJournal: db.prepare('DELETE FROM recent_block_tokens WHERE chain = ? AND block_number < ?'),
    upsertBlockRef: db.prepare(`
      INSERT INTO block_refs (chain, number, hash, parent_hash) VALUES (?, ?, ?, ?)
      ON CONFLICT (chain, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash`),
    pruneBlockRefs: db.prepare('DELETE FROM block_refs WHERE chain = ? AND number < ?'),
    blockRefs: db.prepare<
      [string, number, number],
      { number: number; hash: SqlValue; parent_hash: SqlValue }
    >(
      'SELECT number, hash, parent_hash FROM block_refs WHERE chain = ? AND number BETWEEN ? AND ? ORDER BY number',
    ),

    // ---- rollback ----
    journalTokens: db
      .prepare<[string, number], number>(
        'SELECT DISTINCT token_id FROM recent_block_tokens WHERE chain = ? AND block_number > ?',
      )
      .pluck(),
    probeTokens: db
      .prepare<[string, number], number>(`
        SELECT id FROM tokens AS k WHERE chain = ?
        AND EXISTS (SELECT 1 FROM transfers AS t WHERE t.token_id = k.id AND t.block_number > ?)`)
      .pluck(),
    tokenById: db.prepare<[number], { address: SqlValue; first_block: number }>(
      'SELECT address, first_block FROM tokens WHERE id = ?',
    ),
    transfersAbove: db
      .prepare<[number, number], [SqlValue, SqlValue, SqlValue]>(
        'SELECT from_addr, to_addr, value FROM transfers WHERE token_id = ? AND block_number > ?',
      )
      .raw(),
    deleteTransfersAbove: db.prepare('DELETE FROM transfers WHERE token_id = ? AND block_number > ?'),
    tokenAfterRollback: db.prepare(`
      UPDATE tokens SET holder_count = holder_count + @holders, transfer_count = transfer_count - @removed,
        supply_dirty = @dirty
      WHERE id = @id`),
    deleteToken: db.prepare('DELETE FROM tokens WHERE id = ?'),
    deleteTokenBalances: db.prepare('DELETE FROM balances WHERE token_id = ?'),
    deleteTokenSeeds: db.prepare('DELETE FROM seed_balances WHERE token_id = ?'),
    deleteJournalAbove: db.prepare('DELETE FROM recent_block_tokens WHERE chain = ? AND block_number > ?'),
    deleteBlockRefsAbove: db.prepare('DELETE FROM block_refs WHERE chain = ? AND number > ?'),

    // ---- supplies ----
    dirtyTokens: db
      .prepare<[string, number], SqlValue>(
        'SELECT address FROM tokens WHERE chain = ? AND supply_dirty IS NOT NULL ORDER BY supply_dirty, id LIMIT +?',
      )
      .pluck(),
    staleTokens: db
      .prepare<[string, number, number], SqlValue>(
        'SELECT address FROM tokens WHERE chain = ? AND supply_dirty IS NULL AND supply_block < ? ORDER BY supply_block, id LIMIT +?',
      )
      .pluck(),
    updateSupply: db.prepare(`
      UPDATE tokens SET total_supply = @totalSupply, cap = @cap, burned_balance = @burnedBalance,
        supply_block = @atBlock,
        supply_dirty = CASE WHEN supply_dirty <= @atBlock THEN NULL ELSE supply_dirty END
      WHERE chain = @chain AND address = @address`),

    // ---- API reads ----
    // API reads select addresses, hashes and amounts as text (hexText, amountText) and rows as
    // arrays (.raw()): a BLOB column costs a Node Buffer per value, and then a second conversion
    // to hex in JavaScript; this way SQLite writes the final string once.
    // `LIMIT +? OFFSET +?`, not `LIMIT ? OFFSET ?`: the query planner reads a bare LIMIT
    // parameter, so binding it (every call) expires the plan and SQLite prepares the statement
    // again on every run (measured: 4 µs a call, a third of a Token List read); `+?` is an
    // expression, which the planner leaves alone.
    getToken: db
      .prepare<[string, SqlValue], TokenReadRow>(
        `SELECT ${TOKEN_READ_COLUMNS} FROM tokens WHERE chain = ? AND address = ?`,
      )
      .raw(),
    scanTransfers: db
      .prepare<
        [string, SqlValue, number, number, number],
        [number, number, number, string, string, string, SqlValue, number]
      >(`
        SELECT block_number, log_index, tx_index, ${hexText('tx_hash')}, ${hexText('from_addr')},
          ${hexText('to_addr')}, ${amountText('value')}, time FROM transfers
        WHERE token_id = (SELECT id FROM tokens WHERE chain = ? AND address = ?)
          AND (block_number, log_index) > (?, ?)
        ORDER BY block_number, log_index LIMIT +?`)
      .raw(),
    scanBalances: scanHolderAmounts(db, 'balances'),
    scanSeeds: scanHolderAmounts(db, 'seed_balances'),
    listTransfers: db
      .prepare<
        [string, SqlValue, number, number],
        [number, number, number, string, string, string, SqlValue, number]
      >(`
        SELECT block_number, log_index, tx_index, ${hexText('tx_hash')}, ${hexText('from_addr')},
          ${hexText('to_addr')}, ${amountText('value')}, time FROM transfers
        WHERE token_id = (SELECT id FROM tokens WHERE chain = ? AND address = ?)
        ORDER BY block_number DESC, log_index DESC LIMIT +? OFFSET +?`)
      .raw(),
    // The total is read in the same statement as the page, so both come from one snapshot
    // without an explicit transaction (BEGIN and COMMIT are two more statements per call).
    listTokens: db
      .prepare<[string, string, number, number], TokenListRow>(
        `SELECT (SELECT token_count FROM chains WHERE chain = ?), ${TOKEN_READ_COLUMNS} FROM tokens
         WHERE chain = ? ORDER BY holder_count DESC, transfer_count DESC, address ASC LIMIT +? OFFSET +?`,
      )
      .raw(),
    getBalance: db
      .prepare<[string, SqlValue, SqlValue], SqlValue>(`
        SELECT ${amountText('amount')} FROM balances
        WHERE token_id = (SELECT id FROM tokens WHERE chain = ? AND address = ?) AND holder = ?`)
      .pluck(),
    // readVersion: other connections' commits (a read transaction, ~5 µs), this connection's writes (~0.2 µs).
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    totalChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),

    // ---- API keys ----
    insertKey: db.prepare(
      `INSERT INTO api_keys (id, hash, label, created_at, revoked_at, rate_per_second, rate_burst, allow_ips)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    listKeys: db.prepare<[], ApiKeyRow>('SELECT * FROM api_keys ORDER BY created_at, id'),
    revokeKey: db.prepare(
      'UPDATE api_keys SET revoked_at = @at WHERE (id = @key OR hash = @key) AND revoked_at IS NULL',
    ),
    findKey: db.prepare<[string], ApiKeyRow>('SELECT * FROM api_keys WHERE hash = ?'),
    setKeyLimits: db.prepare(
      `UPDATE api_keys SET rate_per_second = ?, rate_burst = ?, allow_ips = ?
       WHERE (id = ? OR hash = ?) AND revoked_at IS NULL`,
    ),
  };

  // The common row (EVM: hashes and addresses in lower-case hex, a non-negative value) goes in
  // buffered rows (`bufferedRows`): the hash as hex digits through `unhex()`, the addresses as
  // their bytes, the value as an INTEGER or as hex digits. Measured 3.5-4.5 µs per row, one row a
  // statement, against 6.2 µs for the general multi-row statement below, whose
  // `coalesce(unhex(?), ?)` pairs cost more than the statement calls they save; buffered, 1.8 µs
  // with the addresses as digits and 1.5 µs as bytes.
  const hexTransfers = (value: string) =>
    bufferedRows(
      db,
      (rows) =>
        `INSERT INTO transfers (token_id, block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time)
         VALUES ${rowsOf(`(?, ?, ?, ?, unhex(?), ?, ?, ${value}, ?)`, rows)}`,
      9,
      BUFFERED_ROWS,
    );
  const insertHexTransfer = { integerValue: hexTransfers('?'), blobValue: hexTransfers('unhex(?)') };
  // The bytes of addresses written lately, or null for one that is not lower-case hex (stored by
  // the general statements). A backfill names the same holders in batch after batch: each
  // address's bytes are made once (binding them costs less than `unhex()` of digits), and
  // checking each one with the regular expression had cost 4-6 % of the writer. Emptied when
  // it reaches ADDRESS_BYTES_KEPT entries (about 150 bytes each).
  const addressBytes = new Map<string, Buffer | null>();
  const bytesOfAddress = (address: string): Buffer | null => {
    let bytes = addressBytes.get(address);
    if (bytes === undefined) {
      if (addressBytes.size >= ADDRESS_BYTES_KEPT) addressBytes.clear();
      bytes = isLowerHex(address) ? Buffer.from(address.slice(2), 'hex') : null;
      addressBytes.set(address, bytes);
    }
    return bytes;
  };
  /**
   * Inserts a transfer whose hash is given as its hex digits (without `0x`), its addresses as
   * their bytes, and whose value is not negative, as {@link encodeHex}/{@link encodeAmount} would store it.
   * Positional, so the columnar path (`applyWireTx`) makes no object per row.
   */
  const insertHexRow = (
    id: number,
    block: number,
    logIndex: number,
    txIndex: number,
    hashDigits: string,
    fromBytes: Buffer,
    toBytes: Buffer,
    value: bigint,
    time: number,
  ): void => {
    const small = value <= 9007199254740991n;
    const rows = small ? insertHexTransfer.integerValue : insertHexTransfer.blobValue;
    const at = rows.next();
    const p = rows.params;
    p[at] = id;
    p[at + 1] = block;
    p[at + 2] = logIndex;
    p[at + 3] = txIndex;
    p[at + 4] = hashDigits;
    p[at + 5] = fromBytes;
    p[at + 6] = toBytes;
    p[at + 7] = small ? value : amountHexDigits(value);
    p[at + 8] = time;
  };
  /** Writes the rows {@link insertHexRow} has buffered; before the transaction ends. */
  const flushHexRows = (): void => {
    insertHexTransfer.integerValue.flush();
    insertHexTransfer.blobValue.flush();
  };
  /** Inserts `t` as {@link encodeHex}/{@link encodeAmount} would store it, or returns false for the general statement. */
  const insertIfHex = (id: number, t: TransferRecord): boolean => {
    const from = bytesOfAddress(t.from);
    const to = bytesOfAddress(t.to);
    if (t.value < 0n || from === null || to === null || !isLowerHex(t.txHash)) return false;
    insertHexRow(id, t.blockNumber, t.logIndex, t.txIndex, t.txHash.slice(2), from, to, t.value, t.time);
    return true;
  };

  // The same for balances: an EVM holder, as its bytes, and a positive amount, in buffered rows.
  // (Telling new rows from existing ones, known from the old balance, and updating the latter one
  // statement each measured slower in the writer: 3.1 µs a holder against 2.3.)
  const balanceUpserts = (value: string) =>
    bufferedRows(
      db,
      (rows) =>
        `INSERT INTO balances (token_id, holder, amount) VALUES ${rowsOf(`(?, ?, ${value})`, rows)}
         ON CONFLICT (token_id, holder) DO UPDATE SET amount = excluded.amount`,
      3,
      BUFFERED_ROWS,
    );
  const upsertHexBalance = { integerAmount: balanceUpserts('?'), blobAmount: balanceUpserts('unhex(?)') };
  /**
   * Buffers the balance's write as {@link encodeHex}/{@link encodeAmount} would store it, or returns
   * false for the general statement. `applyDeltas` flushes them; each holder once per batch, so
   * no two rows of one statement name the same key.
   */
  const upsertIfHex = (id: number, holder: string, amount: bigint): boolean => {
    const bytes = bytesOfAddress(holder);
    if (amount < 0n || bytes === null) return false;
    const small = amount <= 9007199254740991n;
    const rows = small ? upsertHexBalance.integerAmount : upsertHexBalance.blobAmount;
    const at = rows.next();
    rows.params[at] = id;
    rows.params[at + 1] = bytes;
    rows.params[at + 2] = small ? amount : amountHexDigits(amount);
    return true;
  };
  /** Drops rows buffered by a transaction that failed before writing them. */
  const discardBufferedRows = (): void => {
    for (const rows of [...Object.values(insertHexTransfer), ...Object.values(upsertHexBalance)]) {
      rows.discard();
    }
  };

  const bulk = {
    insertTransfers: multiRow(
      db,
      (rows) =>
        `INSERT INTO transfers (token_id, block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time)
         VALUES ${rowsOf(`(?, ?, ?, ?, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE}, ?)`, rows)}`,
      13,
      ROWS_PER_STATEMENT,
    ),
    upsertBalances: multiRow(
      db,
      (rows) =>
        `INSERT INTO balances (token_id, holder, amount) VALUES ${rowsOf(`(?, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE})`, rows)}
         ON CONFLICT (token_id, holder) DO UPDATE SET amount = excluded.amount`,
      5,
      ROWS_PER_STATEMENT,
    ),
    // Answers (position in the key list, amount), so no holder comes back to be decoded and
    // matched. CROSS JOIN keeps SQLite from scanning the token's balances against the list.
    readBalances: multiRow(
      db,
      (rows) =>
        `SELECT k.column1, b.amount
         FROM (VALUES ${Array.from({ length: rows }, (_, i) => `(${i}, ${UNHEX_OR_VALUE})`).join(', ')}) AS k
         CROSS JOIN balances AS b WHERE b.token_id = ? AND b.holder = k.column2`,
      2,
      ROWS_PER_STATEMENT,
    ),
    // Answers the rows actually inserted: a pair seeded before is left alone and not answered.
    insertSeeds: multiRow(
      db,
      (rows) =>
        `INSERT INTO seed_balances (token_id, holder, amount) VALUES ${rowsOf(`(?, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE})`, rows)}
         ON CONFLICT (token_id, holder) DO NOTHING RETURNING token_id, ${hexText('holder')}`,
      5,
      ROWS_PER_STATEMENT,
    ),
    // Positions in the key list of the holders seeded, as `readBalances` answers them.
    readSeeded: multiRow(
      db,
      (rows) =>
        `SELECT k.column1
         FROM (VALUES ${Array.from({ length: rows }, (_, i) => `(${i}, ${UNHEX_OR_VALUE})`).join(', ')}) AS k
         CROSS JOIN seed_balances AS s WHERE s.token_id = ? AND s.holder = k.column2`,
      2,
      ROWS_PER_STATEMENT,
    ),
    insertJournal: multiRow(
      db,
      (rows) =>
        `INSERT OR IGNORE INTO recent_block_tokens (chain, block_number, token_id)
         VALUES ${rowsOf('(?, ?, ?)', rows)}`,
      3,
      ROWS_PER_STATEMENT,
    ),
  };

  /**
   * Balances this connection has read or written, per token id and holder: the indexer adds
   * each batch's deltas to the balances it wrote itself a moment before, so most reads never
   * reach SQLite. Values are exact (0n: no row). The cache is only trusted while this
   * connection is the only writer: `PRAGMA data_version` changes when another connection
   * commits, and the cache is then dropped. Rollbacks and failed transactions drop it too.
   * Bounded: past `balanceCacheSize` entries the oldest are dropped (misses just read SQLite).
   */
  const balanceCache = new Map<number, Map<string, bigint>>();
  let cachedBalances = 0;
  let cacheDataVersion: number | null = null;
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  /**
   * Balances written behind the checkpoint (`IndexBatch.deferBalances`), per chain, token id and
   * holder: the exact amounts after committed batches whose rows are not written yet (0n: the
   * row goes). They are read before the cache, and written, all of a chain at once, by the first
   * batch that does not defer, a rollback, or `close`. The chain row's `balances_block` says what
   * the table holds meanwhile, so losing them (a crash, or dropping them with the cache) loses
   * nothing: the next write replays the stored transfers above that block (`replayBalances`).
   */
  const unwritten = new Map<
    string,
    { balances: Map<number, Map<string, bigint>>; count: number; transfers: number }
  >();
  /** Drops the cache, and the unwritten balances with it: the cache may hold amounts ahead of the table. */
  const clearBalanceCache = (): void => {
    balanceCache.clear();
    cachedBalances = 0;
    cacheDataVersion = null;
    unwritten.clear();
  };
  /** Must run inside the write transaction, before any balance is read. */
  const validateBalanceCache = (): void => {
    const version = dataVersion.get()!;
    if (version !== cacheDataVersion) {
      clearBalanceCache();
      cacheDataVersion = version;
    }
  };
  /** Balances written by a transaction, put in the cache only once it has committed. */
  type BalanceWrites = { id: number; holders: string[]; amounts: bigint[] }[];
  /** Sets `writes` in `byToken` (token id → holder → amount); returns how many entries are new. */
  const setBalances = (byToken: Map<number, Map<string, bigint>>, writes: BalanceWrites): number => {
    let added = 0;
    for (const { id, holders, amounts } of writes) {
      let perToken = byToken.get(id);
      if (perToken === undefined) {
        perToken = new Map();
        byToken.set(id, perToken);
      }
      const before = perToken.size;
      for (let i = 0; i < holders.length; i++) perToken.set(holders[i]!, amounts[i]!);
      added += perToken.size - before;
    }
    return added;
  };
  /**
   * What a batch's transaction did with balances, applied to the cache and to `unwritten` once it
   * has committed: `writes` were written (or, `deferred`, left unwritten); `flushed`, the chain's
   * unwritten balances were written first.
   */
  interface BatchBalances {
    chain: string;
    writes: BalanceWrites;
    deferred: boolean;
    flushed: boolean;
    /** Transfers of the batch (for the bound on what a replay would read). */
    transfers: number;
  }
  const unwrittenOf = (chain: string) => unwritten.get(chain)?.balances;
  const rememberUnwritten = (chain: string, writes: BalanceWrites, transfers: number): void => {
    let entry = unwritten.get(chain);
    if (entry === undefined) {
      entry = { balances: new Map(), count: 0, transfers: 0 };
      unwritten.set(chain, entry);
    }
    entry.transfers += transfers;
    entry.count += setBalances(entry.balances, writes);
  };
  const rememberBalances = (writes: BalanceWrites): void => {
    cachedBalances += setBalances(balanceCache, writes);
    if (cachedBalances > balanceCacheSize) evictBalances();
  };
  /**
   * Drops the oldest quarter of every token's cached balances (a Map iterates in insertion
   * order). Starting over instead would make a store with more holders than the bound read
   * every balance again in every batch.
   */
  const evictBalances = (): void => {
    for (const [id, perToken] of balanceCache) {
      let drop = Math.ceil(perToken.size / 4);
      for (const holder of perToken.keys()) {
        if (drop-- <= 0) break;
        perToken.delete(holder);
        cachedBalances--;
      }
      if (perToken.size === 0) balanceCache.delete(id);
    }
  };

  /**
   * Applies net balance changes per token of `chain` and returns each token's change in holder
   * count, and the balances written (for the cache, once committed); with `defer`, the rows are
   * left for later (`unwritten`), and only the holder counts change now.
   * Balances are exact BigInts and may be negative while history starts late; a zero balance
   * has no row, so `getBalance` answers 0n for it like for an address never seen.
   */
  function applyDeltas(
    chain: string,
    changes: { id: number; deltas: Map<string, bigint> }[],
    defer = false,
  ): {
    holderChanges: number[];
    writes: BalanceWrites;
  } {
    const upserts: unknown[] = [];
    const writes: BalanceWrites = [];
    const pending = unwrittenOf(chain);
    const holderChanges = changes.map(({ id, deltas }) => {
      const cached = balanceCache.get(id);
      const pendingOfToken = pending?.get(id);
      const holders: string[] = [];
      const changesOf: bigint[] = [];
      const before: bigint[] = [];
      const misses: number[] = [];
      for (const [holder, delta] of deltas) {
        if (delta === 0n) continue;
        const known = pendingOfToken?.get(holder) ?? cached?.get(holder);
        if (known === undefined) misses.push(holders.length);
        holders.push(holder);
        changesOf.push(delta);
        before.push(known ?? 0n);
      }
      // Misses are read in key order, which walks the (token_id, holder) B-tree in order.
      misses.sort((a, b) => (holders[a]! < holders[b]! ? -1 : 1));
      for (let start = 0; start < misses.length; start += ROWS_PER_STATEMENT) {
        const part = misses.slice(start, start + ROWS_PER_STATEMENT);
        const params: unknown[] = [];
        for (const i of part) pushHexParams(params, holders[i]!);
        params.push(id);
        for (const [position, amount] of bulk.readBalances.all(part.length, params)) {
          const index = part[position as number]!;
          before[index] = decodeAmount(amount as SqlValue);
        }
      }
      const amounts: bigint[] = new Array(holders.length);
      let change = 0;
      for (let i = 0; i < holders.length; i++) {
        const holder = holders[i]!;
        const old = before[i]!;
        const after = old + changesOf[i]!;
        amounts[i] = after;
        // A zero balance has no row, so a row exists exactly when the old balance is non-zero.
        if (!defer && (after !== 0n || old !== 0n)) writeBalance(upserts, id, holder, after);
        const holds = after > 0n;
        if (holds !== old > 0n && !NON_HOLDERS.has(holder)) change += holds ? 1 : -1;
      }
      writes.push({ id, holders, amounts });
      return change;
    });
    finishBalanceWrites(upserts);
    return { holderChanges, writes };
  }

  /** Writes `amount` as the balance row of (`id`, `holder`): an upsert, or for 0n a delete. */
  function writeBalance(upserts: unknown[], id: number, holder: string, amount: bigint): void {
    if (amount === 0n) {
      const key: unknown[] = [id];
      pushHexParams(key, holder);
      sql.deleteBalance.run(key);
    } else if (!upsertIfHex(id, holder, amount)) {
      upserts.push(id);
      pushHexParams(upserts, holder);
      pushAmountParams(upserts, amount);
    }
  }

  /** Runs the balance writes `writeBalance` buffered. */
  function finishBalanceWrites(upserts: unknown[]): void {
    upsertHexBalance.integerAmount.flush();
    upsertHexBalance.blobAmount.flush();
    bulk.upsertBalances.run(upserts);
  }

  /**
   * Writes the chain's unwritten balances and marks its balances current; inside the write
   * transaction. The entries go from `unwritten` only once it commits (`settleBalances`).
   */
  function writeUnwritten(chain: string): boolean {
    const pending = unwrittenOf(chain);
    if (pending === undefined) return false;
    const upserts: unknown[] = [];
    for (const [id, holders] of pending) {
      for (const [holder, amount] of holders) writeBalance(upserts, id, holder, amount);
    }
    finishBalanceWrites(upserts);
    sql.balancesCurrent.run(chain);
    return true;
  }

  /**
   * Brings the balances table of `chain` up to its checkpoint after unwritten balances were lost
   * (a crash, or the cache dropped): adds the stored transfers above `balancesBlock`, the block the
   * table holds, token by token. Holder counts committed with those batches already count them.
   */
  function replayBalances(chain: string, balancesBlock: number): void {
    for (const id of sql.probeTokens.all(chain, balancesBlock)) {
      applyDeltas(chain, [
        { id, deltas: netChanges(sql.transfersAbove.all(id, balancesBlock), decodeTransferRow, 1n) },
      ]);
    }
    sql.balancesCurrent.run(chain);
  }

  /**
   * Replays the balances a crash lost (see `unwritten`): when the table lags the checkpoint
   * and this connection does not hold the difference. First thing in every write transaction
   * that reads or writes balances.
   */
  function recoverBalances(chain: string, stored: ChainRow | undefined): void {
    if (stored?.balances_block != null && !unwritten.has(chain)) replayBalances(chain, stored.balances_block);
  }

  /**
   * Records the batch's starting balances and adds those of pairs not seeded before to the
   * holders' balance changes, so `applyDeltas` applies them with the transfers.
   */
  function addSeeds(
    seeds: SeedBalance[],
    ids: ReadonlyMap<string, number>,
    work: Map<string, TokenWork>,
  ): void {
    const byId = new Map<number, TokenWork>();
    const amounts = new Map<string, bigint>();
    const params: unknown[] = [];
    for (const seed of seeds) {
      const id = ids.get(seed.token)!;
      byId.set(id, work.get(seed.token)!);
      amounts.set(`${id}:${seed.holder}`, seed.amount);
      params.push(id);
      pushHexParams(params, seed.holder);
      pushAmountParams(params, seed.amount);
    }
    for (let start = 0; start < seeds.length; start += ROWS_PER_STATEMENT) {
      const rows = Math.min(ROWS_PER_STATEMENT, seeds.length - start);
      const part = params.slice(start * 5, (start + rows) * 5);
      for (const [id, holder] of bulk.insertSeeds.all(rows, part) as [number, string][]) {
        const amount = amounts.get(`${id}:${holder}`)!;
        if (amount !== 0n) addDelta(byId.get(id)!.deltas, holder, amount);
      }
    }
  }

  /** Opens a batch's write: the stored chain row, read under the write lock, checked against the batch. */
  function beginBatch(batch: Omit<IndexBatch, 'transfers'>): ChainRow | undefined {
    discardBufferedRows();
    validateBalanceCache();
    // Read inside the write transaction, so the check and the write cannot interleave with another writer.
    const stored = sql.getChain.get(batch.chain);
    checkBatchStart(batch, stored?.indexed_block);
    recoverBalances(batch.chain, stored);
    return stored;
  }

  /**
   * The id of each token of `work`, in its order; a token met for the first time is inserted
   * from the batch's metadata, and its supply is marked to be read.
   */
  function tokenIds(
    batch: Omit<IndexBatch, 'transfers'>,
    work: Map<string, TokenWork>,
  ): { ids: number[]; newTokens: number } {
    const { chain } = batch;
    const metadata = new Map(batch.tokens.map((token) => [token.address, token]));
    const ids: number[] = [];
    let newTokens = 0;
    for (const token of work.values()) {
      const address = encodeHex(token.address);
      let id = sql.tokenId.get(chain, address);
      if (id === undefined) {
        const meta = admitNewToken(chain, metadata, token);
        id = Number(
          sql.insertToken.run(chain, address, meta.name, meta.symbol, meta.decimals, token.firstBlock)
            .lastInsertRowid,
        );
        newTokens++;
      }
      ids.push(id);
    }
    return { ids, newTokens };
  }

  /** The unfinalized window's journal of which tokens each block touched (see the schema notes). */
  function blockJournal(batch: Omit<IndexBatch, 'transfers'>): {
    add(block: number, id: number): void;
    write(): void;
  } {
    const seen = new Set<string>();
    const rows: unknown[] = [];
    return {
      add(block, id) {
        if (block < batch.pruneBlocksBelow) return;
        const entry = `${block}:${id}`;
        if (!seen.has(entry)) {
          seen.add(entry);
          rows.push(batch.chain, block, id);
        }
      },
      write: () => bulk.insertJournal.run(rows),
    };
  }

  /**
   * Everything of a batch after its transfers are inserted: seeds, balances and holder counts,
   * the tokens' counts and supply marks, block hashes, the NEO part, and the checkpoint.
   * `transferCounts` are per token of `work`; `recent` is the batch as far as
   * `encodeRecentTransfers` reads it.
   */
  function finishBatch(
    batch: Omit<IndexBatch, 'transfers'>,
    stored: ChainRow | undefined,
    work: Map<string, TokenWork>,
    tokens: { ids: number[]; newTokens: number; transferCounts: number[] },
    recent: IndexBatch,
  ): BatchBalances {
    const { chain } = batch;
    const { ids } = tokens;
    const list = [...work.values()];
    const seeds = checkSeeds(
      batch,
      { indexedBlock: stored?.indexed_block ?? null, seedBlock: stored?.seed_block ?? null },
      work,
    );
    if (seeds.length > 0) addSeeds(seeds, new Map(list.map((token, i) => [token.address, ids[i]!])), work);
    const transferCount = tokens.transferCounts.reduce((sum, n) => sum + n, 0);
    // Seeds and NEO batches write their balances at once: a replay adds transfers, nothing else.
    const pending = unwritten.get(chain);
    const deferred =
      batch.deferBalances === true &&
      batch.neo === undefined &&
      seeds.length === 0 &&
      (pending?.count ?? 0) + list.reduce((sum, token) => sum + token.deltas.size, 0) <=
        MAX_UNWRITTEN_BALANCES &&
      (pending?.transfers ?? 0) + transferCount <= MAX_UNWRITTEN_TRANSFERS;
    const flushed = !deferred && writeUnwritten(chain);
    const { holderChanges, writes } = applyDeltas(
      chain,
      list.map((token, i) => ({ id: ids[i]!, deltas: token.deltas })),
      deferred,
    );
    list.forEach((token, i) => {
      sql.tokenAfterBatch.run({
        holders: holderChanges[i],
        transfers: tokens.transferCounts[i],
        dirty: token.dirtyBlock,
        id: ids[i],
      });
    });

    for (const ref of batch.blocks) {
      sql.upsertBlockRef.run(chain, ref.number, encodeHex(ref.hash), encodeHex(ref.parentHash));
    }
    sql.pruneBlockRefs.run(chain, batch.pruneBlocksBelow);
    sql.pruneJournal.run(chain, batch.pruneBlocksBelow);
    if (batch.neo !== undefined) neo.write(chain, batch.neo);
    sql.afterBatch.run({
      chain,
      block: batch.toBlock,
      hash: batch.toBlockHash === null ? null : encodeHex(batch.toBlockHash),
      head: batch.head,
      now: Date.now(),
      newTokens: tokens.newTokens,
      floor: batch.pruneBlocksBelow,
      transfers: transferCount,
      recent: encodeRecentTransfers(recent, stored?.recent_transfers ?? null),
      seedBlock: batch.seeds?.block ?? null,
      partial: batch.seeds?.partial === true ? 1 : 0,
      // Deferred: the table holds what it held before this batch (kept if already behind).
      balancesFrom: deferred ? (stored?.indexed_block ?? batch.fromBlock - 1) : null,
    });
    return { chain, writes, deferred, flushed, transfers: transferCount };
  }

  /** Adds `t`'s parameters for the general multi-row insert of transfers (`bulk.insertTransfers`). */
  function pushTransferParams(rows: unknown[], id: number, t: Omit<TransferRecord, 'token'>): void {
    rows.push(id, t.blockNumber, t.logIndex, t.txIndex);
    pushHexParams(rows, t.txHash);
    pushHexParams(rows, t.from);
    pushHexParams(rows, t.to);
    pushAmountParams(rows, t.value);
    rows.push(t.time);
  }

  const applyBatchTx = db.transaction((batch: IndexBatch): BatchBalances => {
    const stored = beginBatch(batch);
    const work = planBatch(batch);
    const { ids, newTokens } = tokenIds(batch, work);
    const journal = blockJournal(batch);
    const transferRows: unknown[] = [];
    const transferCounts: number[] = [];
    let k = 0;
    for (const token of work.values()) {
      const id = ids[k++]!;
      transferCounts.push(token.transfers.length);
      for (const t of token.transfers) {
        if (!insertIfHex(id, t)) pushTransferParams(transferRows, id, t);
        journal.add(t.blockNumber, id);
      }
    }
    flushHexRows();
    bulk.insertTransfers.run(transferRows);
    journal.write();
    return finishBatch(batch, stored, work, { ids, newTokens, transferCounts }, batch);
  });

  /**
   * {@link applyBatchTx} for a batch as the writer thread receives it (see `planWire`): the rows
   * are inserted straight from the columns, each address's digits worked out once, and the
   * hashes checked in one pass over their joined text.
   */
  const applyWireTx = db.transaction((wire: WireBatch): BatchBalances => {
    const stored = beginBatch(wire);
    const plan = planWire(wire);
    const { work, hashStarts } = plan;
    const { addresses, fromOf, toOf, numbers, hashes, hashLengths, hashOf, values } = wire.transferColumns;
    const { ids, newTokens } = tokenIds(wire, work);
    const journal = blockJournal(wire);
    // Through the writer's memo (bytesOfAddress), where the balance upserts then find them.
    const bytes = addresses.map(bytesOfAddress);
    const hashesLowerHex = allHashesLowerHex(hashes, hashLengths.length);
    // Each distinct hash's digits (without `0x`), or null if it is not lower-case hex; made on first use.
    const hashDigits: (string | null | undefined)[] = new Array(hashLengths.length);
    const digitsOfHash = (k: number): string | null => {
      let made = hashDigits[k];
      if (made === undefined) {
        const hash = hashes.slice(hashStarts[k]!, hashStarts[k + 1]!);
        made = hashesLowerHex || isLowerHex(hash) ? hash.slice(2) : null;
        hashDigits[k] = made;
      }
      return made;
    };
    const transferRows: unknown[] = [];
    const transferCounts: number[] = [];
    let k = 0;
    for (const token of work.values()) {
      const id = ids[k++]!;
      transferCounts.push(token.rows.length);
      for (const i of token.rows) {
        const block = numbers[i * 4]!;
        const logIndex = numbers[i * 4 + 1]!;
        const txIndex = numbers[i * 4 + 2]!;
        const time = numbers[i * 4 + 3]!;
        const value = values[i]!;
        const from = bytes[fromOf[i]!];
        const to = bytes[toOf[i]!];
        const hash = hashOf[i]!;
        const txHashDigits = digitsOfHash(hash);
        if (from != null && to != null && value >= 0n && txHashDigits !== null) {
          insertHexRow(id, block, logIndex, txIndex, txHashDigits, from, to, value, time);
        } else {
          pushTransferParams(transferRows, id, {
            blockNumber: block,
            logIndex,
            txIndex,
            txHash: hashes.slice(hashStarts[hash]!, hashStarts[hash + 1]!),
            from: addresses[fromOf[i]!]!,
            to: addresses[toOf[i]!]!,
            value,
            time,
          });
        }
        journal.add(block, id);
      }
    }
    flushHexRows();
    bulk.insertTransfers.run(transferRows);
    journal.write();
    return finishBatch(wire, stored, work, { ids, newTokens, transferCounts }, plan.recent);
  });

  /**
   * Runs a batch's transaction (IMMEDIATE: it takes the write lock up front, so a concurrent
   * writer waits on busy_timeout instead of failing with SQLITE_BUSY when a read lock would be
   * upgraded), and caches the balances it wrote once it has committed; a failed one drops the cache.
   */
  function cachingBalances(apply: () => BatchBalances): void {
    let done: BatchBalances;
    try {
      done = apply();
    } catch (error) {
      clearBalanceCache();
      throw error;
    }
    rememberBalances(done.writes);
    if (done.flushed) unwritten.delete(done.chain);
    if (done.deferred) rememberUnwritten(done.chain, done.writes, done.transfers);
  }

  const rollbackTx = db.transaction(
    (chain: string, toBlock: number, toBlockHash: string | null): RollbackResult => {
      discardBufferedRows();
      validateBalanceCache();
      const current = sql.getChain.get(chain);
      checkRollback(chain, current?.indexed_block, toBlock, false);
      // The rollback takes the removed transfers off the balances table: make it whole first.
      // (`rollback` drops `unwritten` and the cache afterwards, written or not.)
      recoverBalances(chain, current);
      writeUnwritten(chain);
      // The journal names every token touched in blocks >= journal_floor; below that, probe all tokens.
      const tokenIds =
        toBlock + 1 >= current.journal_floor
          ? sql.journalTokens.all(chain, toBlock)
          : sql.probeTokens.all(chain, toBlock);

      const affected: string[] = [];
      let removedTransfers = 0;
      let removedTokens = 0;
      for (const id of tokenIds) {
        const token = sql.tokenById.get(id);
        if (token === undefined) continue;
        const rows = sql.transfersAbove.all(id, toBlock);
        if (rows.length === 0) continue;
        removedTransfers += rows.length;
        sql.deleteTransfersAbove.run(id, toBlock);
        affected.push(decodeHex(token.address));
        if (token.first_block > toBlock) {
          // Every transfer of the token is gone, so it was never seen: drop it whole. Its holders
          // were never seen either, and are seeded again if they show up again.
          sql.deleteTokenBalances.run(id);
          sql.deleteTokenSeeds.run(id);
          sql.deleteToken.run(id);
          removedTokens++;
          continue;
        }
        const [holders] = applyDeltas(chain, [
          { id, deltas: netChanges(rows, decodeTransferRow, -1n) },
        ]).holderChanges;
        // A supply read at or after the common ancestor reflects the surviving history.
        sql.tokenAfterRollback.run({ holders, removed: rows.length, dirty: toBlock, id });
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
      affected.sort();
      return { affectedTokens: affected, removedTransfers };
    },
  );

  const writeAllUnwrittenTx = db.transaction((): void => {
    validateBalanceCache(); // another connection's commit drops them: its next write replays instead
    discardBufferedRows();
    for (const chain of [...unwritten.keys()]) writeUnwritten(chain);
  });

  const updateSuppliesTx = db.transaction((chain: string, updates: SupplyUpdate[]): void => {
    for (const update of updates) {
      sql.updateSupply.run({
        chain,
        address: encodeHex(update.address),
        totalSupply: encodeNullableAmount(update.totalSupply),
        cap: encodeNullableAmount(update.cap),
        burnedBalance: encodeNullableAmount(update.burnedBalance),
        atBlock: update.atBlock,
      });
    }
  });

  const neo = createNeoTables(db);

  // readVersion's state: the two SQLite counters last seen, and the version they gave.
  let version = 0;
  let externalSeen = -1;
  let ownSeen = -1;
  let externalCheckedAt = Number.NEGATIVE_INFINITY;

  const tokenPage = (chain: string, rows: TokenListRow[], total: number | null | undefined): TokenPage => ({
    total: total ?? 0,
    tokens: rows.map((row) => readTokenRecord(chain, row, 1)),
  });
  // A page past the end has no row to carry the total: read it in the same deferred read
  // transaction as the (still empty, or by now not) page, so both come from one snapshot.
  const listTokensTx = db.transaction((chain: string, offset: number, limit: number): TokenPage => {
    const rows = sql.listTokens.all(chain, chain, limit, offset);
    return tokenPage(chain, rows, rows.length > 0 ? rows[0]![0] : sql.tokenCount.get(chain));
  });

  const flat: FlatStore & SqliteWriter = {
    async getCheckpoint(chain: string): Promise<Checkpoint | null> {
      const row = sql.getChain.get(chain);
      if (row?.indexed_block == null) return null;
      return {
        block: row.indexed_block,
        hash: row.indexed_hash === null ? null : decodeHex(row.indexed_hash),
      };
    },

    async applyBatch(batch: IndexBatch): Promise<void> {
      cachingBalances(() => applyBatchTx.immediate(batch));
    },

    async applyWireBatch(wire: WireBatch): Promise<void> {
      // The NEO part's transfers and outputs are planned from objects (`planBatch`).
      if (wire.neo !== undefined) return this.applyBatch(batchFromWire(wire));
      cachingBalances(() => applyWireTx.immediate(wire));
    },

    async getBlockRefs(chain: string, from: number, to: number): Promise<BlockRef[]> {
      return sql.blockRefs.all(chain, from, to).map((row) => ({
        number: row.number,
        hash: decodeHex(row.hash),
        parentHash: decodeHex(row.parent_hash),
      }));
    },

    async rollback(chain: string, toBlock: number, toBlockHash: string | null): Promise<RollbackResult> {
      // NEO has one-block finality; its outputs, deployments and asset facts are not journaled.
      if (neo.hasData(chain)) checkRollback(chain, null, toBlock, true);
      try {
        return rollbackTx.immediate(chain, toBlock, toBlockHash);
      } finally {
        // Rare: start over rather than track what the rollback rewrote.
        clearBalanceCache();
      }
    },

    async tokensNeedingSupply(chain: string, staleBefore: number, limit: number): Promise<string[]> {
      const dirty = sql.dirtyTokens.all(chain, limit);
      const stale = dirty.length < limit ? sql.staleTokens.all(chain, staleBefore, limit - dirty.length) : [];
      return [...dirty, ...stale].map(decodeHex);
    },

    async updateSupplies(chain: string, updates: SupplyUpdate[]): Promise<void> {
      updateSuppliesTx.immediate(chain, updates);
    },

    async setChainStatus(chain: string, status: { head?: number; lastError?: string | null }): Promise<void> {
      sql.setStatus.run({
        chain,
        head: status.head ?? null,
        setError: status.lastError === undefined ? 0 : 1,
        lastError: status.lastError ?? null,
        now: Date.now(),
      });
    },

    async getChainStatus(chain: string): Promise<ChainStatus | null> {
      const row = sql.getChain.get(chain);
      return row === undefined ? null : toChainStatus(row);
    },

    async listChainStatuses(): Promise<ChainStatus[]> {
      return sql.listChains.all().map(toChainStatus);
    },

    async getChainActivity(chain: string): Promise<ChainActivity | null> {
      const row = sql.getChain.get(chain);
      if (row === undefined) return null;
      return { chain, transfers: row.transfer_count, recent: decodeRecentTransfers(row.recent_transfers) };
    },

    async storageBytes(): Promise<number> {
      // The main file and the WAL (committed pages not yet checkpointed back); the shared-memory
      // index is a cache. An in-memory database has no file: 0.
      if (db.memory) return 0;
      let bytes = 0;
      for (const file of [db.name, `${db.name}-wal`]) {
        bytes += (await stat(file).catch(() => null))?.size ?? 0;
      }
      return bytes;
    },

    async getToken(chain: string, address: string): Promise<TokenRecord | null> {
      const row = sql.getToken.get(chain, encodeHex(address));
      return row === undefined ? null : readTokenRecord(chain, row);
    },

    async listTransfers(
      chain: string,
      token: string,
      offset: number,
      limit: number,
    ): Promise<TransferRecord[]> {
      const rows = sql.listTransfers.all(chain, encodeHex(token), limit, offset);
      const transfers: TransferRecord[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const [blockNumber, logIndex, txIndex, txHash, from, to, value, time] = rows[i]!;
        transfers[i] = {
          token,
          blockNumber,
          logIndex,
          txIndex,
          txHash,
          from,
          to,
          value: decodeAmount(value),
          time,
        };
      }
      return transfers;
    },

    async scanTransfers(chain, token, after, limit): Promise<TransferRecord[]> {
      const rows = sql.scanTransfers.all(
        chain,
        encodeHex(token),
        after?.blockNumber ?? -1,
        after?.logIndex ?? -1,
        limit,
      );
      return rows.map(([blockNumber, logIndex, txIndex, txHash, from, to, value, time]) => ({
        token,
        blockNumber,
        logIndex,
        txIndex,
        txHash,
        from,
        to,
        value: decodeAmount(value),
        time,
      }));
    },

    async scanBalances(chain, token, afterHolder, limit) {
      const rows = sql.scanBalances.all(
        chain,
        encodeHex(token),
        afterHolder === null ? 1 : 0,
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      );
      return rows.map(([holder, amount]) => ({ holder, amount: decodeAmount(amount) }));
    },

    async scanSeedBalances(chain, token, afterHolder, limit): Promise<SeedBalance[]> {
      const rows = sql.scanSeeds.all(
        chain,
        encodeHex(token),
        afterHolder === null ? 1 : 0,
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      );
      return rows.map(([holder, amount]) => ({ token, holder, amount: decodeAmount(amount) }));
    },

    async seededHolders(chain, pairs): Promise<boolean[]> {
      const out = new Array<boolean>(pairs.length).fill(false);
      const byToken = new Map<string, number[]>();
      pairs.forEach(({ token }, i) => {
        const list = byToken.get(token);
        if (list === undefined) byToken.set(token, [i]);
        else list.push(i);
      });
      for (const [token, positions] of byToken) {
        const id = sql.tokenId.get(chain, encodeHex(token));
        if (id === undefined) continue;
        for (let start = 0; start < positions.length; start += ROWS_PER_STATEMENT) {
          const part = positions.slice(start, start + ROWS_PER_STATEMENT);
          const params: unknown[] = [];
          for (const i of part) pushHexParams(params, pairs[i]!.holder);
          params.push(id);
          for (const [position] of bulk.readSeeded.all(part.length, params))
            out[part[position as number]!] = true;
        }
      }
      return out;
    },

    async listTokens(chain: string, offset: number, limit: number): Promise<TokenPage> {
      const rows = sql.listTokens.all(chain, chain, limit, offset);
      // One statement, one snapshot: no transaction needed unless the page is empty.
      return rows.length > 0 ? tokenPage(chain, rows, rows[0]![0]) : listTokensTx(chain, offset, limit);
    },

    async getBalance(chain: string, token: string, holder: string): Promise<bigint> {
      const stored = sql.getBalance.get(chain, encodeHex(token), encodeHex(holder));
      return stored === undefined ? 0n : decodeAmount(stored);
    },

    // `PRAGMA data_version` changes when another connection commits; `total_changes()` counts
    // this connection's row changes (data_version ignores those). The first costs a read
    // transaction, so it is asked at most every DATA_VERSION_CHECK_MS: another process's commit
    // shows up that much late at most. The second is a plain function call, asked every time.
    readVersion(): number {
      const now = performance.now();
      if (now - externalCheckedAt >= DATA_VERSION_CHECK_MS) {
        externalCheckedAt = now;
        const external = sql.dataVersion.get()!;
        if (external !== externalSeen) {
          externalSeen = external;
          version++;
        }
      }
      const own = sql.totalChanges.get()!;
      if (own !== ownSeen) {
        ownSeen = own;
        version++;
      }
      return version;
    },

    async getNeoOutputs(
      chain: string,
      refs: readonly { txid: string; n: number }[],
    ): Promise<NeoOutputRow[]> {
      return neo.getOutputs(chain, refs);
    },

    async getNeoToken(chain: string, address: string): Promise<NeoTokenRecord | null> {
      return neo.getToken(chain, address);
    },

    async listNeoTokens(chain: string, offset: number, limit: number): Promise<NeoTokenPage> {
      return neo.listTokens(chain, offset, limit);
    },

    async listNeoContracts(chain: string, offset: number, limit: number): Promise<NeoContractRecord[]> {
      return neo.listContracts(chain, offset, limit);
    },

    async createApiKey(key: ApiKeyRecord): Promise<void> {
      try {
        sql.insertKey.run(
          key.id,
          key.hash,
          key.label,
          key.createdAt,
          key.revokedAt,
          ...encodeApiKeyLimits(key),
        );
      } catch (error) {
        if (error instanceof Database.SqliteError && error.code.startsWith('SQLITE_CONSTRAINT')) {
          throw new TokenqueryError('an API key with this id or hash already exists', { cause: error });
        }
        throw error;
      }
    },

    async listApiKeys(): Promise<ApiKeyRecord[]> {
      return sql.listKeys.all().map(toApiKey);
    },

    async revokeApiKey(idOrHash: string, at: number): Promise<boolean> {
      return sql.revokeKey.run({ key: idOrHash, at }).changes > 0;
    },

    async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
      const row = sql.findKey.get(hash);
      return row === undefined ? null : toApiKey(row);
    },

    async setApiKeyLimits(idOrHash: string, limits: ApiKeyLimits): Promise<boolean> {
      return sql.setKeyLimits.run(...encodeApiKeyLimits(limits), idOrHash, idOrHash).changes > 0;
    },
  };
  const close = async (): Promise<void> => {
    if (!db.open) return;
    try {
      // Balances written behind the checkpoint go now; were this to fail, the next start replays them.
      if (unwritten.size > 0) writeAllUnwrittenTx.immediate();
    } finally {
      unwritten.clear();
      db.close();
    }
  };
  return { ...storeOfParts('sqlite', flat, close), writer: flat };
}
