import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { silentLogger } from '../../internal/logger.js';
import { createAddressEntries, type EntryPart } from './address-transfers.js';
import { migrate } from './migrations.js';

/** A new store's schema in memory: the entries need its `addresses` and `address_transfers`. */
function entriesDb(): Database.Database {
  const db = new Database(':memory:');
  migrate(db, silentLogger());
  return db;
}

type Entry = [addressId: number, tokenId: number, block: number, logIndex: number];

function stored(db: Database.Database): Entry[] {
  return db
    .prepare('SELECT address_id, token_id, block_number, log_index FROM address_transfers')
    .raw()
    .all() as Entry[];
}

const byKey = (a: Entry, b: Entry): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3];

test('entries taken in parts, 32-bit or not, dense ids or sparse: every one written once, exactly', () => {
  const shapes: { name: string; id: (i: number) => number; block: (i: number) => number; wide: boolean }[] = [
    { name: 'dense ids', id: (i) => 1 + ((i * 7) % 50), block: (i) => 1_000 + i, wide: false },
    { name: 'sparse ids', id: (i) => 1 + ((i * 7919) % 97) * 1_000_003, block: (i) => 5 + i, wide: false },
    // A block number past 2^32 (no chain has one yet): such a part stays in doubles.
    { name: 'wide blocks', id: (i) => 3 + (i % 5), block: (i) => 2 ** 33 + i, wide: true },
    // Ids so far apart that (id, position) no longer fits a double: sorted by comparison.
    { name: 'huge ids', id: (i) => 2 ** 45 + ((i * 31) % 7) * 2 ** 40, block: (i) => i, wide: true },
  ];
  for (const shape of shapes) {
    const db = entriesDb();
    const entries = createAddressEntries(db);
    const expected: Entry[] = [];
    const parts: EntryPart[] = [];
    let n = 0;
    for (const size of [40, 1, 0, 300, 17]) {
      for (let k = 0; k < size; k++, n++) {
        const entry: Entry = [shape.id(n), 1 + (n % 3), shape.block(n), n % 11];
        entries.add(...entry);
        expected.push(entry);
      }
      const part = entries.take();
      assert.equal(part.length, size * 4, shape.name);
      assert.equal(part instanceof Float64Array, shape.wide && size > 0, shape.name);
      parts.push(part);
    }
    db.transaction(() => entries.write(parts))();
    assert.deepEqual(stored(db).sort(byKey), expected.sort(byKey), shape.name);
    db.close();
  }
});

test('a replay writes the entries not stored yet and leaves the others', () => {
  const db = entriesDb();
  const entries = createAddressEntries(db);
  entries.add(1, 1, 10, 0);
  entries.add(2, 1, 10, 0);
  db.transaction(() => entries.write([entries.take()]))();
  entries.add(2, 1, 10, 0);
  entries.add(2, 1, 11, 3);
  const first = entries.take();
  entries.add(1, 1, 10, 0);
  db.transaction(() => entries.write([first, entries.take()], true))();
  assert.deepEqual(stored(db).sort(byKey), [
    [1, 1, 10, 0],
    [2, 1, 10, 0],
    [2, 1, 11, 3],
  ]);
  db.close();
});
