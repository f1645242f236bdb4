/**
 * A bulk load (`IndexBatch.bulkLoad`, issue #17): the import of a chain the store holds no
 * transfers of, at the pace the file can take rather than row by row.
 *
 * Row by row, each batch inserts its transfers at as many places of the `transfers` B-tree as it
 * names tokens (the key is token first), reads and rewrites each holder's balance, and inserts two
 * address entries at scattered places: on a chain-shaped export nearly every page a batch touches
 * is a different one, and the cost grows with the store. Here a batch only appends its rows, as
 * they come, to `bulk_transfers` (a rowid table without an index: a few pages at the end of the
 * file), with its checkpoint, token rows, counts and block refs as any batch. The first batch
 * without the flag (or a rollback) then builds the rest in its own transaction, each table by
 * one `INSERT … SELECT … ORDER BY` in its key order, which SQLite's sorter makes with bounded
 * memory (spilling to temporary files), and the secondary indexes by `CREATE INDEX` afterwards.
 * Balances are summed exactly by an aggregate function (BigInt past 2^53). On a chain without
 * addresses before the load, an address entry's id is its address's rank (the addresses are added
 * in byte order), not a lookup; the tokens' running sums are their mints less their burns.
 *
 * Interrupted: the appended batches are committed with their checkpoints, so the next run goes on
 * from the checkpoint; the build is one transaction, so a crash in it leaves the appended rows to
 * build again. Meanwhile the chain's `balances_block` (status `balancesBlock`) is the block before
 * the load: its transfers, balances and address views are not readable until the build.
 */
import type Database from 'better-sqlite3';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { TokenqueryError } from '../../internal/errors.js';
import { encodeRecentTransfers } from '../chain-activity.js';
import type { IndexBatch } from '../types.js';
import type { BatchContext, BatchSteps } from './apply-batch.js';
import type { BatchBalances } from './balances.js';
import { planWire, type WireBatch } from './batch-wire.js';
import { indexedWrite } from './bulk-indexes.js';
import { createBuildProgress, TICK_EVERY } from './bulk-progress.js';
import {
  allHashesLowerHex,
  amountHexDigits,
  type ChainRow,
  decodeAmount,
  encodeAmount,
  encodeHex,
  isLowerHex,
  lowerHexDigits,
  pushAmountParams,
  pushHexParams,
  type SqlValue,
  UNHEX_OR_VALUE,
} from './codec.js';
import { RANK_OF_AMOUNT } from './migrations.js';
import { BUFFERED_ROWS, bufferedRows, multiRow, ROWS_PER_STATEMENT, rowsOf } from './multi-row.js';

/**
 * Page cache during the build (KiB), restored after it; SQLite's sorter keeps as much again in
 * memory before it spills a sorted run to a temporary file.
 */
const BUILD_CACHE_KIB = 128 * 1024;

/** A tick of the build's progress every TICK_EVERY rows of the load (by rowid: no JS call for the others). */
const TICK = `((rowid & ${TICK_EVERY - 1}) <> 0 OR tq_tick())`;

export interface BulkLoad {
  /** Whether the store takes `batch` as a bulk load's batch (`stored`: its chain row, read under the write lock). */
  accepts(batch: Omit<IndexBatch, 'transfers'>, stored: ChainRow | undefined): boolean;
  /** Appends an accepted batch (inside its transaction, after `beginBatch`). */
  append(wire: WireBatch, stored: ChainRow | undefined): BatchBalances;
  /** Builds the chain's waiting bulk load, if any (inside a write transaction); true when there was one. */
  build(chain: string, stored: ChainRow | undefined): boolean;
}

/** The bulk load over the writer's connection; `steps` give token ids and the block journal. */
export function createBulkLoad(
  context: Pick<BatchContext, 'db' | 'sql' | 'logger'>,
  steps: Pick<BatchSteps, 'tokenIds' | 'blockJournal'>,
): BulkLoad {
  const { db, sql, logger } = context;
  registerNetAmount(db);
  const progress = createBuildProgress(db, logger);
  const hexInsert = (value: string) =>
    bufferedRows(
      db,
      (rows) =>
        `INSERT INTO bulk_transfers VALUES ${rowsOf(`(?, ?, ?, ?, unhex(?), unhex(?), unhex(?), ${value}, ?)`, rows)}`,
      9,
      BUFFERED_ROWS,
    );
  const integerValue = hexInsert('?');
  const blobValue = hexInsert('unhex(?)');
  const generalInsert = multiRow(
    db,
    (rows) =>
      `INSERT INTO bulk_transfers VALUES ${rowsOf(`(?, ?, ?, ?, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE}, ${UNHEX_OR_VALUE}, ?)`, rows)}`,
    13,
    ROWS_PER_STATEMENT,
  );
  const otherLoads = db
    .prepare<[string], number>('SELECT count(*) FROM chains WHERE bulk_block IS NOT NULL AND chain <> ?')
    .pluck();
  const setBulkBlock = db.prepare('UPDATE chains SET bulk_block = coalesce(bulk_block, ?) WHERE chain = ?');
  const waiting = db.prepare<[], number>('SELECT count(*) FROM bulk_transfers').pluck();

  /**
   * Token ids of the load's chain, so that a batch looks up only tokens it is the first to name.
   * Trusted while the stored checkpoint is the last appended batch's (a failed transaction, or
   * any other write, forgets them).
   */
  const knownIds = new Map<string, number>();
  let appendedTo: number | null = null;
  function tokenIdsOf(
    wire: WireBatch,
    work: ReturnType<typeof planWire>['work'],
    stored: ChainRow | undefined,
  ): { ids: number[]; newTokens: number } {
    if (stored?.indexed_block == null || stored.indexed_block !== appendedTo) knownIds.clear();
    appendedTo = wire.toBlock;
    const missing = new Map([...work].filter(([address]) => !knownIds.has(address)));
    const looked = missing.size === 0 ? { ids: [], newTokens: 0 } : steps.tokenIds(wire, missing);
    let i = 0;
    for (const address of missing.keys()) knownIds.set(address, looked.ids[i++]!);
    return { ids: [...work.keys()].map((address) => knownIds.get(address)!), newTokens: looked.newTokens };
  }

  function append(wire: WireBatch, stored: ChainRow | undefined): BatchBalances {
    const plan = planWire(wire, true);
    const { work, hashStarts } = plan;
    const { addresses, fromOf, toOf, numbers, hashes, hashLengths, hashOf, values } = wire.transferColumns;
    const { ids, newTokens } = tokenIdsOf(wire, work, stored);
    const journal = steps.blockJournal(wire);
    // Digits bound as text and made into bytes by `unhex()`: a load's addresses rarely repeat in
    // a batch, and a Buffer for each cost the writer more than SQLite's conversion.
    const digits = addresses.map(lowerHexDigits);
    const lowerHex = allHashesLowerHex(hashes, hashLengths.length);
    const general: unknown[] = [];
    let k = 0;
    for (const token of work.values()) {
      const id = ids[k++]!;
      checkOneRowPerLog(token.rows, numbers);
      for (const i of token.rows) {
        const block = numbers[i * 4]!;
        const value = values[i]!;
        const from = digits[fromOf[i]!];
        const to = digits[toOf[i]!];
        const hash = hashes.slice(hashStarts[hashOf[i]!]!, hashStarts[hashOf[i]! + 1]!);
        if (from != null && to != null && value >= 0n && (lowerHex || isLowerHex(hash))) {
          const small = value <= 9007199254740991n;
          const rows = small ? integerValue : blobValue;
          const at = rows.next();
          const p = rows.params;
          p[at] = id;
          p[at + 1] = block;
          p[at + 2] = numbers[i * 4 + 1]!;
          p[at + 3] = numbers[i * 4 + 2]!;
          p[at + 4] = hash.slice(2);
          p[at + 5] = from;
          p[at + 6] = to;
          p[at + 7] = small ? value : amountHexDigits(value);
          p[at + 8] = numbers[i * 4 + 3]!;
        } else {
          general.push(id, block, numbers[i * 4 + 1]!, numbers[i * 4 + 2]!);
          pushHexParams(general, hash);
          pushHexParams(general, addresses[fromOf[i]!]!);
          pushHexParams(general, addresses[toOf[i]!]!);
          pushAmountParams(general, value);
          general.push(numbers[i * 4 + 3]!);
        }
        journal.add(block, id);
      }
    }
    integerValue.flush();
    blobValue.flush();
    generalInsert.run(general);
    journal.write();

    const { chain } = wire;
    // Holder and transfer counts are the build's; supply marks cannot wait.
    [...work.values()].forEach((token, i) => {
      if (token.dirtyBlock !== null) {
        sql.tokenAfterBatch.run({ holders: 0, transfers: 0, dirty: token.dirtyBlock, id: ids[i] });
      }
    });
    for (const ref of wire.blocks) {
      sql.upsertBlockRef.run(chain, ref.number, encodeHex(ref.hash), encodeHex(ref.parentHash));
    }
    sql.pruneBlockRefs.run(chain, wire.pruneBlocksBelow);
    sql.pruneJournal.run(chain, wire.pruneBlocksBelow);
    const transfers = wire.transferColumns.count;
    // The tables hold the chain as it was before the load's first batch.
    const before = stored?.bulk_block ?? stored?.indexed_block ?? wire.fromBlock - 1;
    sql.afterBatch.run({
      chain,
      block: wire.toBlock,
      hash: wire.toBlockHash === null ? null : encodeHex(wire.toBlockHash),
      head: wire.head,
      now: Date.now(),
      newTokens,
      floor: wire.pruneBlocksBelow,
      transfers,
      recent: encodeRecentTransfers(plan.recent, stored?.recent_transfers ?? null),
      seedBlock: null,
      partial: 0,
      balancesFrom: before,
    });
    setBulkBlock.run(before, chain);
    return { chain, writes: [], deferred: false, flushed: false, transfers };
  }

  // ---- the build ----
  const rowsWaiting = () => waiting.get()!;
  const insertTransfers = db.prepare(`
    INSERT INTO transfers (token_id, block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time)
    SELECT token_id, block_number, log_index, tx_index, tx_hash, from_addr, to_addr, value, time
    FROM bulk_transfers WHERE ${TICK} ORDER BY token_id, block_number, log_index`);
  // Addresses in byte order: their ids then follow it (a table without AUTOINCREMENT takes the
  // next id after the largest), and `addresses` is appended to.
  const insertAddresses = db.prepare(`
    INSERT OR IGNORE INTO addresses (chain, address)
    SELECT ?, address FROM (SELECT from_addr AS address FROM bulk_transfers WHERE ${TICK}
                            UNION ALL SELECT to_addr FROM bulk_transfers WHERE ${TICK})
    GROUP BY address ORDER BY address`);
  const chainHasAddresses = db
    .prepare<[string], number>('SELECT count(*) FROM (SELECT 1 FROM addresses WHERE chain = ? LIMIT 1)')
    .pluck();
  const largestAddressId = db.prepare<[], number | null>('SELECT max(id) FROM addresses').pluck();
  // Each side of a transfer: the address it names, once for a self-transfer.
  const sides = (tick: string) => `
    SELECT from_addr AS address, token_id, block_number, log_index FROM bulk_transfers WHERE ${tick}
    UNION ALL
    SELECT to_addr, token_id, block_number, log_index FROM bulk_transfers
    WHERE ${tick} AND to_addr IS NOT from_addr`;
  // The general case: each side's address id looked up in the address index.
  const insertEntriesByLookup = db.prepare(`
    INSERT INTO address_transfers (address_id, token_id, block_number, log_index)
    SELECT a.id, s.token_id, s.block_number, s.log_index
    FROM (${sides(TICK)}) AS s
    JOIN addresses AS a ON a.chain = ? AND a.address = s.address
    ORDER BY 1, 2, 3, 4`);
  // A chain whose addresses were all added by the step before, in byte order from the id after
  // `?`: an address's id is that plus its rank among the sides' distinct addresses, so one sort
  // of the sides by address gives the entries in id order, without a lookup each. (The rows of
  // one address come in any order, but all at the end of the table; sorting them by the whole
  // key as well kept a second sorter's memory alive beside the window's.)
  const insertEntriesByRank = db.prepare(`
    INSERT INTO address_transfers (address_id, token_id, block_number, log_index)
    SELECT ? + dense_rank() OVER (ORDER BY address), token_id, block_number, log_index
    FROM (${sides(TICK)})`);
  // One row per (token, address) a transfer names: the net amount and how many transfers name it
  // (a self-transfer once, and it changes nothing), in key order. A group of one transfer (most
  // of a chain-shaped load's) takes its amount without a JavaScript call unless it is a negative
  // one past 2^53 (decimal text); a larger group's values go to one call as text (see
  // `registerNetAmount`).
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
        FROM bulk_transfers WHERE ${TICK}
        UNION ALL
        SELECT token_id, to_addr, value, 1 FROM bulk_transfers WHERE ${TICK} AND to_addr IS NOT from_addr)
      GROUP BY token_id, holder)`);
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
  function sumsOfLoad(chain: string): void {
    const sums = new Map<number, bigint>();
    for (const [id, value, sign] of mintsAndBurns.iterate({ zero: zeroAddress })) {
      const amount = amountOf(value);
      sums.set(id, (sums.get(id) ?? 0n) + (sign > 0 ? amount : -amount));
    }
    zeroSums.run(chain);
    for (const [id, sum] of sums) if (sum !== 0n) writeSum.run(encodeAmount(sum), id);
  }
  const clear = db.prepare('DELETE FROM bulk_transfers');
  const done = db.prepare('UPDATE chains SET bulk_block = NULL, balances_block = NULL WHERE chain = ?');
  const writeEntries = indexedWrite(db, 'address_transfers', ['address_transfers_all']);
  const writeBalances = indexedWrite(db, 'balances', [
    'balances_by_rank',
    'balances_by_holder',
    'balances_negative',
  ]);

  function build(chain: string, stored: ChainRow | undefined): boolean {
    if (stored?.bulk_block == null) return false;
    const rows = rowsWaiting();
    const cacheSize = db.pragma('cache_size', { simple: true }) as number;
    // Sorts of a large load spill to temporary files instead of memory (the store keeps
    // temp_store = MEMORY for its small temporary B-trees).
    const tempStore = db.pragma('temp_store', { simple: true }) as number;
    db.pragma(`cache_size = -${BUILD_CACHE_KIB}`);
    db.pragma('temp_store = FILE');
    // Each step reads the loaded rows once (transfers) or twice (addresses, entries, balances).
    const step = progress.start(chain, rows, 7 * rows);
    try {
      step('transfers');
      insertTransfers.run();
      step('addresses');
      const base = chainHasAddresses.get(chain) === 0 ? (largestAddressId.get() ?? 0) : null;
      const added = insertAddresses.run(chain).changes;
      step('address entries');
      // Ranks hold only if the new ids run on from `base` without a gap.
      if (base !== null && largestAddressId.get() === base + added) {
        writeEntries(2 * rows, () => insertEntriesByRank.run(base));
      } else writeEntries(2 * rows, () => insertEntriesByLookup.run(chain));
      step('balances');
      writeBalances(2 * rows, () => insertBalances.run());
      step('counts');
      tokenCounts.run(chain);
      // No batch of the load added to the running sums (they were not written row by row).
      step('sums');
      sumsOfLoad(chain);
      knownIds.clear();
      clear.run();
      done.run(chain);
      progress.finish();
    } finally {
      db.pragma(`cache_size = ${cacheSize}`);
      db.pragma(`temp_store = ${tempStore}`);
    }
    return true;
  }

  return {
    accepts(batch, stored) {
      if (batch.bulkLoad !== true || batch.neo !== undefined || batch.seeds !== undefined) return false;
      if ((batch.balanceChanges?.length ?? 0) > 0) return false;
      // A load goes on, or starts on a chain without transfers; one chain's at a time.
      const fresh = stored === undefined || (stored.indexed_block === null && stored.transfer_count === 0);
      if (stored?.bulk_block == null && !fresh) return false;
      return otherLoads.get(batch.chain) === 0;
    },
    append,
    build,
  };
}

/**
 * Refuses a token's rows that name one log twice, as the transfers' primary key does on the row
 * path: `bulk_transfers` has no key, and a duplicate kept there would fail the build, and every
 * build after it. Rows come in chain order (an import's), so this is one comparison a row; others
 * are checked by a set.
 */
function checkOneRowPerLog(rows: readonly number[], numbers: ArrayLike<number>): void {
  const block = (i: number) => numbers[i * 4]!;
  const log = (i: number) => numbers[i * 4 + 1]!;
  let ordered = true;
  for (let r = 1; r < rows.length && ordered; r++) {
    const a = rows[r - 1]!;
    const b = rows[r]!;
    ordered = block(a) < block(b) || (block(a) === block(b) && log(a) < log(b));
  }
  if (ordered) return;
  const seen = new Set<string>();
  for (const i of rows) {
    const key = `${block(i)}:${log(i)}`;
    if (seen.has(key)) {
      throw new TokenqueryError(`a batch names the log ${log(i)} of block ${block(i)} twice for one token`);
    }
    seen.add(key);
  }
}

/**
 * The build's balance functions, each result encoded as codec.ts stores amounts.
 * `tq_negated(value)`: minus a stored value. `tq_net_amount(list)`: the exact sum of a group's
 * signed values, given as `group_concat` text: per value `0` (a self-transfer), or `+`/`-` then the
 * decimal digits of an INTEGER, `x` and the hex digits of a BLOB, or `t` and a TEXT amount.
 */
function registerNetAmount(db: Database.Database): void {
  db.function('tq_negated', { deterministic: true }, (value: SqlValue) => encodeAmount(-amountOf(value)));
  db.function('tq_net_amount', { deterministic: true }, (list: string) => {
    let total = 0n;
    for (const item of list.split(',')) {
      const sign = item.charCodeAt(0);
      if (sign === ZERO_SIGN) continue;
      const kind = item.charCodeAt(1);
      const value =
        kind === HEX_KIND
          ? item.length === 2
            ? 0n
            : BigInt(`0x${item.slice(2)}`)
          : BigInt(kind === TEXT_KIND ? item.slice(2) : item.slice(1));
      total = sign === PLUS_SIGN ? total + value : total - value;
    }
    return encodeAmount(total);
  });
}

const ZERO_SIGN = '0'.charCodeAt(0);
const PLUS_SIGN = '+'.charCodeAt(0);
const HEX_KIND = 'x'.charCodeAt(0);
const TEXT_KIND = 't'.charCodeAt(0);

/** A stored value as a BigInt; BLOBs of up to 12 bytes without a hex string. */
function amountOf(value: SqlValue): bigint {
  if (typeof value === 'number') return BigInt(value);
  if (Buffer.isBuffer(value) && value.length > 0 && value.length <= 12) {
    const n = value.length;
    if (n <= 6) return BigInt(value.readUIntBE(0, n));
    return (BigInt(value.readUIntBE(0, n - 6)) << 48n) + BigInt(value.readUIntBE(n - 6, 6));
  }
  return decodeAmount(value);
}
