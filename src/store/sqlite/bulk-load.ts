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
 * without the flag (or a rollback) then builds the rest (before its own transaction), each table by
 * one `INSERT … SELECT … ORDER BY` in its key order, which SQLite's sorter makes with bounded
 * memory (spilling to temporary files), in steps and key-range chunks of their own transactions
 * (bulk-build.ts). Balances are summed exactly by an aggregate function (BigInt past 2^53). On a
 * chain without addresses before the load, an address entry's id is its address's rank (the
 * addresses are added in byte order), not a lookup; the tokens' running sums are their mints less
 * their burns.
 *
 * Interrupted: the appended batches are committed with their checkpoints, so the next run goes on
 * from the checkpoint; the build records its progress with each chunk, so a crash in it leaves
 * the rest to build. Meanwhile the chain's `balances_block` (status `balancesBlock`) is the block
 * before the load: its transfers, balances and address views are not readable until the build.
 */
import { TokenqueryError } from '../../internal/errors.js';
import { encodeRecentTransfers } from '../chain-activity.js';
import type { IndexBatch } from '../types.js';
import type { BatchContext, BatchSteps } from './apply-batch.js';
import type { BatchBalances } from './balances.js';
import { planWire, type WireBatch } from './batch-wire.js';
import { registerNetAmount } from './bulk-amounts.js';
import { createBulkBuild } from './bulk-build.js';
import { createBuildProgress } from './bulk-progress.js';
import {
  allHashesLowerHex,
  amountHexDigits,
  type ChainRow,
  encodeHex,
  isLowerHex,
  lowerHexDigits,
  pushAmountParams,
  pushHexParams,
  UNHEX_OR_VALUE,
} from './codec.js';
import { BUFFERED_ROWS, bufferedRows, multiRow, ROWS_PER_STATEMENT, rowsOf } from './multi-row.js';

export interface BulkLoad {
  /** Whether the store takes `batch` as a bulk load's batch (`stored`: its chain row, read under the write lock). */
  accepts(batch: Omit<IndexBatch, 'transfers'>, stored: ChainRow | undefined): boolean;
  /** Appends an accepted batch (inside its transaction, after `beginBatch`). */
  append(wire: WireBatch, stored: ChainRow | undefined): BatchBalances;
  /**
   * Builds the chain's waiting bulk load, if any (bulk-build.ts): outside a transaction each chunk
   * commits on its own; inside one, as savepoints of it. True when there was one.
   */
  build(chain: string, stored: ChainRow | undefined): boolean;
}

/** The bulk load over the writer's connection; `steps` give token ids and the block journal. */
export function createBulkLoad(
  context: Pick<BatchContext, 'db' | 'sql' | 'logger'>,
  steps: Pick<BatchSteps, 'tokenIds' | 'blockJournal'>,
): BulkLoad {
  const { db, sql, logger } = context;
  registerNetAmount(db);
  const progress = createBuildProgress(logger);
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

  const bulkBuild = createBulkBuild(db, progress, () => knownIds.clear());

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
    build(chain, stored) {
      return stored?.bulk_block != null && bulkBuild.run(chain);
    },
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
