/**
 * The writer's part of the address views (migration `0007_address_views`): the integer id of each
 * (chain, address) a transfer names, and the `address_transfers` entries of a batch's transfers
 * (one per address named, a self-transfer once), written with the balances (during a backfill,
 * many batches' entries at once, sorted: see balances.ts) and taken off by a rollback. Ids are
 * cached: a backfill names the same addresses batch after batch.
 */
import type Database from 'better-sqlite3';
import { pushHexParams, UNHEX_OR_VALUE } from './codec.js';
import { bufferedRows, multiRow, ROWS_PER_STATEMENT, rowsOf } from './multi-row.js';
import { hexText } from './sql-fragments.js';

/** Entries per insert statement: more than the other buffered rows (four small numbers a row). */
const ENTRY_ROWS = 128;

/** Address ids the writer keeps at most (about 150 bytes each). */
const ADDRESS_IDS_KEPT = 500_000;

/**
 * A batch's entries as {@link AddressEntries.take} gives them: four numbers each (address id,
 * token id, block, log index). 32-bit when every number fits, as they do on any chain today:
 * a backfill keeps up to a million transfers' entries waiting (balances.ts), and halving them
 * is a large share of its peak memory.
 */
export type EntryPart = Uint32Array | Float64Array;

/** The writer's address ids and `address_transfers` entries over one connection. */
export interface AddressEntries {
  /** The ids of `addresses` (distinct) on `chain`, in their order; addresses never seen get new ids. */
  idsOf(chain: string, addresses: readonly string[]): number[];
  /** Buffers one entry of the transaction's batch, until {@link take}. */
  add(addressId: number, tokenId: number, block: number, logIndex: number): void;
  /** The entries buffered since the last take (four numbers each), which are then forgotten. */
  take(): EntryPart;
  /**
   * Writes `parts` (from {@link take}) in key order; `replay` ignores entries stored already (a
   * replay after a crash may find some: a store upgraded while balances lagged has them all).
   */
  write(parts: readonly EntryPart[], replay?: boolean): void;
  /** Forgets entries buffered by a transaction that failed before taking them. */
  discard(): void;
  /** Forgets the cached ids: a transaction that made some failed, or another connection wrote. */
  clear(): void;
  /** Deletes the entries of token `tokenId` above `toBlock` of `addresses` (those its removed transfers name). */
  removeAbove(chain: string, tokenId: number, addresses: Iterable<string>, toBlock: number): void;
}

export function createAddressEntries(db: Database.Database): AddressEntries {
  const readIds = multiRow(
    db,
    (rows) =>
      `SELECT k.column1, a.id
       FROM (VALUES ${Array.from({ length: rows }, (_, i) => `(${i}, ${UNHEX_OR_VALUE})`).join(', ')}) AS k
       CROSS JOIN addresses AS a WHERE a.chain = ? AND a.address = k.column2`,
    2,
    ROWS_PER_STATEMENT,
  );
  const insertIds = multiRow(
    db,
    (rows) =>
      `INSERT INTO addresses (chain, address) VALUES ${rowsOf(`(?, ${UNHEX_OR_VALUE})`, rows)}
       ON CONFLICT DO NOTHING RETURNING id, ${hexText('address')}`,
    3,
    ROWS_PER_STATEMENT,
  );
  const insertEntries = (verb: string) =>
    bufferedRows(
      db,
      (rows) =>
        `${verb} INTO address_transfers (address_id, token_id, block_number, log_index) VALUES ${rowsOf('(?, ?, ?, ?)', rows)}`,
      4,
      ENTRY_ROWS,
    );
  const entries = insertEntries('INSERT');
  const replayedEntries = insertEntries('INSERT OR IGNORE');
  const removeEntries = db.prepare(
    'DELETE FROM address_transfers WHERE address_id = ? AND token_id = ? AND block_number > ?',
  );
  /** Entries of the transaction not yet taken, four numbers each (`filled` of them used). */
  let pending = new Float64Array(4 * 4096);
  let filled = 0;
  const cache = new Map<string, Map<string, number>>();
  let cached = 0;
  /**
   * Whether addresses missing from the cache are looked for by inserting them first: during a
   * backfill nearly all of them are new, and the insert (which skips those stored already) then
   * gives their ids in one statement instead of a lookup and an insert. After a restart most are
   * stored already, and a lookup first saves the insert. Set by what the last misses turned out to be.
   */
  let insertFirst = true;

  /** Ids of `addresses` stored already, by position; misses stay undefined. */
  const lookUp = (
    chain: string,
    addresses: readonly string[],
    into: (number | undefined)[],
    positions: number[],
  ) => {
    for (let start = 0; start < positions.length; start += ROWS_PER_STATEMENT) {
      const part = positions.slice(start, start + ROWS_PER_STATEMENT);
      const params: unknown[] = [];
      for (const i of part) pushHexParams(params, addresses[i]!);
      params.push(chain);
      for (const [position, id] of readIds.all(part.length, params))
        into[part[position as number]!] = id as number;
    }
  };

  /** Inserts the addresses at `positions` not stored yet, and sets the ids of those it inserted. */
  const insert = (
    chain: string,
    addresses: readonly string[],
    into: (number | undefined)[],
    positions: number[],
  ) => {
    for (let start = 0; start < positions.length; start += ROWS_PER_STATEMENT) {
      const part = positions.slice(start, start + ROWS_PER_STATEMENT);
      const params: unknown[] = [];
      const at = new Map<string, number>();
      for (const i of part) {
        params.push(chain);
        pushHexParams(params, addresses[i]!);
        at.set(addresses[i]!, i);
      }
      for (const [id, address] of insertIds.all(part.length, params))
        into[at.get(address as string)!] = id as number;
    }
  };

  return {
    idsOf(chain, addresses) {
      let known = cache.get(chain);
      if (known === undefined) {
        known = new Map();
        cache.set(chain, known);
      }
      const ids: (number | undefined)[] = new Array(addresses.length);
      const misses: number[] = [];
      for (let i = 0; i < addresses.length; i++) {
        const id = known.get(addresses[i]!);
        if (id === undefined) misses.push(i);
        else ids[i] = id;
      }
      if (misses.length === 0) return ids as number[];
      if (insertFirst) {
        insert(chain, addresses, ids, misses);
        const stored = misses.filter((i) => ids[i] === undefined);
        lookUp(chain, addresses, ids, stored);
        insertFirst = stored.length * 2 <= misses.length;
      } else {
        lookUp(chain, addresses, ids, misses);
        const fresh = misses.filter((i) => ids[i] === undefined);
        insert(chain, addresses, ids, fresh);
        insertFirst = fresh.length * 2 > misses.length;
      }
      if (cached + misses.length > ADDRESS_IDS_KEPT) {
        cache.clear();
        cached = 0;
        known = new Map();
        cache.set(chain, known);
      }
      for (const i of misses) known.set(addresses[i]!, ids[i]!);
      cached += misses.length;
      return ids as number[];
    },

    add(addressId, tokenId, block, logIndex) {
      if (filled === pending.length) {
        const grown = new Float64Array(pending.length * 2);
        grown.set(pending);
        pending = grown;
      }
      pending[filled] = addressId;
      pending[filled + 1] = tokenId;
      pending[filled + 2] = block;
      pending[filled + 3] = logIndex;
      filled += 4;
    },

    take() {
      const used = pending.subarray(0, filled);
      filled = 0;
      let high = 0;
      for (let i = 0; i < used.length; i++) if (used[i]! > high) high = used[i]!;
      return high <= 0xffff_ffff ? Uint32Array.from(used) : used.slice();
    },

    write(parts, replay = false) {
      const rows = replay ? replayedEntries : entries;
      rows.discard();
      // Entry `g` of all the parts together is entry `g - firsts[p]` of part `p`: the parts are
      // read where they are (a copy of them all would double a flush's memory).
      const firsts = new Float64Array(parts.length + 1);
      let maxId = 0;
      let minId = Number.MAX_SAFE_INTEGER;
      parts.forEach((part, p) => {
        firsts[p + 1] = firsts[p]! + part.length / 4;
        for (let i = 0; i < part.length; i += 4) {
          if (part[i]! > maxId) maxId = part[i]!;
          if (part[i]! < minId) minId = part[i]!;
        }
      });
      const count = firsts[parts.length]!;
      if (count === 0) return;
      const idOf = (g: number): number => {
        const p = partOf(firsts, g);
        return parts[p]![(g - firsts[p]!) * 4]!;
      };
      // Written in key order: each insert then lands next to the one before, in B-tree pages the
      // statement just touched, instead of anywhere in the table and its index. By address id,
      // then the order they came in (a batch's transfers are grouped by token, in log order).
      // Ids are dense (a flush names a run of them), so a counting sort by id does it in two passes
      // (a sixth of the time of the sort below: 10 against 60 ms for 800,000 entries), with one
      // counter per id of the range; a sparse range falls back to one numeric sort of (id,
      // position) packed in a double while that stays exact.
      let order: ArrayLike<number>;
      const range = maxId - minId + 1;
      if (range <= 4 * count + 65_536) {
        const starts = new Uint32Array(range + 1);
        for (const part of parts) for (let i = 0; i < part.length; i += 4) starts[part[i]! - minId + 1]!++;
        for (let id = 1; id <= range; id++) starts[id]! += starts[id - 1]!;
        const sorted = new Uint32Array(count);
        let g = 0;
        for (const part of parts) {
          for (let i = 0; i < part.length; i += 4) sorted[starts[part[i]! - minId]!++] = g++;
        }
        order = sorted;
      } else if (maxId * count < 2 ** 53) {
        const keys = new Float64Array(count);
        let g = 0;
        for (const part of parts) {
          for (let i = 0; i < part.length; i += 4, g++) keys[g] = part[i]! * count + g;
        }
        keys.sort();
        for (let k = 0; k < count; k++) keys[k] = keys[k]! % count;
        order = keys;
      } else {
        order = Uint32Array.from({ length: count }, (_, i) => i).sort((a, b) => idOf(a) - idOf(b) || a - b);
      }
      // The parts of consecutive entries in key order: found by a binary search, but first
      // asked of the part of the entry before.
      let p = 0;
      for (let k = 0; k < count; k++) {
        const g = order[k]!;
        if (g < firsts[p]! || g >= firsts[p + 1]!) p = partOf(firsts, g);
        const part = parts[p]!;
        const i = (g - firsts[p]!) * 4;
        const at = rows.next();
        const params = rows.params;
        params[at] = part[i];
        params[at + 1] = part[i + 1];
        params[at + 2] = part[i + 2];
        params[at + 3] = part[i + 3];
      }
      rows.flush();
    },

    discard() {
      filled = 0;
      entries.discard();
      replayedEntries.discard();
    },

    clear() {
      cache.clear();
      cached = 0;
    },

    removeAbove(chain, tokenId, addresses, toBlock) {
      const list = [...addresses];
      const ids: (number | undefined)[] = new Array(list.length);
      lookUp(
        chain,
        list,
        ids,
        list.map((_, i) => i),
      );
      for (const id of ids) if (id !== undefined) removeEntries.run(id, tokenId, toBlock);
    },
  };
}

/** The part `p` whose entries hold entry `g` of them all: `firsts[p] <= g < firsts[p + 1]`. */
function partOf(firsts: Float64Array, g: number): number {
  let low = 0;
  let high = firsts.length - 2;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (firsts[mid]! <= g) low = mid;
    else high = mid - 1;
  }
  return low;
}
