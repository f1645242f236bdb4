/**
 * One partition per chain for the tables that hold a chain's history (issue #17): `transfers`,
 * `balances`, `seed_balances`, `balance_changes` and `address_transfers` are partitioned
 * `BY RANGE (token_id)`, and each chain draws its token ids from a range of its own: chain
 * ordinal k (`chain_partitions`) from `[k·2²⁴, (k+1)·2²⁴)`. No key, column or byte per row
 * changes, every read by token prunes to its chain's partition by itself, and an operator can
 * `DETACH` a chain's partitions, move them to a tablespace of their own or vacuum them alone.
 *
 * A chain gets its ordinal and partitions with its first token (`ensureChainPartition`, called by
 * the batch that inserts it). Migration `0012_chain_partitions` moves a store of the previous
 * version (one identity sequence for every chain's token ids, interleaved) onto this layout: it
 * renumbers the tokens chain by chain and copies every row of those tables into the partitioned
 * ones, table by table, with progress logged.
 */
import type pg from 'pg';
import { TokenqueryError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import { MIGRATION_LOCK_KEY } from './migration-lock.js';

/** Token ids of chain ordinal k are `[k << TOKEN_ID_BITS, (k + 1) << TOKEN_ID_BITS)`. */
export const TOKEN_ID_BITS = 24;
/** Ordinals 0..127: token ids are `integer` (below 2³¹). */
export const MAX_CHAINS = 2 ** (31 - TOKEN_ID_BITS);

/** The partitioned tables, in the order the migration copies them. */
export const PARTITIONED_TABLES = [
  'transfers',
  'address_transfers',
  'balances',
  'balance_changes',
  'seed_balances',
] as const;
type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/**
 * Partitioned the same way since `0013_bulk_load`, but no part of a chain's history: the staging
 * table of a bulk load (bulk-load.ts), so that a chain's build truncates its own rows only.
 */
export const STAGING_TABLES = ['bulk_transfers'] as const;
type StagingTable = (typeof STAGING_TABLES)[number];

/** Storage parameters of a table's partitions (a partitioned parent holds none itself). */
export const PARTITION_STORAGE: Partial<Record<PartitionedTable, string>> = {
  // Kept from the unpartitioned table (see migrations.ts).
  balances: ' WITH (fillfactor = 90)',
};

export const CHAIN_PARTITIONS_SQL = `
  CREATE TABLE chain_partitions (
    chain text COLLATE "C" PRIMARY KEY,
    ordinal integer NOT NULL UNIQUE CHECK (ordinal >= 0 AND ordinal < ${MAX_CHAINS}),
    next_token integer NOT NULL DEFAULT 1,
    CONSTRAINT chain_token_ids_left CHECK (next_token <= ${2 ** TOKEN_ID_BITS})
  );
`;

/**
 * SQL: `column` (a token id) lies in the range of the chain named by parameter `param`. A read by
 * address names no token, so without it every chain's partition is probed; with it the executor
 * prunes the others once it knows the range.
 */
export function inChainRange(column: string, param: string): string {
  const span = 2 ** TOKEN_ID_BITS;
  return (
    `${column} >= (SELECT ordinal * ${span} FROM chain_partitions WHERE chain = ${param}) AND ` +
    `${column} < (SELECT (ordinal + 1) * ${span} FROM chain_partitions WHERE chain = ${param})`
  );
}

/** The name of `table`'s partition for `chain`: `transfers_eth`, or by ordinal for other names. */
export function partitionName(table: string, chain: string, ordinal: number): string {
  return /^[a-z][a-z0-9_]{0,30}$/.test(chain) ? `${table}_${chain}` : `${table}_chain${ordinal}`;
}

/** Makes `chain`'s partition of `table`, attached to `parent` (the table itself, or the migration's stand-in). */
async function createPartition(
  client: pg.ClientBase,
  table: PartitionedTable | StagingTable,
  chain: string,
  ordinal: number,
  parent: string = table,
): Promise<void> {
  const from = ordinal * 2 ** TOKEN_ID_BITS;
  const to = (ordinal + 1) * 2 ** TOKEN_ID_BITS;
  await client.query(
    `CREATE TABLE "${partitionName(table, chain, ordinal)}" PARTITION OF "${parent}"
     FOR VALUES FROM (${from}) TO (${to})${table === 'bulk_transfers' ? '' : (PARTITION_STORAGE[table] ?? '')}`,
  );
}

/**
 * Gives `chain` its ordinal and partitions unless it has them, in `client`'s transaction. Call it
 * before the transaction touches a partitioned table: creating a partition locks its parent, and
 * another writer waiting here for the lock below must not hold a lock on a parent meanwhile.
 */
export async function ensureChainPartition(client: pg.ClientBase, chain: string): Promise<void> {
  const present = await client.query('SELECT 1 FROM chain_partitions WHERE chain = $1', [chain]);
  if (present.rowCount !== 0) return;
  // Ordinals are handed out one at a time across processes (the migrations' lock).
  await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
  const again = await client.query('SELECT 1 FROM chain_partitions WHERE chain = $1', [chain]);
  if (again.rowCount !== 0) return;
  const next = await client.query<{ ordinal: number }>(
    'SELECT coalesce(max(ordinal) + 1, 0) AS ordinal FROM chain_partitions',
  );
  const ordinal = next.rows[0]!.ordinal;
  if (ordinal >= MAX_CHAINS) {
    throw new TokenqueryError(
      `this PostgreSQL store holds ${MAX_CHAINS} chains already; no room for ${chain}`,
    );
  }
  await client.query('INSERT INTO chain_partitions (chain, ordinal) VALUES ($1, $2)', [chain, ordinal]);
  for (const table of [...PARTITIONED_TABLES, ...STAGING_TABLES]) {
    await createPartition(client, table, chain, ordinal);
  }
}

/** The `fill` of `0013_bulk_load`: the staging partitions of the chains a store already holds. */
export async function createStagingPartitions(client: pg.ClientBase): Promise<void> {
  const chains = await client.query<{ chain: string; ordinal: number }>(
    'SELECT chain, ordinal FROM chain_partitions ORDER BY ordinal',
  );
  for (const { chain, ordinal } of chains.rows) {
    for (const table of STAGING_TABLES) await createPartition(client, table, chain, ordinal);
  }
}

/** The rows of `table` (a partitioned table's included), for progress lines. */
async function rowCount(client: pg.ClientBase, table: string): Promise<number> {
  const result = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`);
  return Number(result.rows[0]!.n);
}

/**
 * The `fill` of `0012_chain_partitions`: renumbers the tokens chain by chain and rebuilds the
 * history tables partitioned, with their keys and indexes as they were.
 */
export async function partitionByChain(client: pg.ClientBase, logger: Logger): Promise<void> {
  const chains = await client.query<{ chain: string; tokens: string }>(
    'SELECT chain, count(*) AS tokens FROM tokens GROUP BY chain ORDER BY chain',
  );
  if (chains.rows.length > MAX_CHAINS) {
    throw new TokenqueryError(
      `this store holds ${chains.rows.length} chains; partitions take at most ${MAX_CHAINS}`,
    );
  }
  const tooMany = chains.rows.find((row) => Number(row.tokens) >= 2 ** TOKEN_ID_BITS);
  if (tooMany !== undefined) {
    throw new TokenqueryError(
      `chain ${tooMany.chain} holds ${tooMany.tokens} tokens, more than a partition's ${2 ** TOKEN_ID_BITS - 1}`,
    );
  }
  // Ordinals in order of each chain's first token, as a store built new hands them out.
  await client.query(
    `INSERT INTO chain_partitions (chain, ordinal, next_token)
     SELECT chain, (row_number() OVER (ORDER BY min(id)) - 1)::integer, count(*) + 1 FROM tokens GROUP BY chain`,
  );
  // The new id of every token: its chain's base plus its rank among the chain's tokens by old id
  // (new tokens keep following first appearance, which ties of `tokensNeedingSupply` rely on).
  await client.query(`
    CREATE TEMP TABLE token_renumbering ON COMMIT DROP AS
    SELECT t.id AS old_id,
      (p.ordinal * ${2 ** TOKEN_ID_BITS} + row_number() OVER (PARTITION BY t.chain ORDER BY t.id))::integer AS new_id
    FROM tokens AS t JOIN chain_partitions AS p ON p.chain = t.chain`);
  await client.query('CREATE UNIQUE INDEX ON token_renumbering (old_id)');
  await client.query('ANALYZE token_renumbering');
  const total = chains.rows.reduce((sum, row) => sum + Number(row.tokens), 0);
  if (total > 0) {
    logger.info(
      { migration: '0012_chain_partitions', chains: chains.rows.length, tokens: total },
      'moving each chain into partitions of its own (the store is upgraded in place; every row is copied once, which takes a while on a large store)',
    );
  }
  // Through negative ids, so that no new id meets an old one still in the key.
  await client.query('ALTER TABLE tokens ALTER COLUMN id DROP IDENTITY IF EXISTS');
  await client.query('UPDATE tokens SET id = -id');
  await client.query(
    'UPDATE tokens SET id = r.new_id FROM token_renumbering AS r WHERE tokens.id = -r.old_id',
  );
  await client.query('UPDATE recent_block_tokens SET token_id = -token_id');
  await client.query(
    `UPDATE recent_block_tokens SET token_id = r.new_id FROM token_renumbering AS r
     WHERE recent_block_tokens.token_id = -r.old_id`,
  );

  const ordinals = await client.query<{ chain: string; ordinal: number }>(
    'SELECT chain, ordinal FROM chain_partitions ORDER BY ordinal',
  );
  for (const table of PARTITIONED_TABLES) await repartition(client, logger, table, ordinals.rows);
}

/** Rebuilds `table` partitioned by chain, its rows renumbered, its key and indexes as they were. */
async function repartition(
  client: pg.ClientBase,
  logger: Logger,
  table: PartitionedTable,
  chains: { chain: string; ordinal: number }[],
): Promise<void> {
  const staged = `${table}__by_chain`;
  const columns = (
    await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
      [table],
    )
  ).rows.map((row) => `"${row.column_name}"`);
  const keys = await client.query<{ name: string; definition: string }>(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
     WHERE conrelid = $1::regclass AND contype IN ('p', 'u')`,
    [table],
  );
  const indexes = await client.query<{ definition: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS definition FROM pg_index AS i
     WHERE i.indrelid = $1::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint AS c WHERE c.conindid = i.indexrelid)`,
    [table],
  );
  await client.query(
    `CREATE TABLE "${staged}" (LIKE "${table}" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (token_id)`,
  );
  for (const { chain, ordinal } of chains) await createPartition(client, table, chain, ordinal, staged);
  const rows = await rowCount(client, table);
  const started = performance.now();
  const select = columns.map((column) => (column === '"token_id"' ? 'r.new_id' : `t.${column}`)).join(', ');
  const copied = await client.query(
    `INSERT INTO "${staged}" (${columns.join(', ')})
     SELECT ${select} FROM "${table}" AS t JOIN token_renumbering AS r ON r.old_id = t.token_id`,
  );
  if (copied.rowCount !== rows) {
    throw new TokenqueryError(
      `${table}: ${rows - (copied.rowCount ?? 0)} of ${rows} rows name a token the store does not hold; run tokenquery verify`,
    );
  }
  await client.query(`DROP TABLE "${table}"`);
  await client.query(`ALTER TABLE "${staged}" RENAME TO "${table}"`);
  for (const key of keys.rows) {
    await client.query(`ALTER TABLE "${table}" ADD CONSTRAINT "${key.name}" ${key.definition}`);
  }
  for (const index of indexes.rows) await client.query(index.definition);
  await client.query(`ANALYZE "${table}"`);
  if (rows > 0) {
    logger.info(
      {
        migration: '0012_chain_partitions',
        table,
        rows,
        seconds: Math.round((performance.now() - started) / 1000),
      },
      `${table} moved into its chains' partitions`,
    );
  }
}
