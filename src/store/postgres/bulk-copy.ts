/**
 * The bulk rows of a large batch (an import's, a backfill's) written with binary `COPY` instead of
 * `INSERT … SELECT FROM unnest(…)` (apply-batch.ts chooses by size, `copyFromRows`): the
 * transfers, their `address_transfers` entries, and the balance changes. The rows are the same,
 * and so is the transaction: each COPY is one more statement of the batch's transaction, so a
 * batch commits whole with its checkpoint or not at all, and an interrupted load resumes from the
 * checkpoint without loss or duplicates (a COPY into a table with a primary key still refuses a
 * duplicate row).
 *
 * Why: the server then takes each field's bytes as they are, without unnesting nine arrays and
 * without the `RETURNING` set that fed `address_transfers` from the inserted rows; the entries are
 * built here instead, sorted by their key as the statement's `ORDER BY` had them, so that their
 * index inserts walk the B-trees in order.
 */
import type pg from 'pg';
import type { BalanceChange } from '../types.js';
import type { ChangeRows, EmptiedRow } from './apply-batch.js';
import { int4Array, int8Array, numericArray } from './binary-arrays.js';
import { encodeCopyRows } from './copy-binary.js';
import { copyFrom } from './copy-from.js';
import { COPY_SQL, STAGED_SQL } from './statements.js';

/**
 * Default of `PostgresStoreOptions.copyFromRows`: a batch with at least this many rows of a table
 * writes them with `COPY`. A COPY is two round trips of the simple protocol where the prepared
 * statement is one, so small batches (following the head: a block or two) keep the statement.
 */
export const DEFAULT_COPY_FROM_ROWS = 1_000;

/** A batch's transfers as apply-batch.ts gathers them: one array per column, index = row. */
export interface TransferColumns {
  tokenId: number[];
  logIndex: number[];
  block: number[];
  time: number[];
  txIndex: number[];
  /** Hex digits of the stored bytes (codec.ts), as are `from` and `to`. */
  txHash: string[];
  from: string[];
  to: string[];
  value: bigint[];
}

/**
 * COPYs the `count` transfers of `columns`, then one `address_transfers` entry per address each
 * names (a self-transfer once), as `insertTransfers` does. The entries are encoded while the server
 * copies the transfers.
 */
export async function copyTransfers(
  client: pg.ClientBase,
  chain: string,
  columns: TransferColumns,
  count: number,
): Promise<void> {
  const transfers = copyFrom(
    client,
    COPY_SQL.transfers,
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
  // The transfers' data is on its way (copy-from.ts sends it with the statement): the server
  // copies it while the entries are encoded. pg runs one query at a time per connection, so the
  // entries' COPY waits for it.
  let entries: Buffer;
  try {
    entries = encodeEntries(chain, columns, count);
  } catch (error) {
    await transfers.catch(() => {});
    throw error;
  }
  await transfers;
  await copyFrom(client, COPY_SQL.addressTransfers, entries);
}

/** The `address_transfers` rows of the transfers, sorted by (address, token, block, log). */
function encodeEntries(chain: string, c: TransferColumns, count: number): Buffer {
  const address: string[] = [];
  const row: number[] = [];
  for (let i = 0; i < count; i++) {
    const from = c.from[i]!;
    const to = c.to[i]!;
    address.push(from);
    row.push(i);
    if (to !== from) {
      address.push(to);
      row.push(i);
    }
  }
  const n = address.length;
  const order = Array.from({ length: n }, (_, i) => i);
  // Hex digits compare like the bytes they stand for (0-9 before a-f, a prefix first).
  order.sort((x, y) => {
    const a = address[x]!;
    const b = address[y]!;
    if (a !== b) return a < b ? -1 : 1;
    const rx = row[x]!;
    const ry = row[y]!;
    return (
      c.tokenId[rx]! - c.tokenId[ry]! || c.block[rx]! - c.block[ry]! || c.logIndex[rx]! - c.logIndex[ry]!
    );
  });
  const pick = <T>(column: readonly T[]): T[] => row.map((i) => column[i]!);
  return encodeCopyRows(
    n,
    [
      { type: 'bytea', values: address },
      { type: 'int4', values: pick(c.tokenId) },
      { type: 'int8', values: pick(c.block) },
      { type: 'int4', values: pick(c.logIndex) },
      { type: 'constText', value: chain },
    ],
    order,
  );
}

/** COPYs balance changes (`insertBalanceChanges`' rows); `tokenIds[i]` is the id of `changes[i]`'s token. */
export function copyBalanceChanges(
  client: pg.ClientBase,
  changes: readonly BalanceChange[],
  tokenIds: readonly number[],
  encode: (address: string) => string,
): Promise<number> {
  return copyFrom(
    client,
    COPY_SQL.balanceChanges,
    encodeCopyRows(changes.length, [
      { type: 'int4', values: tokenIds },
      { type: 'int4', values: changes.map((c) => c.logIndex) },
      { type: 'int8', values: changes.map((c) => c.blockNumber) },
      { type: 'bytea', values: changes.map((c) => encode(c.holder)) },
      { type: 'numeric', values: changes.map((c) => c.amount) },
    ]),
  );
}

/**
 * The batch's net balance changes (`applyChanges`' rows) COPYed into a temporary table, then
 * applied from there by the same upsert (`applyStagedChanges`, derived from `applyChanges`); the
 * table empties itself at commit. Answers the rows left with nothing, to be deleted.
 */
export async function stageChanges(client: pg.ClientBase, rows: ChangeRows): Promise<EmptiedRow[]> {
  // In the batch's transaction: a batch that fails takes the table's creation back with it.
  await client.query(STAGED_SQL.createStagedChanges);
  await copyFrom(
    client,
    COPY_SQL.stagedChanges,
    encodeCopyRows(rows.tokenIds.length, [
      { type: 'int4', values: rows.tokenIds },
      { type: 'bytea', values: rows.holders },
      { type: 'numeric', values: rows.deltas },
      { type: 'bool', values: rows.counts },
      { type: 'int8', values: rows.namedCounts },
    ]),
  );
  const applied = await client.query<EmptiedRow>({
    name: 'applyStagedChanges',
    text: STAGED_SQL.applyStagedChanges,
    values: [
      int4Array(rows.ids),
      int8Array(rows.transfers),
      int8Array(rows.dirty),
      false,
      numericArray(rows.sums),
    ],
  });
  return applied.rows;
}
