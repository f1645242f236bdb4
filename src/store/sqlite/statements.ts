/**
 * The SQLite store's SQL: every statement of the store (the NEO tables' aside, in neo-tables.ts),
 * prepared once per connection. Addresses, hashes and amounts are written as codec.ts encodes
 * them; the multi-row shapes come from multi-row.ts.
 */
import type Database from 'better-sqlite3';
import type { ApiKeyRow } from '../api-key-limits.js';
import type { ChainRow, SqlValue, TokenListRow, TokenReadRow } from './codec.js';
import { UNHEX_OR_VALUE } from './codec.js';
import { hintedRead } from './index-hint.js';
import { NEGATIVE_BALANCE } from './migrations.js';
import { BUFFERED_ROWS, bufferedRows, multiRow, ROWS_PER_STATEMENT, rowsOf } from './multi-row.js';
import { ADDRESS_ID, amountText, hexText, READABLE, TOKEN_ID } from './sql-fragments.js';

/**
 * (holder, amount) rows of one token in `table` (balances or seeds), by holder after a cursor;
 * `where` filters them, `extra` adds columns.
 */
function scanHolderAmounts<Extra extends unknown[] = []>(
  db: Database.Database,
  table: 'balances' | 'seed_balances',
  where = '',
  extra = '',
) {
  return db
    .prepare<[string, SqlValue, number, SqlValue, number], [string, SqlValue, ...Extra]>(`
      SELECT ${hexText('holder')}, ${amountText('amount')}${extra} FROM ${table}
      WHERE token_id = ${TOKEN_ID}
        AND (? OR holder > ?)${where}
      ORDER BY holder LIMIT +?`)
    .raw();
}

/** The columns of a {@link TokenReadRow}, of the tokens table named `table` (with its dot) in the query. */
const tokenReadColumns = (table = '') =>
  [
    hexText(`${table}address`),
    'name',
    'symbol',
    'decimals',
    amountText(`${table}total_supply`),
    amountText(`${table}cap`),
    amountText(`${table}burned_balance`),
    `${table}holder_count`,
    `${table}transfer_count`,
    `${table}first_block`,
    `${table}icon`,
  ].join(', ');
const TOKEN_READ_COLUMNS = tokenReadColumns();

/** The columns of a transfer row of the address reads, of `transfers AS t` and the page `p`. */
const ADDRESS_TRANSFER_COLUMNS = `p.block_number, p.log_index, t.tx_index, ${hexText('t.tx_hash')},
  ${hexText('t.from_addr')}, ${hexText('t.to_addr')}, ${amountText('t.value')}, t.time`;

/** A row of `addressBalances`: the balance, its transfer count, then the token's label. */
export type AddressBalanceRow = [
  amount: SqlValue,
  transferCount: number,
  address: string,
  name: string,
  symbol: string,
  decimals: number,
];

/** A transfer row of the address reads; the all-tokens read puts the token's address first. */
export type AddressTransferRow = [number, number, number, string, string, string, SqlValue, number];

/** The store's single-row statements, by concern. */
export function prepareStatements(db: Database.Database) {
  return {
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
    // A balance gone to zero whose transfer count did not grow: its row goes once no transfer names it.
    zeroBalance: db.prepare(
      `UPDATE balances SET amount = 0, rank = NULL, transfer_count = transfer_count + ? WHERE token_id = ? AND holder = ${UNHEX_OR_VALUE}`,
    ),
    dropUnnamedBalance: db.prepare(
      `DELETE FROM balances WHERE token_id = ? AND holder = ${UNHEX_OR_VALUE} AND amount = 0 AND transfer_count = 0`,
    ),
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
    // The balance cache's check for other connections' commits (balances.ts).
    cacheDataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),

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
    /** What a replay needs of a transfer for its `address_transfers` entries (balances.ts). */
    partiesAbove: db
      .prepare<[number, number], [SqlValue, SqlValue, number, number]>(
        'SELECT from_addr, to_addr, block_number, log_index FROM transfers WHERE token_id = ? AND block_number > ?',
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

    // ---- not-exact marks (migration 0009) ----
    setExactness: db.prepare(`
      UPDATE tokens SET not_exact_block = @atBlock, not_exact_drift = @drift,
        not_exact_sampled = @sampled, not_exact_differing = @differing
      WHERE chain = @chain AND address = @address`),
    getNotExact: db.prepare<
      [string, Buffer | string],
      {
        not_exact_block: number;
        not_exact_drift: string;
        not_exact_sampled: number;
        not_exact_differing: number;
      }
    >(`
      SELECT not_exact_block, not_exact_drift, not_exact_sampled, not_exact_differing FROM tokens
      WHERE chain = ? AND address = ? AND not_exact_block IS NOT NULL`),
    countNotExact: db.prepare<[], { chain: string; n: number }>(
      'SELECT chain, count(*) AS n FROM tokens WHERE not_exact_block IS NOT NULL GROUP BY chain',
    ),

    // ---- API reads ----
    // API reads select addresses, hashes and amounts as text (hexText, amountText) and rows as
    // arrays (.raw()): a BLOB column costs a Node Buffer per value, and then a second conversion
    // to hex in JavaScript; this way SQLite writes the final string once.
    // `LIMIT +? OFFSET +?`, not `LIMIT ? OFFSET ?`: the query planner reads a bare LIMIT
    // parameter, so binding it (every call) expires the plan and SQLite prepares the statement
    // again on every run (a third of a Token List read: docs/benchmarks.md); `+?` is an
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
        WHERE token_id = ${TOKEN_ID}
          AND (block_number, log_index) > (?, ?)
        ORDER BY block_number, log_index LIMIT +?`)
      .raw(),
    // Rows stay at a zero balance while transfers name the holder: `scanBalances` skips them.
    scanBalances: scanHolderAmounts(db, 'balances', ' AND amount <> 0'),
    // INDEXED BY: on a store without statistics the planner would walk the token's whole key
    // range instead of the few rows of the partial index (and an unusable index is an error).
    negativeBalances: db
      .prepare<[string, SqlValue, number], [string, SqlValue]>(`
        SELECT ${hexText('holder')}, ${amountText('amount')} FROM balances INDEXED BY balances_negative
        WHERE token_id = ${TOKEN_ID} AND ${NEGATIVE_BALANCE}
        ORDER BY holder LIMIT +?`)
      .raw(),
    scanHoldings: scanHolderAmounts<[number]>(db, 'balances', '', ', transfer_count'),
    scanSeeds: scanHolderAmounts(db, 'seed_balances'),
    listTransfers: db
      .prepare<
        [string, SqlValue, number, number],
        [number, number, number, string, string, string, SqlValue, number]
      >(`
        SELECT block_number, log_index, tx_index, ${hexText('tx_hash')}, ${hexText('from_addr')},
          ${hexText('to_addr')}, ${amountText('value')}, time FROM transfers
        WHERE token_id = ${TOKEN_ID}
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
        WHERE token_id = ${TOKEN_ID} AND holder = ?`)
      .pluck(),
    // ---- address operations and holders (migration 0007_address_views) ----
    // Every page is an index range of `address_transfers` or `balances_by_rank` read index-only to
    // its OFFSET (at most 2,450), then only the page's rows are joined to their tables.
    addressHolding: db
      .prepare<[string, SqlValue, SqlValue], [SqlValue, number]>(`
        SELECT ${amountText('amount')}, transfer_count FROM balances
        WHERE token_id = ${TOKEN_ID} AND holder = ?`)
      .raw(),
    // The tokens a holder holds (`rank` is NULL unless the balance is positive and the holder can
    // hold): the holder's rows by `balances_by_holder`, sorted like the token list. Only what a
    // balance entry shows (an `AddressBalanceRow`): every column more is a value per entry to
    // sort, hand to JavaScript and collect, and an address may hold 10,000 tokens.
    // (Unforced while a bulk load's build has dropped the index: index-hint.ts.)
    addressBalances: hintedRead<[SqlValue, string], AddressBalanceRow>(
      db,
      `SELECT ${amountText('b.amount')}, b.transfer_count, ${hexText('k.address')}, k.name, k.symbol, k.decimals
       FROM balances AS b INDEXED BY balances_by_holder CROSS JOIN tokens AS k ON k.id = b.token_id
       WHERE b.holder = ? AND k.chain = ? AND b.rank IS NOT NULL AND ${READABLE('k.chain')}
       ORDER BY k.holder_count DESC, k.transfer_count DESC, k.address ASC`,
      'balances_by_holder',
      (statement) => statement.raw(),
    ),
    addressTransfersOfToken: db
      .prepare<[string, SqlValue, string, SqlValue, number, number], AddressTransferRow>(`
        SELECT ${ADDRESS_TRANSFER_COLUMNS}
        FROM (SELECT token_id, block_number, log_index FROM address_transfers
              WHERE address_id = ${ADDRESS_ID} AND token_id = ${TOKEN_ID}
              ORDER BY block_number DESC, log_index DESC LIMIT +? OFFSET +?) AS p
        JOIN transfers AS t ON t.token_id = p.token_id AND t.block_number = p.block_number AND t.log_index = p.log_index
        ORDER BY p.block_number DESC, p.log_index DESC`)
      .raw(),
    // All tokens in index order: newest first, ties between tokens by token id. Exact unless two
    // entries share a (block, log index), which only NEO can have: see `listAddressTransfers`.
    addressTransfersByIndex: db
      .prepare<[string, SqlValue, number, number], [string, ...AddressTransferRow]>(`
        SELECT ${hexText('k.address')}, ${ADDRESS_TRANSFER_COLUMNS}
        FROM (SELECT token_id, block_number, log_index FROM address_transfers INDEXED BY address_transfers_all
              WHERE address_id = ${ADDRESS_ID}
              ORDER BY block_number DESC, log_index DESC, token_id DESC LIMIT +? OFFSET +?) AS p
        JOIN transfers AS t ON t.token_id = p.token_id AND t.block_number = p.block_number AND t.log_index = p.log_index
        JOIN tokens AS k ON k.id = p.token_id
        ORDER BY p.block_number DESC, p.log_index DESC, p.token_id DESC`)
      .raw(),
    // Ties between tokens by token address descending: SQLite sorts only within runs of equal
    // (block, log index) while walking the index, but looks up every entry's token to do so.
    addressTransfers: db
      .prepare<[string, SqlValue, number, number], [string, ...AddressTransferRow]>(`
        SELECT ${hexText('k.address')}, ${ADDRESS_TRANSFER_COLUMNS}
        FROM (SELECT x.token_id, x.block_number, x.log_index, (SELECT address FROM tokens WHERE id = x.token_id) AS token
              FROM address_transfers AS x INDEXED BY address_transfers_all
              WHERE x.address_id = ${ADDRESS_ID}
              ORDER BY x.block_number DESC, x.log_index DESC, token DESC LIMIT +? OFFSET +?) AS p
        JOIN transfers AS t ON t.token_id = p.token_id AND t.block_number = p.block_number AND t.log_index = p.log_index
        JOIN tokens AS k ON k.id = p.token_id
        ORDER BY p.block_number DESC, p.log_index DESC, p.token DESC`)
      .raw(),
    holders: db
      .prepare<[string, SqlValue, number, number], [string, SqlValue]>(`
        SELECT ${hexText('b.holder')}, ${amountText('b.amount')}
        FROM (SELECT token_id, holder FROM balances
              WHERE token_id = ${TOKEN_ID} AND rank IS NOT NULL
              ORDER BY rank DESC, holder LIMIT +? OFFSET +?) AS p
        JOIN balances AS b ON b.token_id = p.token_id AND b.holder = p.holder
        ORDER BY b.rank DESC, b.holder`)
      .raw(),
    // `scanHolders`' seek after (rank, holder): the rest of the rank's holders, then lower ranks.
    holdersOfRankAfter: db
      .prepare<[string, SqlValue, SqlValue, SqlValue, number], [string, SqlValue]>(`
        SELECT ${hexText('holder')}, ${amountText('amount')} FROM balances INDEXED BY balances_by_rank
        WHERE token_id = ${TOKEN_ID} AND rank IS NOT NULL AND rank = ? AND holder > ?
        ORDER BY rank DESC, holder LIMIT +?`)
      .raw(),
    holdersBelowRank: db
      .prepare<[string, SqlValue, SqlValue, number], [string, SqlValue]>(`
        SELECT ${hexText('holder')}, ${amountText('amount')} FROM balances INDEXED BY balances_by_rank
        WHERE token_id = ${TOKEN_ID} AND rank IS NOT NULL AND rank < ?
        ORDER BY rank DESC, holder LIMIT +?`)
      .raw(),

    // readVersion: other connections' commits (a read transaction), this connection's writes (a
    // plain function call, far cheaper).
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
}

/** The store's single-row statements. */
export type Statements = ReturnType<typeof prepareStatements>;

/** The store's general multi-row statements: any value, each encoded column as `UNHEX_OR_VALUE`. */
export function prepareBulkStatements(db: Database.Database) {
  return {
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
        `INSERT INTO balances (token_id, holder, amount, transfer_count, rank)
         VALUES ${rowsOf(`(?, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE}, ?, ${UNHEX_OR_VALUE})`, rows)}
         ON CONFLICT (token_id, holder) DO UPDATE SET amount = excluded.amount,
           transfer_count = transfer_count + excluded.transfer_count, rank = excluded.rank`,
      8,
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
}

/** The store's general multi-row statements. */
export type BulkStatements = ReturnType<typeof prepareBulkStatements>;

/**
 * The buffered inserts of the common rows (EVM: hashes and addresses in lower-case hex, a
 * non-negative value or amount; see hex-rows.ts): the hash as hex digits through `unhex()`, the
 * addresses as their bytes, the value as an INTEGER (`?`) or as hex digits (`unhex(?)`). Both one
 * statement call per row and the general multi-row statements, whose `coalesce(unhex(?), ?)`
 * pairs cost more than the statement calls they save, measured slower (docs/benchmarks.md,
 * "Where the time goes").
 */
export function prepareHexStatements(db: Database.Database) {
  const transfers = (value: string) =>
    bufferedRows(
      db,
      (rows) =>
        `INSERT INTO transfers (token_id, block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time)
         VALUES ${rowsOf(`(?, ?, ?, ?, unhex(?), ?, ?, ${value}, ?)`, rows)}`,
      9,
      BUFFERED_ROWS,
    );
  // Upserts, not inserts and updates apart (new rows told from existing ones by the old balance):
  // that measured slower in the writer (docs/benchmarks.md). The transfer count is an increment.
  const balances = (value: string) =>
    bufferedRows(
      db,
      (rows) =>
        `INSERT INTO balances (token_id, holder, amount, transfer_count, rank)
         VALUES ${rowsOf(`(?, ?, ${value}, ?, ${value})`, rows)}
         ON CONFLICT (token_id, holder) DO UPDATE SET amount = excluded.amount,
           transfer_count = transfer_count + excluded.transfer_count, rank = excluded.rank`,
      5,
      BUFFERED_ROWS,
    );
  return {
    insertTransfer: { integerValue: transfers('?'), blobValue: transfers('unhex(?)') },
    upsertBalance: { integerAmount: balances('?'), blobAmount: balances('unhex(?)') },
  };
}

/** The store's buffered inserts of lower-case-hex rows. */
export type HexStatements = ReturnType<typeof prepareHexStatements>;
