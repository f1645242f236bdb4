/**
 * Binary `COPY` (copy-binary.ts, copy-from.ts, bulk-copy.ts) on the real server: values round-trip
 * exactly, a COPY the server refuses fails its statement and leaves the connection in step, and the
 * whole store contract holds with every batch table written through COPY (`copyFromRows: 0`).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { silentLogger } from '../../internal/logger.js';
import { runStoreContractSuite } from '../contract/suite.js';
import type { Store } from '../types.js';
import { encodeHexDigits } from './codec.js';
import { encodeCopyRows } from './copy-binary.js';
import { copyFrom } from './copy-from.js';
import { openPostgresStore } from './postgres-store.js';
import { requireTestServer } from './testing/require-server.js';
import { createTestDatabase, querySql, type TestDatabase, withSchema } from './testing/test-database.js';

if (await requireTestServer()) {
  const database: TestDatabase = await createTestDatabase();
  after(() => database.drop());

  describe('binary COPY', () => {
    test('every column type round-trips exactly, in the order given', async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query(
          'CREATE TEMP TABLE t (i integer, n bigint, b bytea, v numeric, f boolean, c text)',
        );
        const values = [0n, 1n, -1n, 9999n, 10000n, -123456789012345678901234567890n, 2n ** 256n - 1n];
        const addresses = [
          '0x00000000000000000000000000000000000000ff',
          '0xabcdefabcdefabcdefabcdefabcdefabcdefabcd',
          'AKkkumHbBipZ46UMZJoFynJMXzSRnBvKcs',
          '',
          '0xAB',
          '0x01',
          '0x',
        ];
        const count = values.length;
        const ints = [0, -1, 2 ** 31 - 1, -(2 ** 31), 7, 8, 9];
        const bigints = [0, null, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1, null, 3];
        const order = [6, 0, 5, 1, 4, 2, 3];
        const rows = await copyFrom(
          client,
          'COPY t (i, n, b, v, f, c) FROM STDIN (FORMAT binary)',
          encodeCopyRows(
            count,
            [
              { type: 'int4', values: ints },
              { type: 'int8', values: bigints },
              { type: 'bytea', values: addresses.map(encodeHexDigits) },
              { type: 'numeric', values },
              { type: 'bool', values: ints.map((i) => i % 2 === 0) },
              { type: 'constText', value: 'éth' },
            ],
            order,
          ),
        );
        assert.equal(rows, count);
        // Physical order of a fresh heap: the order the rows were copied in.
        const read = await client.query<{
          i: number;
          n: string | null;
          b: string;
          v: string;
          f: boolean;
          c: string;
        }>("SELECT i, n::text, '\\x' || encode(b, 'hex') AS b, v::text, f, c FROM t");
        assert.deepEqual(
          read.rows,
          order.map((k) => ({
            i: ints[k],
            n: bigints[k] === null ? null : String(bigints[k]),
            b: `\\x${encodeHexDigits(addresses[k]!)}`,
            v: values[k]!.toString(),
            f: ints[k]! % 2 === 0,
            c: 'éth',
          })),
        );
      } finally {
        await client.end();
      }
    });

    test('a large COPY (several messages) arrives whole', async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query('CREATE TEMP TABLE big (i integer, b bytea)');
        const count = 60_000;
        const ids = Array.from({ length: count }, (_, i) => i);
        const blobs = ids.map((i) => i.toString(16).padStart(64, '0'));
        const data = encodeCopyRows(count, [
          { type: 'int4', values: ids },
          { type: 'bytea', values: blobs },
        ]);
        assert.ok(data.length > 2 << 20, `${data.length} bytes`);
        assert.equal(await copyFrom(client, 'COPY big FROM STDIN (FORMAT binary)', data), count);
        const [sum] = (
          await client.query<{ n: string; s: string; last: string }>(
            "SELECT count(*) AS n, sum(i) AS s, (SELECT encode(b, 'hex') FROM big ORDER BY i DESC LIMIT 1) AS last FROM big",
          )
        ).rows;
        assert.deepEqual(sum, {
          n: String(count),
          s: String((count * (count - 1)) / 2),
          last: blobs[count - 1],
        });
      } finally {
        await client.end();
      }
    });

    test('a COPY the server refuses fails alone; the transaction rolls back and the connection goes on', async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query('CREATE TABLE keyed (k integer PRIMARY KEY)');
        await client.query('BEGIN');
        await client.query('INSERT INTO keyed VALUES (-1)');
        // A duplicate key at the end, after 5,000 rows are in: refused inside the COPY.
        const keys = [...Array.from({ length: 5_000 }, (_, i) => i), 17];
        await assert.rejects(
          copyFrom(
            client,
            'COPY keyed FROM STDIN (FORMAT binary)',
            encodeCopyRows(keys.length, [{ type: 'int4', values: keys }]),
          ),
          /duplicate key value violates unique constraint/,
        );
        await client.query('ROLLBACK');
        // And one refused at once (no such table): the data sent behind it is ignored.
        await assert.rejects(
          copyFrom(
            client,
            'COPY missing FROM STDIN (FORMAT binary)',
            encodeCopyRows(1, [{ type: 'int4', values: [1] }]),
          ),
          /does not exist/,
        );
        assert.equal((await client.query('SELECT count(*)::integer AS n FROM keyed')).rows[0].n, 0);
      } finally {
        await client.end();
      }
    });
  });

  let schemas = 0;
  runStoreContractSuite('postgres, every batch table through COPY', async () => {
    const schema = `copy_${++schemas}`;
    await querySql(database.url, `CREATE SCHEMA ${schema}`);
    const url = withSchema(database.url, schema);
    const opened: Store[] = [];
    const openOne = async (): Promise<Store> => {
      const store = await openPostgresStore({
        url,
        logger: silentLogger(),
        maxConnections: 4,
        copyFromRows: 0,
      });
      opened.push(store);
      return store;
    };
    const drop = () => querySql(database.url, `DROP SCHEMA ${schema} CASCADE`);
    try {
      return {
        store: await openOne(),
        reopen: openOne,
        cleanup: async () => {
          for (const store of opened) await store.close();
          await drop();
        },
      };
    } catch (error) {
      await drop();
      throw error;
    }
  });
}
