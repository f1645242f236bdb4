import type pg from 'pg';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { TokenqueryError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import { upgradeAddressIndex } from './address-migration.js';
import { BALANCE_SUMS_SQL, fillBalanceSums } from './balance-sum-migration.js';
import { BULK_LOAD_SQL } from './bulk-load.js';
import { CHAIN_PARTITIONS_SQL, createStagingPartitions, partitionByChain } from './chain-partitions.js';
import { encodeHex } from './codec.js';
import { MIGRATION_LOCK_KEY } from './migration-lock.js';
import { NEO_MIGRATION_SQL } from './neo-tables.js';

/** The rows of `balances_negative` (migration 0010), repeated by the query that reads it. */
export const NEGATIVE_BALANCE = `amount < 0 AND holder <> '${encodeHex(ZERO_ADDRESS)}'::bytea`;

/** One schema step. Steps are applied in order and never edited once released: add a new one. */
export interface Migration {
  name: string;
  /** The step's DDL, run first. */
  sql: string;
  /** Runs after `sql` in the same transaction: a step that fills what `sql` made, in chunks, with progress logged. */
  fill?: (client: pg.ClientBase, logger: Logger) => Promise<void>;
}

/** Table that records applied steps, in the store's schema (the first of `search_path`). */
export const MIGRATIONS_TABLE = 'tokenquery_migrations';

/*
 * Schema notes (see docs/scaling.md for the reasoning at scale).
 * - Addresses and hashes are `bytea` in the encoding of codec.ts (20 bytes for an address);
 *   amounts are `numeric` (exact). Transfer values and supplies are uint256 and fit
 *   numeric(78,0). Balances are unconstrained `numeric`: a hostile token can send 2^256 − 1 to
 *   the same holder twice, and the sum must not jam the indexer.
 * - Token names and symbols are `bytea` (UTF-8): `text` cannot hold the NUL a hostile
 *   `name()` may contain.
 * - `transfers` is keyed (token_id, block_number, log_index): a token's newest-first page is one
 *   backward scan of the primary key, at any table size. Columns are ordered so that no
 *   alignment padding is needed: 4+4+8+8+4 bytes of fixed width, then the variable ones.
 * - Token ids are `integer`: 4 bytes saved on every transfer and balance. Since
 *   `0012_chain_partitions` each chain draws them from a range of its own (2^24 ids), and the
 *   history tables are partitioned by those ranges, one partition per chain (chain-partitions.ts).
 * - `tokens_by_rank` serves the token list order (holders desc, transfers desc, address asc).
 * - `balances` keeps 10% free space per page (from when its updates were HOT; since
 *   `0007_address_index` indexes the amount, they are not).
 * - Rollback uses the `recent_block_tokens` journal like SQLite does; `chains.journal_floor` is
 *   the lowest block from which it is complete.
 * - `text` columns that are sorted (`chains.chain`, `api_keys.id`) use the "C" collation, so
 *   they sort by bytes like SQLite, whatever the database's locale.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: '0001_initial',
    sql: `
      CREATE TABLE chains (
        chain text COLLATE "C" PRIMARY KEY,
        indexed_block bigint,
        indexed_hash bytea,
        head bigint NOT NULL DEFAULT 0,
        last_error text,
        updated_at bigint NOT NULL,
        token_count bigint NOT NULL DEFAULT 0,
        journal_floor bigint NOT NULL DEFAULT 0
      );

      CREATE TABLE tokens (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        chain text COLLATE "C" NOT NULL,
        address bytea NOT NULL,
        name bytea NOT NULL,
        symbol bytea NOT NULL,
        decimals bigint NOT NULL,
        total_supply numeric(78, 0),
        cap numeric(78, 0),
        burned_balance numeric(78, 0),
        holder_count bigint NOT NULL DEFAULT 0,
        transfer_count bigint NOT NULL DEFAULT 0,
        first_block bigint NOT NULL,
        icon text NOT NULL DEFAULT '',
        supply_dirty bigint,
        supply_block bigint
      );
      CREATE UNIQUE INDEX tokens_by_address ON tokens (chain, address);
      CREATE INDEX tokens_by_rank ON tokens (chain, holder_count DESC, transfer_count DESC, address ASC);
      CREATE INDEX tokens_supply_dirty ON tokens (chain, supply_dirty, id) WHERE supply_dirty IS NOT NULL;
      CREATE INDEX tokens_supply_age ON tokens (chain, supply_block, id) WHERE supply_dirty IS NULL;

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
        CONSTRAINT transfers_pkey PRIMARY KEY (token_id, block_number, log_index)
      );

      CREATE TABLE balances (
        token_id integer NOT NULL,
        holder bytea NOT NULL,
        amount numeric NOT NULL,
        CONSTRAINT balances_pkey PRIMARY KEY (token_id, holder)
      ) WITH (fillfactor = 90);

      CREATE TABLE block_refs (
        chain text COLLATE "C" NOT NULL,
        number bigint NOT NULL,
        hash bytea NOT NULL,
        parent_hash bytea NOT NULL,
        PRIMARY KEY (chain, number)
      );

      CREATE TABLE recent_block_tokens (
        chain text COLLATE "C" NOT NULL,
        block_number bigint NOT NULL,
        token_id integer NOT NULL,
        PRIMARY KEY (chain, block_number, token_id)
      );

      CREATE TABLE api_keys (
        id text COLLATE "C" PRIMARY KEY,
        hash text COLLATE "C" NOT NULL UNIQUE,
        label text NOT NULL,
        created_at bigint NOT NULL,
        revoked_at bigint
      );
    `,
  },
  {
    // NEO (Legacy 2.x): the UTXO set, contract deployments and asset facts; see neo-tables.ts.
    // Contract names and authors are bytea (UTF-8) for the same reason as token names.
    name: '0002_neo',
    sql: NEO_MIGRATION_SQL,
  },
  {
    // Writer election (writer-election.ts): `writer_epoch` is bumped by every newly elected
    // writer of the chain and checked by each of its write transactions (fencing); `writer_id`
    // and `writer_since` say who it is in /status. A constant default makes this instant.
    name: '0003_writer_election',
    sql: `
      ALTER TABLE chains
        ADD COLUMN writer_epoch bigint NOT NULL DEFAULT 0,
        ADD COLUMN writer_id text,
        ADD COLUMN writer_since bigint;
    `,
  },
  {
    // What the dashboard and /metrics show of a chain (chain-activity.ts): its transfer count,
    // kept by every batch and rollback, starting from the tokens' own counts; and the newest
    // transfers of its last batch that had any (JSON text).
    name: '0004_chain_activity',
    sql: `
      ALTER TABLE chains
        ADD COLUMN transfer_count bigint NOT NULL DEFAULT 0,
        ADD COLUMN recent_transfers text;
      UPDATE chains SET transfer_count =
        (SELECT coalesce(sum(transfer_count), 0) FROM tokens WHERE tokens.chain = chains.chain);
    `,
  },
  {
    // Per-key rate limits and IP allow-lists (encoding in store/api-key-limits.ts; `unlimited`
    // is an infinite rate). NULL is the server default / any address, so existing keys keep
    // behaving as before.
    name: '0005_api_key_limits',
    sql: `
      ALTER TABLE api_keys
        ADD COLUMN rate_per_second double precision,
        ADD COLUMN rate_burst integer,
        ADD COLUMN allow_ips text;
    `,
  },
  {
    // Starting balances of a late start (types.ts, BatchSeeds): one row per (token, holder) pair
    // seeded, zero amounts included, so that a holder is seeded once even after its balance row
    // went away at zero. `chains.seed_block` is the block they are read at (NULL: not seeded);
    // `holders_partial` is set for good when the node could not answer that block's state.
    name: '0006_seed_balances',
    sql: `
      CREATE TABLE seed_balances (
        token_id integer NOT NULL,
        holder bytea NOT NULL,
        amount numeric(78, 0) NOT NULL,
        CONSTRAINT seed_balances_pkey PRIMARY KEY (token_id, holder)
      );
      ALTER TABLE chains
        ADD COLUMN seed_block bigint,
        ADD COLUMN holders_partial boolean NOT NULL DEFAULT false;
    `,
  },
  {
    // The address operations and token holders (address-migration.ts): per-holder transfer counts
    // in `balances` (rows are kept while a transfer names the holder), `address_transfers`, and
    // the indexes of the holder list and of an address's tokens. A store of the previous version
    // is filled from its transfers in place.
    name: '0007_address_index',
    sql: '',
    fill: upgradeAddressIndex,
  },
  {
    // Balance changes without a `Transfer` log (issue #18; `IndexBatch.balanceChanges`): WETH9's
    // Deposit/Withdrawal, Tether's Issue/Redeem/DestroyedBlackFunds. Keyed like `transfers`, so a
    // rollback deletes a token's above a block by its key; `amount` is signed. A new table:
    // nothing to fill.
    name: '0008_balance_changes',
    sql: `
      CREATE TABLE balance_changes (
        token_id integer NOT NULL,
        log_index integer NOT NULL,
        block_number bigint NOT NULL,
        holder bytea NOT NULL,
        amount numeric NOT NULL,
        CONSTRAINT balance_changes_pkey PRIMARY KEY (token_id, block_number, log_index)
      );
    `,
  },
  {
    // The not-exact mark of a token (issue #18; `StoreWriter.setExactness`): NULL `not_exact_block`
    // = exact. On the tokens row so it goes with the token. Nullable columns without a default
    // are added without rewriting the table, and the partial index starts empty: nothing to
    // fill, however large the store.
    name: '0009_not_exact',
    sql: `
      ALTER TABLE tokens ADD COLUMN not_exact_block bigint,
        ADD COLUMN not_exact_drift numeric,
        ADD COLUMN not_exact_sampled integer,
        ADD COLUMN not_exact_differing integer;
      CREATE INDEX tokens_not_exact ON tokens (chain) WHERE not_exact_block IS NOT NULL;
    `,
  },
  {
    // Negative stored balances (issue #18; `HistoryScans.negativeBalances`): `balanceOf` is never
    // negative, so a negative stored balance is a credit the index missed. The zero address is
    // left out (its balance is minus every mint). The index holds only those rows: a write costs
    // it something only where a balance goes or stays negative. Built by one scan of `balances`.
    name: '0010_negative_balances',
    sql: `
      CREATE INDEX balances_negative ON balances (token_id, holder)
        WHERE ${NEGATIVE_BALANCE};
    `,
  },
  {
    // The running sum of each token's stored balances without the zero address's (issue #18;
    // store/balance-sums.ts, `StoreReader.getBalanceSum`), kept by every write of balances, so the
    // exactness check reads one row instead of scanning the token's balances. A store of the
    // previous version is filled in place (balance-sum-migration.ts).
    name: '0011_balance_sums',
    sql: BALANCE_SUMS_SQL,
    fill: fillBalanceSums,
  },
  {
    // One partition per chain of the tables that hold its history (issue #17; chain-partitions.ts):
    // each chain draws its token ids from a range of its own, so the partitions are ranges of
    // `token_id` and no key changes. A store of the previous version is renumbered and copied into
    // them in place.
    name: '0012_chain_partitions',
    sql: CHAIN_PARTITIONS_SQL,
    fill: partitionByChain,
  },
  {
    // Bulk loads (issue #17; bulk-load.ts): the staging table a load's batches append their
    // transfers to, partitioned by chain like `transfers` (the chains already held get their
    // partition here), and `chains.bulk_block`, the block before a load that waits for its build
    // (NULL: none). A new table and a nullable column: nothing to rewrite.
    name: '0013_bulk_load',
    sql: BULK_LOAD_SQL,
    fill: createStagingPartitions,
  },
];

/** Highest applied version, or 0 when the migrations table does not exist yet. */
async function appliedVersion(client: pg.ClientBase): Promise<number> {
  const exists = await client.query<{ table: string | null }>(`SELECT to_regclass($1) AS "table"`, [
    MIGRATIONS_TABLE,
  ]);
  if (exists.rows[0]?.table == null) return 0;
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`,
  );
  return result.rows[0]?.version ?? 0;
}

/**
 * Brings the schema up to date. Safe when several processes open a new database at once: the
 * steps run in one transaction under a transaction-level advisory lock, so one process applies
 * them and the others wait, then find them applied. PostgreSQL DDL is transactional, so a step
 * that fails leaves no half-made schema behind.
 */
export async function migrate(
  client: pg.ClientBase,
  logger: Logger,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<void> {
  const check = (version: number): void => {
    if (version > migrations.length) {
      throw new TokenqueryError(
        `the database schema (version ${version}) is newer than this tokenquery understands (${migrations.length}); upgrade tokenquery`,
      );
    }
  };
  // Fast path without the lock: nearly every open finds the schema current.
  const seen = await appliedVersion(client);
  check(seen);
  if (seen === migrations.length) return;

  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const current = await appliedVersion(client);
    check(current);
    for (let version = current; version < migrations.length; version++) {
      const migration = migrations[version]!;
      if (migration.sql !== '') await client.query(migration.sql);
      await migration.fill?.(client, logger);
      await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, $2)`, [
        version + 1,
        migration.name,
      ]);
      logger.info({ migration: migration.name, version: version + 1 }, 'applied database migration');
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
