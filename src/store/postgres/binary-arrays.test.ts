import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { MAX_UINT256 } from '../../internal/amount.js';
import { boolArray, byteaArray, int4Array, int8Array, numericArray } from './binary-arrays.js';
import { checkTestServer, TEST_POSTGRES_URL } from './testing/test-database.js';

// The real server parses what these encoders build; a mistake shows as an error or a wrong value.
describe('binary array parameters', () => {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  before(async () => {
    await checkTestServer();
    await client.connect();
  });
  after(() => client.end());

  async function asText(sql: string, value: Buffer): Promise<string> {
    const result = await client.query<{ v: string }>(`SELECT (${sql})::text AS v`, [value]);
    return result.rows[0]!.v;
  }

  test('numeric[] keeps every digit, signs and zero', async () => {
    const values = [
      0n,
      1n,
      -1n,
      9999n,
      10000n,
      10n ** 18n,
      -(10n ** 30n) - 7n,
      MAX_UINT256,
      2n * MAX_UINT256,
      null,
    ];
    const text = await asText('$1::numeric[]', numericArray(values));
    assert.equal(text, `{${values.map((v) => (v === null ? 'NULL' : v.toString())).join(',')}}`);
  });

  test('numeric values reach numeric(78,0) columns unchanged', async () => {
    const result = await client.query<{ v: string }>('SELECT unnest($1::numeric(78,0)[])::text AS v', [
      numericArray([MAX_UINT256, 12345678901234567890n]),
    ]);
    assert.deepEqual(
      result.rows.map((r) => r.v),
      [MAX_UINT256.toString(), '12345678901234567890'],
    );
  });

  test('integer[], bigint[], boolean[] and bytea[]', async () => {
    assert.equal(await asText('$1::integer[]', int4Array([0, -5, 2147483647])), '{0,-5,2147483647}');
    assert.equal(
      await asText('$1::bigint[]', int8Array([0, -3, 2 ** 53 - 1, null])),
      '{0,-3,9007199254740991,NULL}',
    );
    assert.equal(await asText('$1::boolean[]', boolArray([true, false])), '{t,f}');
    assert.equal(
      await asText('$1::bytea[]', byteaArray(['', '00ff', 'ab'])),
      '{"\\\\x","\\\\x00ff","\\\\xab"}',
    );
  });

  test('empty arrays', async () => {
    assert.equal(await asText('$1::integer[]', int4Array([])), '{}');
    assert.equal(await asText('$1::numeric[]', numericArray([])), '{}');
    assert.equal(await asText('$1::bytea[]', byteaArray([])), '{}');
  });

  test('values that do not fit are refused before they are sent', () => {
    assert.throws(() => int8Array([2 ** 60]), RangeError);
    assert.throws(() => int4Array([2 ** 31]), RangeError);
    assert.throws(() => byteaArray(['zz']), TypeError);
  });
});
