/**
 * A bulk load's build (bulk-load.ts) in steps, each step's key-range chunks a transaction of their
 * own, so that the WAL holds one chunk's pages at a time instead of everything the build writes
 * (as one transaction it grew to the size of the tables built: 872 MB at 2M transfers, tens of
 * GB at 100M, on top of the store). After each chunk a `wal_checkpoint(TRUNCATE)` gives the
 * WAL's disk back.
 *
 * The steps, in order: `transfers` by token-id ranges, read from the unindexed `bulk_transfers`;
 * `addresses` by address ranges, each chunk adding its addresses in byte order and then their
 * `address_transfers` entries; `balances` by token-id ranges, summed from the `transfers` just
 * built (a range of its key, not a scan of the load); `holder index`, made again if the balances
 * step dropped `balances_by_holder` (a holder's rows are scattered over every token range, so
 * keeping it would write all its pages in every chunk); `finish`, the tokens' counts and running
 * sums, the load's rows dropped and the chain's marks cleared. The other secondary indexes are
 * kept: a chunk's entries fall in one contiguous range of them. `bulk_build` (migration 0013)
 * holds the step under way and the first key of it not yet built, in the chunk's transaction;
 * killed anywhere, the next build goes on from there, and a chunk is built exactly once.
 *
 * Reads: the chain keeps `bulk_block` and `balances_block` until `finish` commits, and the reads
 * of its transfers, balances and address entries (statements.ts, `CHAIN_READABLE`) answer nothing
 * while `bulk_block` is set, as the tables held nothing of the chain before the load (a load only
 * starts on a chain without transfers). Its tokens' counts and sums change in `finish` only.
 *
 * Run inside a transaction (a rollback, or a batch whose build was not run before it), every
 * chunk is a savepoint of that one transaction, as the build was before.
 */
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { amountOf } from './bulk-amounts.js';
import type { BuildProgress } from './bulk-progress.js';
import { encodeAmount, encodeHex, type SqlValue } from './codec.js';
import { RANK_OF_AMOUNT } from './migrations.js';

/** Tuning, and a hook after each chunk's commit (tests stop a build there). */
export const bulkBuildSettings: {
  /** Rows of the load a chunk covers at least (so a small load is one or a few chunks). */
  minChunkRows: number;
  /**
   * At most about this many chunks a step: each transfers chunk reads the whole load once, each
   * address chunk twice (0.15 µs a row, about 15 s at 100M); at 100M a chunk of 12.5M rows leaves
   * a WAL of 1-2 GB, less than the holder index step's.
   */
  maxChunks: number;
  afterChunk: ((step: string, chunk: number) => void) | null;
} = { minChunkRows: 1 << 20, maxChunks: 8, afterChunk: null };

const STEPS = ['transfers', 'addresses', 'balances', 'holder index', 'finish'] as const;
type Step = (typeof STEPS)[number];

/** About this many rows of the load are sampled to cut it into key ranges. */
const SAMPLE_ROWS = 1 << 15;

/** Page cache during the build (KiB); SQLite's sorter keeps as much again before it spills. */
const BUILD_CACHE_KIB = 128 * 1024;

interface Marker {
  step: number;
  next_key: SqlValue;
  fresh_addresses: number | null;
  dropped_index: string | null;
}

/** Keys a chunk covers: from `lo` (null: the least) to before `hi` (null: no end). */
type Range = { lo: number | Buffer | null; hi: number | Buffer | null };

export interface BulkBuild {
  /** Builds the chain's waiting bulk load to the end, if it has one; true when it had. */
  run(chain: string): boolean;
}

/** The stepped build over the writer's connection; `cleared` is told when the load is built. */
export function createBulkBuild(
  db: Database.Database,
  progress: BuildProgress,
  cleared: () => void,
): BulkBuild {
  const bulkBlock = db
    .prepare<[string], number | null>('SELECT bulk_block FROM chains WHERE chain = ?')
    .pluck();
  const readMarker = db.prepare<[string], Marker>(
    'SELECT step, next_key, fresh_addresses, dropped_index FROM bulk_build WHERE chain = ?',
  );
  const startMarker = db.prepare('INSERT OR IGNORE INTO bulk_build (chain, step) VALUES (?, 0)');
  const writeMarker = db.prepare(`
    UPDATE bulk_build SET step = @step, next_key = @key,
      fresh_addresses = coalesce(@fresh, fresh_addresses), dropped_index = coalesce(@dropped, dropped_index)
    WHERE chain = @chain`);
  const waiting = db.prepare<[], number>('SELECT count(*) FROM bulk_transfers').pluck();
  const walBytes = () => (db.memory ? 0 : (statSync(`${db.name}-wal`, { throwIfNoEntry: false })?.size ?? 0));

  const tokenRange = (column: string) => `${column} >= @lo AND ${column} < @hi`;
  const addressRange = (column: string) =>
    `(@lo IS NULL OR ${column} >= @lo) AND (@hi IS NULL OR ${column} < @hi)`;

  const insertTransfers = db.prepare(`
    INSERT INTO transfers (token_id, block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time)
    SELECT token_id, block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time
    FROM bulk_transfers WHERE ${tokenRange('token_id')} ORDER BY token_id, block_number, log_index`);

  // Each side of a transfer in the chunk's address range: the address it names, once for a
  // self-transfer. One pass over the load makes both sides (each row joined to a two-row table),
  // as each chunk reads the whole load: two passes (addresses, entries) a chunk instead of four.
  const sides = `
    SELECT CASE s.side WHEN 0 THEN b.from_addr ELSE b.to_addr END AS address, b.token_id, b.block_number, b.log_index
    FROM bulk_transfers AS b CROSS JOIN (SELECT 0 AS side UNION ALL SELECT 1 AS side) AS s
    WHERE (CASE s.side WHEN 0 THEN ${addressRange('b.from_addr')} ELSE ${addressRange('b.to_addr')} AND b.to_addr IS NOT b.from_addr END)`;
  // Addresses in byte order: their ids then follow it (a table without AUTOINCREMENT takes the
  // next id after the largest), and `addresses` is appended to.
  const insertAddresses = db.prepare(`
    INSERT OR IGNORE INTO addresses (chain, address)
    SELECT @chain, address FROM (${sides}) GROUP BY address ORDER BY address`);
  const chainHasAddresses = db
    .prepare<[string], number>('SELECT count(*) FROM (SELECT 1 FROM addresses WHERE chain = ? LIMIT 1)')
    .pluck();
  const largestAddressId = db.prepare<[], number | null>('SELECT max(id) FROM addresses').pluck();
  // The general case: each side's address id looked up in the address index.
  const insertEntriesByLookup = db.prepare(`
    INSERT INTO address_transfers (address_id, token_id, block_number, log_index)
    SELECT a.id, s.token_id, s.block_number, s.log_index
    FROM (${sides}) AS s
    JOIN addresses AS a ON a.chain = @chain AND a.address = s.address
    ORDER BY 1, 2, 3, 4`);
  // A chunk whose addresses were all added just before, in byte order from the id after @base:
  // an address's id is that plus its rank among the chunk's distinct addresses, so one sort of
  // the sides by address gives the entries in id order without a lookup each.
  const insertEntriesByRank = db.prepare(`
    INSERT INTO address_transfers (address_id, token_id, block_number, log_index)
    SELECT @base + dense_rank() OVER (ORDER BY address), token_id, block_number, log_index
    FROM (${sides})`);

  // One row per (token, address) a transfer names: the net amount and how many transfers name it
  // (a self-transfer once, and it changes nothing), in key order, from the token range's rows of
  // `transfers` (built by then; only the chain's tokens: ids of other chains' may interleave). A
  // group of one transfer takes its amount without a JavaScript call unless it is a negative one
  // past 2^53 (decimal text); a larger group's values go to one call as text (bulk-amounts.ts).
  const insertBalances = db.prepare(`
    INSERT INTO balances (token_id, holder, amount, transfer_count, rank)
    SELECT token_id, holder, amount, named, ${RANK_OF_AMOUNT} FROM (
      SELECT token_id, holder, count(*) AS named,
        CASE WHEN count(*) = 1 THEN
          CASE min(sign) WHEN 1 THEN min(value) WHEN 0 THEN 0
            ELSE CASE typeof(min(value)) WHEN 'integer' THEN -min(value) ELSE tq_negated(min(value)) END END
        ELSE tq_net_amount(group_concat(CASE sign WHEN 0 THEN '0' ELSE
          CASE sign WHEN 1 THEN '+' ELSE '-' END ||
          CASE typeof(value) WHEN 'integer' THEN value WHEN 'blob' THEN 'x' || hex(value) ELSE 't' || value END END,
          ','))
        END AS amount
      FROM (
        SELECT token_id, from_addr AS holder, value, CASE WHEN to_addr IS from_addr THEN 0 ELSE -1 END AS sign
        FROM transfers WHERE ${tokenRange('token_id')} AND token_id IN (SELECT id FROM tokens WHERE chain = @chain)
        UNION ALL
        SELECT token_id, to_addr, value, 1 FROM transfers
        WHERE ${tokenRange('token_id')} AND token_id IN (SELECT id FROM tokens WHERE chain = @chain)
          AND to_addr IS NOT from_addr)
      GROUP BY token_id, holder)`);
  const balancesHoldAtLeast = db
    .prepare<[number], number>('SELECT count(*) FROM (SELECT 1 FROM balances LIMIT ?)')
    .pluck();
  const indexSql = db
    .prepare<[string], string>("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?")
    .pluck();

  // The chain had no transfers before the load: its tokens' counts are those of the tables.
  const tokenCounts = db.prepare(`
    UPDATE tokens SET
      holder_count = (SELECT count(*) FROM balances AS b WHERE b.token_id = tokens.id AND b.rank IS NOT NULL),
      transfer_count = (SELECT count(*) FROM transfers AS t WHERE t.token_id = tokens.id)
    WHERE chain = ?`);
  // The chain's tokens had no balances before the load, so each one's running sum (without the
  // zero address's balance) is what its transfers from the zero address minted less what its
  // transfers to it burned: a transfer between two other addresses moves nothing in or out.
  const mintsAndBurns = db
    .prepare<[{ zero: Buffer }], [number, SqlValue, number]>(`
      SELECT token_id, value, CASE WHEN from_addr = @zero THEN 1 ELSE -1 END FROM bulk_transfers
      WHERE (from_addr = @zero) <> (to_addr = @zero)`)
    .raw();
  const zeroSums = db.prepare<[string]>('UPDATE tokens SET balance_sum = 0 WHERE chain = ?');
  const writeSum = db.prepare<[SqlValue, number]>('UPDATE tokens SET balance_sum = ? WHERE id = ?');
  const zeroAddress = encodeHex(ZERO_ADDRESS) as Buffer;
  const clear = db.prepare('DELETE FROM bulk_transfers');
  const done = db.prepare('UPDATE chains SET bulk_block = NULL, balances_block = NULL WHERE chain = ?');
  const endMarker = db.prepare('DELETE FROM bulk_build WHERE chain = ?');

  function sumsOfLoad(chain: string): void {
    const sums = new Map<number, bigint>();
    for (const [id, value, sign] of mintsAndBurns.iterate({ zero: zeroAddress })) {
      const amount = amountOf(value);
      sums.set(id, (sums.get(id) ?? 0n) + (sign > 0 ? amount : -amount));
    }
    zeroSums.run(chain);
    for (const [id, sum] of sums) if (sum !== 0n) writeSum.run(encodeAmount(sum), id);
  }

  // ---- key ranges ----
  // Cut once per build and process from a sample of the load (which the build does not change);
  // a build resumed by another process cuts its own, which only has to start at the marker.
  let cuts: { chain: string; rows: number; tokens: number[]; addresses: Buffer[] } | null = null;
  function cutsOf(chain: string, rows: number) {
    if (cuts?.chain === chain && cuts.rows === rows) return cuts;
    const stride = 2 ** Math.max(0, Math.floor(Math.log2(rows / SAMPLE_ROWS)));
    const chunkRows = Math.max(bulkBuildSettings.minChunkRows, Math.ceil(rows / bulkBuildSettings.maxChunks));
    const sample = db
      .prepare<[number], [number, SqlValue, SqlValue]>(
        'SELECT token_id, from_addr, to_addr FROM bulk_transfers WHERE (rowid % ?) = 0',
      )
      .raw()
      .all(stride);
    const tokens = sample.map((row) => row[0]).sort((a, b) => a - b);
    // Text addresses (an export's odd ones) sort before every BLOB: they fall in the first range.
    const addresses = sample
      .flatMap((row) => [row[1], row[2]])
      .filter((a): a is Buffer => Buffer.isBuffer(a))
      .sort(Buffer.compare);
    cuts = {
      chain,
      rows,
      tokens: boundaries(tokens, chunkRows / stride, (a, b) => a === b),
      // Two sides a row: a range of addresses names about twice as many sides.
      addresses: boundaries(addresses, (2 * chunkRows) / stride, (a, b) => a.equals(b)),
    };
    return cuts;
  }
  function rangeFrom<K extends number | Buffer>(
    cutsOfStep: K[],
    lo: SqlValue,
    above: (a: K, b: K) => boolean,
  ): Range {
    const from = lo as K | null;
    const hi = from === null ? cutsOfStep[0] : cutsOfStep.find((cut) => above(cut, from));
    return { lo: from, hi: hi ?? null };
  }

  // ---- one chunk ----
  let chunks = 0;
  /** Builds the next chunk of the chain's build; false when there is none (the build is done). */
  const chunkTx = db.transaction((chain: string, rows: number): boolean => {
    if (bulkBlock.get(chain) == null) return false;
    startMarker.run(chain);
    const marker = readMarker.get(chain)!;
    const step: Step = STEPS[marker.step]!;
    const c = cutsOf(chain, rows);
    const next = (range: Range, extra: { fresh?: number; dropped?: string } = {}) => {
      const last = range.hi === null;
      writeMarker.run({
        chain,
        step: last ? marker.step + 1 : marker.step,
        key: last ? null : range.hi,
        fresh: extra.fresh ?? null,
        dropped: extra.dropped ?? null,
      });
    };
    progress.step(step);
    switch (step) {
      case 'transfers': {
        const range = rangeFrom(c.tokens, marker.next_key, (a, b) => a > b);
        insertTransfers.run({ lo: range.lo ?? -1, hi: range.hi ?? Number.MAX_SAFE_INTEGER });
        next(range);
        break;
      }
      case 'addresses': {
        const range = rangeFrom(c.addresses, marker.next_key, (a, b) => Buffer.compare(a, b) > 0);
        const fresh = marker.fresh_addresses ?? (chainHasAddresses.get(chain) === 0 ? 1 : 0);
        const base = largestAddressId.get() ?? 0;
        const added = insertAddresses.run({ chain, lo: range.lo, hi: range.hi }).changes;
        // Ranks hold only if the chunk's addresses were all new and their ids run on from `base`.
        if (fresh === 1 && largestAddressId.get() === base + added) {
          insertEntriesByRank.run({ base, lo: range.lo, hi: range.hi });
        } else insertEntriesByLookup.run({ chain, lo: range.lo, hi: range.hi });
        next(range, { fresh });
        break;
      }
      case 'balances': {
        const range = rangeFrom(c.tokens, marker.next_key, (a, b) => a > b);
        let dropped: string | undefined;
        // A load larger than the table: the holder index is made once after the step instead.
        if (range.lo === null && balancesHoldAtLeast.get(rows)! < rows) {
          dropped = indexSql.get('balances_by_holder');
          if (dropped !== undefined) db.exec('DROP INDEX balances_by_holder');
        }
        insertBalances.run({ chain, lo: range.lo ?? -1, hi: range.hi ?? Number.MAX_SAFE_INTEGER });
        next(range, dropped === undefined ? {} : { dropped });
        break;
      }
      case 'holder index': {
        if (marker.dropped_index !== null && indexSql.get('balances_by_holder') === undefined) {
          db.exec(marker.dropped_index);
        }
        next({ lo: null, hi: null });
        break;
      }
      case 'finish': {
        tokenCounts.run(chain);
        // No batch of the load added to the running sums (they were not written row by row).
        sumsOfLoad(chain);
        clear.run();
        done.run(chain);
        endMarker.run(chain);
        cleared();
        break;
      }
    }
    chunks++;
    return true;
  });

  return {
    run(chain) {
      if (bulkBlock.get(chain) == null) return false;
      const rows = waiting.get()!;
      const cacheSize = db.pragma('cache_size', { simple: true }) as number;
      // Sorts of a large load spill to temporary files instead of memory (the store keeps
      // temp_store = MEMORY for its small temporary B-trees).
      const tempStore = db.pragma('temp_store', { simple: true }) as number;
      db.pragma(`cache_size = -${BUILD_CACHE_KIB}`);
      db.pragma('temp_store = FILE');
      const own = !db.inTransaction;
      let walPeak = 0;
      const c = cutsOf(chain, rows);
      progress.start(chain, rows, 2 * (c.tokens.length + 1) + c.addresses.length + 3);
      try {
        for (;;) {
          const step = STEPS[readMarker.get(chain)?.step ?? 0] ?? 'finish';
          if (!(own ? chunkTx.immediate(chain, rows) : chunkTx(chain, rows))) break;
          // The chunk is committed: its pages go back to the file and the WAL to (nearly) nothing.
          const wal = own ? walBytes() : 0;
          walPeak = Math.max(walPeak, wal);
          if (own) db.pragma('wal_checkpoint(TRUNCATE)');
          progress.chunkDone(wal);
          bulkBuildSettings.afterChunk?.(step, chunks);
        }
        progress.finish(walPeak);
      } finally {
        cuts = null;
        db.pragma(`cache_size = ${cacheSize}`);
        db.pragma(`temp_store = ${tempStore}`);
      }
      return true;
    },
  };
}

/**
 * Every `per`-th value of the sorted `sample` as a range's first key, without repeats: ranges of
 * about `per` sampled rows (a key with more rows than that is one range).
 */
function boundaries<K>(sample: K[], per: number, same: (a: K, b: K) => boolean): K[] {
  const out: K[] = [];
  const step = Math.max(1, Math.floor(per));
  for (let i = step; i < sample.length; i += step) {
    const key = sample[i]!;
    // (A cut at the least key would make an empty first range.)
    if (!same(out.length === 0 ? sample[0]! : out[out.length - 1]!, key)) out.push(key);
  }
  return out;
}
