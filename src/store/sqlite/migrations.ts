import type Database from 'better-sqlite3';
import { TokenqueryError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import { fillAddressViews } from './address-views.js';
import { fillBalanceSums } from './balance-sums.js';

/**
 * The rows of `balances_negative` (migration 0010): a query that reads it repeats this condition
 * word for word, so that SQLite sees the index's condition implied and uses it.
 */
export const NEGATIVE_BALANCE =
  "(amount < 0 OR typeof(amount) = 'text') AND holder <> X'0000000000000000000000000000000000000000'";

/** One schema step. Steps are applied in order and never edited once released: add a new one. */
export interface Migration {
  name: string;
  sql: string;
  /** Fills what `sql` added from the stored data, in the same transaction (address-views.ts). */
  fill?: (db: Database.Database, logger: Logger) => void;
}

/*
 * Schema notes (sizes matter: the target is ≤ 200 bytes per transfer, indexes included, at 10M transfers).
 * - Columns declared BLOB have no affinity, so they keep whatever codec.ts stores (BLOB, TEXT or
 *   INTEGER) without conversion. Hex addresses and hashes are BLOBs, amounts are INTEGER or
 *   big-endian BLOBs.
 * - `transfers` is WITHOUT ROWID, keyed (token_id, block_number, log_index): a token's newest-first
 *   page is one backward range scan of the primary key, and there is no second copy of the key.
 * - Rollback does not get a secondary index on transfers (it would cost ~15 bytes on every transfer
 *   forever). Instead `recent_block_tokens` journals which tokens each block of the unfinalized
 *   window touched; it is pruned with the block refs. `chains.journal_floor` is the lowest block
 *   from which that journal is complete; a rollback below it (never expected) falls back to probing
 *   every token of the chain, which is slower but just as exact.
 * - `supply_dirty` is the block from which the supply must be read again (NULL: fresh), so a
 *   supply read at an older block cannot clear a newer mark.
 */
/** SQL of `balances.rank` from `amount` and `holder`, as `rankKey` (codec.ts) computes it. */
export const RANK_OF_AMOUNT = `CASE
  WHEN holder IN (x'0000000000000000000000000000000000000000', '') THEN NULL
  WHEN typeof(amount) = 'integer' THEN CASE WHEN amount > 0 THEN amount END
  WHEN typeof(amount) = 'blob' THEN unhex(printf('%02x', length(amount)) || hex(amount))
END`;

export const MIGRATIONS: readonly Migration[] = [
  {
    name: '0001_initial',
    sql: `
      CREATE TABLE chains (
        chain TEXT PRIMARY KEY,
        indexed_block INTEGER,
        indexed_hash BLOB,
        head INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        updated_at INTEGER NOT NULL,
        token_count INTEGER NOT NULL DEFAULT 0,
        journal_floor INTEGER NOT NULL DEFAULT 0
      ) WITHOUT ROWID;

      CREATE TABLE tokens (
        id INTEGER PRIMARY KEY,
        chain TEXT NOT NULL,
        address BLOB NOT NULL,
        name TEXT NOT NULL,
        symbol TEXT NOT NULL,
        decimals INTEGER NOT NULL,
        total_supply BLOB,
        cap BLOB,
        burned_balance BLOB,
        holder_count INTEGER NOT NULL DEFAULT 0,
        transfer_count INTEGER NOT NULL DEFAULT 0,
        first_block INTEGER NOT NULL,
        icon TEXT NOT NULL DEFAULT '',
        supply_dirty INTEGER,
        supply_block INTEGER
      );
      CREATE UNIQUE INDEX tokens_by_address ON tokens (chain, address);
      CREATE INDEX tokens_by_rank ON tokens (chain, holder_count DESC, transfer_count DESC, address ASC);
      CREATE INDEX tokens_supply_dirty ON tokens (chain, supply_dirty) WHERE supply_dirty IS NOT NULL;
      CREATE INDEX tokens_supply_age ON tokens (chain, supply_block);

      CREATE TABLE transfers (
        token_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        log_index INTEGER NOT NULL,
        tx_index INTEGER NOT NULL,
        tx_hash BLOB NOT NULL,
        from_addr BLOB NOT NULL,
        to_addr BLOB NOT NULL,
        value BLOB NOT NULL,
        time INTEGER NOT NULL,
        PRIMARY KEY (token_id, block_number, log_index)
      ) WITHOUT ROWID;

      CREATE TABLE balances (
        token_id INTEGER NOT NULL,
        holder BLOB NOT NULL,
        amount BLOB NOT NULL,
        PRIMARY KEY (token_id, holder)
      ) WITHOUT ROWID;

      CREATE TABLE block_refs (
        chain TEXT NOT NULL,
        number INTEGER NOT NULL,
        hash BLOB NOT NULL,
        parent_hash BLOB NOT NULL,
        PRIMARY KEY (chain, number)
      ) WITHOUT ROWID;

      CREATE TABLE recent_block_tokens (
        chain TEXT NOT NULL,
        block_number INTEGER NOT NULL,
        token_id INTEGER NOT NULL,
        PRIMARY KEY (chain, block_number, token_id)
      ) WITHOUT ROWID;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
    `,
  },
  {
    // NEO (Legacy 2.x). Global assets and NEP-5 tokens are rows of `tokens`; these tables hold
    // what only NEO has. NEO has one-block finality, so none of them is journaled for rollback.
    // - `neo_outputs` is the UTXO set the indexer resolves inputs from: rows are deleted when
    //   spent, so it stays the size of the unspent set. Values are Fixed8 units (codec amounts).
    // - `neo_contracts` keeps the first deployment of each hash; `seq` orders deployments of
    //   one transaction.
    // - `neo_assets`: the asset type (for `c`) and, when inside the index, the registration
    //   (for `i` and `o`).
    name: '0002_neo',
    sql: `
      CREATE TABLE neo_outputs (
        chain TEXT NOT NULL,
        txid BLOB NOT NULL,
        n INTEGER NOT NULL,
        asset BLOB NOT NULL,
        address TEXT NOT NULL,
        value BLOB NOT NULL,
        PRIMARY KEY (chain, txid, n)
      ) WITHOUT ROWID;

      CREATE TABLE neo_contracts (
        chain TEXT NOT NULL,
        hash BLOB NOT NULL,
        block_number INTEGER NOT NULL,
        tx_index INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        tx_hash BLOB NOT NULL,
        time INTEGER NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        author TEXT NOT NULL,
        owner TEXT,
        PRIMARY KEY (chain, hash)
      ) WITHOUT ROWID;
      CREATE INDEX neo_contracts_newest ON neo_contracts (chain, block_number DESC, tx_index DESC, seq DESC);

      CREATE TABLE neo_assets (
        chain TEXT NOT NULL,
        asset BLOB NOT NULL,
        type TEXT,
        registered_block INTEGER,
        registered_time INTEGER,
        registrar TEXT,
        PRIMARY KEY (chain, asset)
      ) WITHOUT ROWID;
    `,
  },
  {
    // What the dashboard and /metrics show of a chain (chain-activity.ts): its transfer count,
    // kept by every batch and rollback, starting from the tokens' own counts; and the newest
    // transfers of its last batch that had any (JSON text).
    name: '0003_chain_activity',
    sql: `
      ALTER TABLE chains ADD COLUMN transfer_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE chains ADD COLUMN recent_transfers TEXT;
      UPDATE chains SET transfer_count =
        (SELECT coalesce(sum(transfer_count), 0) FROM tokens WHERE tokens.chain = chains.chain);
    `,
  },
  {
    // Per-key rate limits and IP allow-lists (encoding in store/api-key-limits.ts). NULL is the
    // server default / any address, so existing keys keep behaving as before.
    name: '0004_api_key_limits',
    sql: `
      ALTER TABLE api_keys ADD COLUMN rate_per_second REAL;
      ALTER TABLE api_keys ADD COLUMN rate_burst INTEGER;
      ALTER TABLE api_keys ADD COLUMN allow_ips TEXT;
    `,
  },
  {
    // Starting balances of a late start (types.ts, BatchSeeds): one row per (token, holder) pair
    // seeded, zero amounts included, so that a holder is seeded once even after its balance row
    // went away at zero. `chains.seed_block` is the block they are read at (NULL: not seeded);
    // `holders_partial` is set for good when the node could not answer that block's state.
    name: '0005_seed_balances',
    sql: `
      CREATE TABLE seed_balances (
        token_id INTEGER NOT NULL,
        holder BLOB NOT NULL,
        amount BLOB NOT NULL,
        PRIMARY KEY (token_id, holder)
      ) WITHOUT ROWID;
      ALTER TABLE chains ADD COLUMN seed_block INTEGER;
      ALTER TABLE chains ADD COLUMN holders_partial INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // Balances written behind the checkpoint during a backfill (`IndexBatch.deferBalances`): the
    // balances table holds every transfer up to `balances_block` and none after it; NULL when it is
    // current with the checkpoint. After a crash the next write replays the transfers above it.
    name: '0006_balances_block',
    sql: `
      ALTER TABLE chains ADD COLUMN balances_block INTEGER;
    `,
  },
  {
    // The address operations and token holders (issue #16). See address-views.ts for the why.
    // - `addresses` gives each (chain, address) named by a transfer a small integer id, which is
    //   all `address_transfers` stores: 2-4 bytes instead of 20 in every entry, and the id names
    //   the chain, so an address active on two chains reads one chain's range only.
    // - `address_transfers`: one entry per (address named, transfer), a self-transfer once, keyed
    //   for the one-token page; `address_transfers_all` for the all-tokens page.
    // - `balances` keeps a row while transfers name the holder (`transfer_count`), even at zero.
    //   `rank` is the holder-list sort key (NULL unless the balance is positive and the holder can
    //   hold): the amount as an INTEGER up to 2^53 - 1, above that a BLOB of its byte length then its
    //   big-endian bytes. SQLite sorts every INTEGER below every BLOB, and length-prefixed BLOBs
    //   compare as the numbers they hold, so `rank DESC` is uint256 order. Written with the amount
    //   (`rankKey` in codec.ts; RANK_OF_AMOUNT for the upgrade). A stored column, not a virtual
    //   one: a page read through an index on a virtual column looks up every row it skips in the
    //   table (SQLite does not treat such an index as covering), 20 times slower at OFFSET 2,400.
    name: '0007_address_views',
    sql: `
      CREATE TABLE addresses (
        id INTEGER PRIMARY KEY,
        chain TEXT NOT NULL,
        address BLOB NOT NULL
      );
      CREATE UNIQUE INDEX addresses_by_address ON addresses (chain, address);

      CREATE TABLE address_transfers (
        address_id INTEGER NOT NULL,
        token_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        log_index INTEGER NOT NULL,
        PRIMARY KEY (address_id, token_id, block_number, log_index)
      ) WITHOUT ROWID;
      CREATE INDEX address_transfers_all ON address_transfers (address_id, block_number, log_index);

      ALTER TABLE balances ADD COLUMN transfer_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE balances ADD COLUMN rank BLOB;
      UPDATE balances SET rank = ${RANK_OF_AMOUNT};
      CREATE INDEX balances_by_rank ON balances (token_id, rank DESC, holder) WHERE rank IS NOT NULL;
      CREATE INDEX balances_by_holder ON balances (holder, token_id) WHERE rank IS NOT NULL;
    `,
    fill: fillAddressViews,
  },
  {
    // Balance changes without a `Transfer` log (issue #18; `IndexBatch.balanceChanges`): WETH9's
    // Deposit/Withdrawal, Tether's Issue/Redeem/DestroyedBlackFunds. Kept per token like its
    // transfers (same key), so a rollback takes them off and a replay of deferred balances adds
    // them again; `amount` is signed (a debit is negative). A new table: nothing to fill.
    name: '0008_balance_changes',
    sql: `
      CREATE TABLE balance_changes (
        token_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        log_index INTEGER NOT NULL,
        holder BLOB NOT NULL,
        amount BLOB NOT NULL,
        PRIMARY KEY (token_id, block_number, log_index)
      ) WITHOUT ROWID;
    `,
  },
  {
    // The not-exact mark of a token (issue #18; `StoreWriter.setExactness`): NULL `not_exact_block`
    // = exact. On the tokens row so it goes with the token. `not_exact_drift` is signed decimal
    // text (summed balances minus totalSupply). ADD COLUMN without a default rewrites no row, and
    // the partial index starts empty: nothing to fill, however large the store.
    name: '0009_not_exact',
    sql: `
      ALTER TABLE tokens ADD COLUMN not_exact_block INTEGER;
      ALTER TABLE tokens ADD COLUMN not_exact_drift TEXT;
      ALTER TABLE tokens ADD COLUMN not_exact_sampled INTEGER;
      ALTER TABLE tokens ADD COLUMN not_exact_differing INTEGER;
      CREATE INDEX tokens_not_exact ON tokens (chain) WHERE not_exact_block IS NOT NULL;
    `,
  },
  {
    // Negative stored balances (issue #18; `HistoryScans.negativeBalances`): `balanceOf` is never
    // negative, so a negative stored balance is a credit the index missed (a WETH9 deposit an
    // import's Transfer rows lack, a Tether issue to its owner). The exactness check samples them.
    // The zero address is left out (its balance is minus every mint). Negative amounts are INTEGER
    // below 0 or, past 2^53, decimal TEXT (codec.ts); the index holds only those rows, so it costs
    // a write only where a balance goes or stays negative. Built by one scan of `balances`.
    name: '0010_negative_balances',
    sql: `
      CREATE INDEX balances_negative ON balances (token_id, holder)
        WHERE ${NEGATIVE_BALANCE};
    `,
  },
  {
    // The running sum of each token's stored balances without the zero address's (issue #18;
    // store/balance-sums.ts, `StoreReader.getBalanceSum`), kept by every write of balances, so the
    // exactness check reads one row instead of scanning the token's balances. Amount codec
    // (codec.ts), exact at any size and sign. ADD COLUMN with a constant default rewrites no row;
    // the fill sums each token's balances once, with progress lines.
    name: '0011_balance_sums',
    sql: `
      ALTER TABLE tokens ADD COLUMN balance_sum BLOB NOT NULL DEFAULT 0;
    `,
    fill: fillBalanceSums,
  },
  {
    // A bulk load (issue #17; `IndexBatch.bulkLoad`, bulk-load.ts): the transfers of a chain that
    // had none are appended here in the order they come (a rowid table without an index, so each
    // batch writes a few pages at the end of the file), then sorted into `transfers`, `balances`,
    // `addresses` and `address_transfers` at once. `chains.bulk_block` is set while some are
    // waiting here: the other tables hold the chain up to that block. Both start empty: nothing
    // to fill, however large the store.
    name: '0012_bulk_load',
    sql: `
      CREATE TABLE bulk_transfers (
        token_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        log_index INTEGER NOT NULL,
        tx_index INTEGER NOT NULL,
        tx_hash BLOB NOT NULL,
        from_addr BLOB NOT NULL,
        to_addr BLOB NOT NULL,
        value BLOB NOT NULL,
        time INTEGER NOT NULL
      );
      ALTER TABLE chains ADD COLUMN bulk_block INTEGER;
    `,
  },
  {
    // A bulk load's build in steps, each step's key-range chunks a transaction of their own
    // (bulk-build.ts), so that the WAL holds one chunk's pages rather than the whole build's. A
    // row while a chain's build is under way: the step it is at, and the first key of that step
    // not yet built (NULL: none built). The chain keeps `bulk_block` (and its reads answer as
    // before the load) until the last step. A store that was mid-load when upgraded has no row:
    // its build starts at the first step. Starts empty: nothing to fill.
    name: '0013_bulk_build_steps',
    sql: `
      CREATE TABLE bulk_build (
        chain TEXT PRIMARY KEY,
        step INTEGER NOT NULL,
        next_key,
        fresh_addresses INTEGER,
        dropped_index TEXT
      ) WITHOUT ROWID;
    `,
  },
];

function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the schema up to date. The version lives in `PRAGMA user_version`, which is part of the
 * database header and so changes in the same transaction as the schema. `BEGIN IMMEDIATE` takes
 * the write lock before reading the version, so two processes opening a new file at once apply
 * each step exactly once (the second waits on busy_timeout, then sees the new version).
 */
export function migrate(
  db: Database.Database,
  logger: Logger,
  migrations: readonly Migration[] = MIGRATIONS,
): void {
  const check = (version: number): void => {
    if (version > migrations.length) {
      throw new TokenqueryError(
        `the database schema (version ${version}) is newer than this tokenquery understands (${migrations.length}); upgrade tokenquery`,
      );
    }
  };
  // Fast path without the write lock: nearly every open finds the schema current.
  const seen = userVersion(db);
  check(seen);
  if (seen === migrations.length) return;
  db.transaction(() => {
    const current = userVersion(db);
    check(current);
    for (let version = current; version < migrations.length; version++) {
      const migration = migrations[version]!;
      db.exec(migration.sql);
      migration.fill?.(db, logger);
      db.pragma(`user_version = ${version + 1}`);
      logger.info({ migration: migration.name, version: version + 1 }, 'applied database migration');
    }
  }).immediate();
}
