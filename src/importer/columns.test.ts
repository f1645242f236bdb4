import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { COLUMNS, ImportInputError, parseRow, parseTimestamp } from './columns.js';

const base: Record<string, string> = {
  token_address: '0xC02aaa39b223FE8D0A0e5C4F27eAD9083C756Cc2',
  from_address: '0x8032eaede5c55f744387ca53aaf0499abcd783e5',
  to_address: '0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc',
  value: '0026369360912168932',
  transaction_hash: '0x54f4d2da70b5dbb1b3729b2816621c2d56c02969668fa67fa30b8f7db3b8b5d2',
  log_index: '1',
  block_number: '15320500',
};
const row = (values: Record<string, string>) =>
  parseRow(
    COLUMNS.map((c) => values[c]),
    'x.csv:9',
    0,
    9,
  );

describe('row checks', () => {
  test('a good row is normalized: lower-case hex, value without leading zeros, optional columns null', () => {
    const r = row(base);
    assert.equal(r.token, '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2');
    assert.equal(r.value, '26369360912168932');
    assert.equal(r.blockNumber, 15320500);
    assert.deepEqual([r.time, r.txIndex, r.blockHash], [null, null, null]);
    assert.equal(row({ ...base, value: '0' }).value, '0');
    assert.equal(row({ ...base, value: `${(1n << 256n) - 1n}` }).value, `${(1n << 256n) - 1n}`);
  });

  test('each bad value names file:line and the column', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ value: '1e21' }, /^x\.csv:9: column value: "1e21" is not an exact integer/],
      [{ value: '12.0' }, /column value: "12\.0" is not an exact integer/],
      [{ value: '0x10' }, /column value: "0x10" is not a decimal integer/],
      [{ value: `${1n << 256n}` }, /column value: .* exceeds 2\^256 - 1/],
      [{ log_index: '-1' }, /column log_index: "-1" is negative/],
      [{ block_number: '1.5e7' }, /column block_number: "1\.5e7" is not an exact integer/],
      [
        { transaction_hash: '0x54f4' },
        /column transaction_hash: "0x54f4" is not 0x followed by 64 hex digits/,
      ],
      [{ to_address: '' }, /column to_address: missing/],
      [
        { block_timestamp: '1660000000123' },
        /column block_timestamp: .* too large for Unix seconds \(milliseconds\?\)/,
      ],
      [{ transaction_index: 'abc' }, /column transaction_index: "abc" is not a decimal integer/],
    ];
    for (const [change, message] of bad) {
      assert.throws(
        () => row({ ...base, ...change }),
        (e: unknown) => e instanceof ImportInputError && message.test(e.message),
      );
    }
  });
});

describe('block times', () => {
  test('Unix seconds and zoned date text give the same instant', () => {
    const t = 1683029999; // 2023-05-02 12:19:59 UTC
    for (const text of [
      String(t),
      '2023-05-02 12:19:59 UTC',
      '2023-05-02T12:19:59Z',
      '2023-05-02 12:19:59.000000 UTC',
      '2023-05-02T14:19:59+02:00',
      '2023-05-02T07:19:59-0500',
    ]) {
      assert.equal(parseTimestamp(text), t, text);
    }
  });

  test('times without a zone, with fractions, or impossible dates are refused', () => {
    for (const text of [
      '2023-05-02 12:19:59',
      '2023-05-02 12:19:59.5 UTC',
      '2023-02-30 00:00:00 UTC',
      'yesterday',
      '1683029999.5',
    ]) {
      assert.equal(typeof parseTimestamp(text), 'string', text);
    }
  });
});
