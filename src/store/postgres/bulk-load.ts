/**
 * A bulk load (`IndexBatch.bulkLoad`, issue #17) on PostgreSQL: the import of a chain the store
 * holds no transfers of, without maintaining seven B-trees per transfer as it goes.
 *
 * Each batch of the load COPYs its transfers, as they come, into the chain's partition of
 * `bulk_transfers` (no index, no key; logged, so a committed batch survives a crash), and commits
 * its checkpoint, token rows, supply marks, journal and block refs as any batch does
 * (apply-batch.ts). The chain's `bulk_block` (status `balancesBlock`) is the block before the
 * load: its transfers, balances and address views read as of then (empty) until the build.
 *
 * The first batch without the flag (or a rollback) builds the rest first, in its own transaction:
 * the chain's partitions of `transfers`, `address_transfers` and `balances` are empty (the load
 * started on a chain without transfers), so each is made anew as a plain table, filled by one
 * `INSERT … SELECT … ORDER BY` in its key order (balances by one `GROUP BY`, summed exactly in
 * `numeric`), then given its indexes by one sorted `CREATE INDEX` each, and swapped in for the
 * empty partition (`ATTACH PARTITION` finds the indexes and, from a CHECK that matches the bound,
 * that no row needs checking). The indexes are those of the partition it replaces, read from the
 * catalog, and take its names: the store is the same, catalog included, as one loaded row by row.
 * The tokens' counts and running sums are then those of the tables.
 *
 * Interrupted: appended batches are committed with their checkpoints, and the next run goes on
 * from the checkpoint; the build is one transaction (PostgreSQL's DDL is transactional), so a
 * crash in it leaves the staged rows to build again. Only the swap takes the parents' exclusive
 * lock, at the very end of the build: reads of other chains wait for the commit, not the build.
 */
import type pg from 'pg';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { TokenqueryError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import type { IndexBatch } from '../types.js';
import { HOLDER_PREDICATE } from './address-migration.js';
import type { TransferColumns } from './bulk-copy.js';
import { PARTITION_STORAGE, partitionName, TOKEN_ID_BITS } from './chain-partitions.js';
import { encodeHex } from './codec.js';
import { encodeCopyRows } from './copy-binary.js';
import { copyFrom } from './copy-from.js';
import type { LockedChain } from './transactions.js';

/** The staging table (migration `0013_bulk_load`): a chain's loaded transfers, partitioned like `transfers`. */
export const BULK_TABLE = 'bulk_transfers';

export const BULK_LOAD_SQL = `
  ALTER TABLE chains ADD COLUMN bulk_block bigint;
  CREATE TABLE ${BULK_TABLE} (LIKE transfers) PARTITION BY RANGE (token_id);
`;

/** Session memory of the build's sorts (`INSERT … ORDER BY`, `GROUP BY`) and index builds. */
const BUILD_WORK_MEM = '256MB';
const BUILD_MAINTENANCE_WORK_MEM = '1GB';

/** How often a long step logs its progress. */
const PROGRESS_EVERY_MS = 5_000;

/** Whether `batch` goes to the staging table: a load goes on, or starts on a chain without transfers. */
export function acceptsBulk(batch: IndexBatch, stored: LockedChain | undefined): boolean {
  if (batch.bulkLoad !== true || batch.neo !== undefined || batch.seeds !== undefined) return false;
  if ((batch.balanceChanges?.length ?? 0) > 0) return false;
  if (stored?.bulk_block != null) return true;
  return stored === undefined || (stored.indexed_block === null && stored.transfer_count === 0);
}

/**
 * COPYs a bulk batch's transfers into the staging table, after refusing a token's rows that name
 * one log twice (the transfers' primary key does on the row path; kept in staging, a duplicate
 * would fail every build).
 */
export function appendBulkTransfers(
  client: pg.ClientBase,
  columns: TransferColumns,
  count: number,
): Promise<number> {
  checkOneRowPerLog(columns, count);
  return copyFrom(
    client,
    `COPY ${BULK_TABLE} (token_id, log_index, block_number, time, tx_index, tx_hash, from_addr, to_addr, value) FROM STDIN (FORMAT binary)`,
    encodeCopyRows(count, [
      { type: 'int4', values: columns.tokenId },
      { type: 'int4', values: columns.logIndex },
      { type: 'int8', values: columns.block },
      { type: 'int8', values: columns.time },
      { type: 'int4', values: columns.txIndex },
      { type: 'bytea', values: columns.txHash },
      { type: 'bytea', values: columns.from },
      { type: 'bytea', values: columns.to },
      { type: 'numeric', values: columns.value },
    ]),
  );
}

/** What a bulk batch commits beside its transfers: the supply marks, and the block before the load. */
export async function afterBulkBatch(
  client: pg.ClientBase,
  chain: string,
  before: number,
  dirty: { ids: number[]; blocks: (number | null)[] },
): Promise<void> {
  await client.query({
    name: 'bulkSupplyMarks',
    text: `UPDATE tokens AS t SET supply_dirty = greatest(t.supply_dirty, u.dirty)
      FROM unnest($1::integer[], $2::bigint[]) AS u(id, dirty) WHERE t.id = u.id AND u.dirty IS NOT NULL`,
    values: [dirty.ids, dirty.blocks],
  });
  await client.query({
    name: 'bulkBlock',
    text: 'UPDATE chains SET bulk_block = coalesce(bulk_block, $2) WHERE chain = $1',
    values: [chain, before],
  });
}

/** The tables the build makes anew, in the order it fills them. */
const BUILT = ['transfers', 'address_transfers', 'balances'] as const;
type Built = (typeof BUILT)[number];

/**
 * Each step's share of the build, for the percentage: its seconds on a 2,000,000-row chain-shaped
 * load (docs/benchmarks.md, "Import into PostgreSQL: bulk load"). 'counts' includes the swap.
 */
const STEPS: readonly { step: string; weight: number }[] = [
  { step: 'transfers', weight: 6 },
  { step: 'address entries', weight: 11 },
  { step: 'balances', weight: 18 },
  { step: 'indexes of transfers', weight: 2 },
  { step: 'indexes of address entries', weight: 9 },
  { step: 'indexes of balances', weight: 10 },
  { step: 'counts', weight: 2 },
];

/** The fill of each new table from the staging partition `$staged`; `$1` is the chain. */
function fillSql(table: Built, target: string, staged: string): string {
  switch (table) {
    case 'transfers':
      return `INSERT INTO "${target}" (token_id, log_index, block_number, time, tx_index, tx_hash, from_addr, to_addr, value)
        SELECT token_id, log_index, block_number, time, tx_index, tx_hash, from_addr, to_addr, value
        FROM "${staged}" ORDER BY token_id, block_number, log_index`;
    // One entry per address a transfer names (a self-transfer once), as `insertTransfers` makes them.
    case 'address_transfers':
      return `INSERT INTO "${target}" (address, token_id, block_number, log_index, chain)
        SELECT address, token_id, block_number, log_index, $1 FROM (
          SELECT from_addr AS address, token_id, block_number, log_index FROM "${staged}"
          UNION ALL
          SELECT to_addr, token_id, block_number, log_index FROM "${staged}" WHERE to_addr <> from_addr
        ) AS named
        ORDER BY address, token_id, block_number, log_index`;
    // One row per (token, address) a transfer names: the exact net amount, and how many transfers
    // name it (a self-transfer once, and it moves nothing), as `applyChanges` leaves them.
    case 'balances':
      return `INSERT INTO "${target}" (token_id, holder, amount, transfer_count)
        SELECT token_id, holder, sum(delta), count(*) FROM (
          SELECT token_id, from_addr AS holder, CASE WHEN to_addr = from_addr THEN 0 ELSE -value END AS delta
          FROM "${staged}"
          UNION ALL
          SELECT token_id, to_addr, value FROM "${staged}" WHERE to_addr <> from_addr
        ) AS sides
        GROUP BY token_id, holder ORDER BY token_id, holder`;
  }
}

/** An index of the partition a new table replaces, to be made on the new table under a temporary name. */
interface IndexOf {
  name: string;
  temporary: string;
  /** `ALTER TABLE … ADD CONSTRAINT` (a primary key) or `CREATE INDEX` on the new table. */
  create: string;
}

/** The indexes (and key constraints) of partition `old`, as statements on `target`. */
async function indexesOf(client: pg.ClientBase, old: string, target: string): Promise<IndexOf[]> {
  const result = await client.query<{ name: string; definition: string; constraint_def: string | null }>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition,
       pg_get_constraintdef(k.oid) AS constraint_def
     FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
     LEFT JOIN pg_constraint AS k ON k.conindid = i.indexrelid AND k.conrelid = i.indrelid
     WHERE i.indrelid = $1::regclass ORDER BY k.oid IS NULL, c.relname`,
    [`"${old}"`],
  );
  return result.rows.map((row, k) => {
    const temporary = `${target}_${k}`;
    if (row.constraint_def !== null) {
      return {
        name: row.name,
        temporary,
        create: `ALTER TABLE "${target}" ADD CONSTRAINT "${temporary}" ${row.constraint_def}`,
      };
    }
    const match = /^CREATE (UNIQUE )?INDEX \S+ ON \S+ (USING .*)$/s.exec(row.definition);
    if (match === null)
      throw new TokenqueryError(`bulk load: cannot read the index ${row.name}: ${row.definition}`);
    return {
      name: row.name,
      temporary,
      create: `CREATE ${match[1] ?? ''}INDEX "${temporary}" ON "${target}" ${match[2]}`,
    };
  });
}

/**
 * Builds `chain`'s waiting bulk load in `client`'s transaction (under the chain's write lock);
 * `stored` is the chain's row as locked. Leaves the chain as a row-by-row load would have.
 */
export async function buildBulkLoad(
  client: pg.ClientBase,
  chain: string,
  stored: LockedChain,
  logger: Logger,
): Promise<void> {
  const rows = stored.transfer_count;
  const partition = await client.query<{ ordinal: number }>(
    'SELECT ordinal FROM chain_partitions WHERE chain = $1',
    [chain],
  );
  const ordinal = partition.rows[0]?.ordinal;
  const done = () => client.query('UPDATE chains SET bulk_block = NULL WHERE chain = $1', [chain]);
  if (ordinal === undefined) {
    // No token yet, so no transfer either.
    await done();
    return;
  }
  const staged = partitionName(BULK_TABLE, chain, ordinal);
  const from = ordinal * 2 ** TOKEN_ID_BITS;
  const to = (ordinal + 1) * 2 ** TOKEN_ID_BITS;
  await client.query(`SET LOCAL work_mem = '${BUILD_WORK_MEM}'`);
  await client.query(`SET LOCAL maintenance_work_mem = '${BUILD_MAINTENANCE_WORK_MEM}'`);

  const progress = startProgress(logger, chain, rows);
  const tables = [];
  for (const table of BUILT) {
    const old = partitionName(table, chain, ordinal);
    const nonEmpty = await client.query(`SELECT 1 FROM "${old}" LIMIT 1`);
    if (nonEmpty.rowCount !== 0) {
      // The load started on a chain without transfers, and every write of the chain builds first.
      throw new TokenqueryError(`bulk load of ${chain}: ${old} is not empty; run tokenquery verify`);
    }
    const target = `${old}__bulk`;
    // The CHECK is the partition's bound: ATTACH then knows every row fits without a scan.
    await client.query(
      `CREATE TABLE "${target}" (LIKE "${table}" INCLUDING DEFAULTS INCLUDING STORAGE,
         CONSTRAINT "${target}_bound" CHECK (token_id >= ${from} AND token_id < ${to}))${PARTITION_STORAGE[table] ?? ''}`,
    );
    tables.push({ table, old, target, indexes: await indexesOf(client, old, target) });
  }
  try {
    for (const [i, { table, target }] of tables.entries()) {
      progress.step(STEPS[i]!.step);
      await client.query(fillSql(table, target, staged), table === 'address_transfers' ? [chain] : []);
    }
    for (const [i, { indexes }] of tables.entries()) {
      progress.step(STEPS[BUILT.length + i]!.step);
      for (const index of indexes) await client.query(index.create);
    }
    progress.step('counts');
    // The chain had no transfers before the load: its tokens' counts and sums are those of the tables.
    const [transfers, , balances] = tables.map((t) => t.target);
    await client.query(
      `UPDATE tokens AS t SET
         transfer_count = coalesce(c.transfers, 0),
         holder_count = coalesce(h.holders, 0),
         balance_sum = coalesce(h.summed, 0)
       FROM tokens AS k
       LEFT JOIN (SELECT token_id, count(*) AS transfers FROM "${transfers}" GROUP BY token_id) AS c
         ON c.token_id = k.id
       LEFT JOIN (
         SELECT token_id, count(*) FILTER (WHERE ${HOLDER_PREDICATE}) AS holders,
           sum(amount) FILTER (WHERE holder <> $2::bytea) AS summed
         FROM "${balances}" GROUP BY token_id
       ) AS h ON h.token_id = k.id
       WHERE t.id = k.id AND k.chain = $1`,
      [chain, encodeHex(ZERO_ADDRESS)],
    );
    // The swap: the only statements that lock the parents, so it comes last.
    for (const { table, old, target, indexes } of tables) {
      await client.query(`DROP TABLE "${old}"`);
      await client.query(`ALTER TABLE "${target}" RENAME TO "${old}"`);
      // Renaming a key's index renames its constraint.
      for (const index of indexes)
        await client.query(`ALTER INDEX "${index.temporary}" RENAME TO "${index.name}"`);
      await client.query(
        `ALTER TABLE "${table}" ATTACH PARTITION "${old}" FOR VALUES FROM (${from}) TO (${to})`,
      );
      await client.query(`ALTER TABLE "${old}" DROP CONSTRAINT "${target}_bound"`);
      await client.query(`ANALYZE "${old}"`);
    }
    await client.query(`TRUNCATE "${staged}"`);
    await done();
    progress.finish();
  } finally {
    progress.stop();
  }
}

/** The build's progress: a line per step, and every few seconds within one, with a weighted percentage. */
function startProgress(logger: Logger, chain: string, rows: number) {
  const total = STEPS.reduce((sum, s) => sum + s.weight, 0);
  const started = performance.now();
  const seconds: Record<string, number> = {};
  let current = '';
  let stepStarted = started;
  let before = 0;
  const log = () => {
    const weight = STEPS.find((s) => s.step === current)?.weight ?? 0;
    const inStep = (performance.now() - stepStarted) / 1000;
    const percent = Math.floor((before / total) * 1000) / 10;
    const elapsed = (performance.now() - started) / 1000;
    const etaSeconds =
      before > 0 ? Math.round(((elapsed - inStep) / before) * (total - before) - inStep) : null;
    logger.info(
      { chain, step: current, percent, stepSeconds: Math.round(inStep), etaSeconds, stepWeight: weight },
      `building the bulk load of ${rows} transfers: ${current}, ${percent}% (${Math.round(inStep)} s in this step)${etaSeconds === null || etaSeconds < 0 ? '' : `, about ${etaSeconds} s left`}`,
    );
  };
  const timer = setInterval(log, PROGRESS_EVERY_MS);
  timer.unref();
  const endStep = () => {
    if (current === '') return;
    seconds[current] = Number(((performance.now() - stepStarted) / 1000).toFixed(2));
    before += STEPS.find((s) => s.step === current)?.weight ?? 0;
    logger.debug(
      { chain, step: current, seconds: seconds[current] },
      `bulk load build step done: ${current}`,
    );
  };
  logger.info(
    { chain, transfers: rows },
    `building the bulk load of ${rows} transfers: sorted into new partitions, then indexed`,
  );
  return {
    step(name: string) {
      endStep();
      current = name;
      stepStarted = performance.now();
    },
    finish() {
      endStep();
      logger.info(
        {
          chain,
          transfers: rows,
          seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
          steps: seconds,
        },
        `built the bulk load of ${rows} transfers`,
      );
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * Refuses rows of one token that name one log twice. A batch's rows come grouped by token, in
 * chain order (an import's): one comparison a row; others are checked by a set.
 */
function checkOneRowPerLog(c: TransferColumns, count: number): void {
  let ordered = true;
  for (let i = 1; i < count && ordered; i++) {
    if (c.tokenId[i] !== c.tokenId[i - 1]) continue;
    const block = c.block[i]!;
    const previous = c.block[i - 1]!;
    ordered = previous < block || (previous === block && c.logIndex[i - 1]! < c.logIndex[i]!);
  }
  if (ordered) {
    // Grouped by token only if no token comes back after another.
    const seen = new Set<number>();
    for (let i = 0; i < count && ordered; i++) {
      if (i > 0 && c.tokenId[i] === c.tokenId[i - 1]) continue;
      if (seen.has(c.tokenId[i]!)) ordered = false;
      seen.add(c.tokenId[i]!);
    }
    if (ordered) return;
  }
  const keys = new Set<string>();
  for (let i = 0; i < count; i++) {
    const key = `${c.tokenId[i]}:${c.block[i]}:${c.logIndex[i]}`;
    if (keys.has(key)) {
      throw new TokenqueryError(
        `a batch names the log ${c.logIndex[i]} of block ${c.block[i]} twice for one token`,
      );
    }
    keys.add(key);
  }
}
