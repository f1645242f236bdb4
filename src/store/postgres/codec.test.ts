import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeHex, decodeText, encodeHex, encodeHexDigits, encodeText } from './codec.js';

const SAMPLES = [
  '0x0000000000000000000000000000000000000000',
  '0x000000000000000000000000000000000000dead',
  '0x00',
  '0x0001',
  '0x01',
  '0xff',
  '0xceab719b8baa2310f232ee0d277c061704541cfb',
  `0x${'ab'.repeat(32)}`,
  '',
  '0x',
  '0xABCdef',
  '0xabc',
  'AK2nJJpJr6o664CWJKi1QRXjqeic2zRp8y',
  'ünï 🚀',
];

/** The order SQLite gives its codec's values: TEXT before BLOB, each by bytes. */
function sqliteOrder(a: string, b: string): number {
  const hex = /^0x(?:[0-9a-f]{2})+$/;
  const [ka, kb] = [a, b].map((v) =>
    hex.test(v) ? [1, Buffer.from(v.slice(2), 'hex')] : [0, Buffer.from(v, 'utf8')],
  ) as [[number, Buffer], [number, Buffer]];
  return ka[0] - kb[0] || Buffer.compare(ka[1], kb[1]);
}

describe('postgres codec', () => {
  test('every string round-trips through the stored bytes', () => {
    for (const value of SAMPLES) assert.equal(decodeHex(encodeHex(value)), value, JSON.stringify(value));
  });

  test('distinct strings never share stored bytes', () => {
    const stored = new Set(SAMPLES.map(encodeHexDigits));
    assert.equal(stored.size, SAMPLES.length);
  });

  test('lower-case hex takes its bytes; a leading zero byte and other strings take a 2-byte tag', () => {
    assert.equal(encodeHexDigits('0xceab719b8baa2310f232ee0d277c061704541cfb').length, 40);
    assert.equal(encodeHexDigits('0x0000000000000000000000000000000000000000').length, 44);
    assert.equal(encodeHexDigits(''), '0000');
  });

  test('byte order of the stored values equals SQLite order of the same values', () => {
    const byStored = [...SAMPLES].sort((a, b) =>
      Buffer.compare(Buffer.from(encodeHexDigits(a), 'hex'), Buffer.from(encodeHexDigits(b), 'hex')),
    );
    assert.deepEqual(byStored, [...SAMPLES].sort(sqliteOrder));
  });

  test('free text round-trips, NUL included', () => {
    for (const value of ['', 'Tether USD', 'a\u0000b', '🚀'])
      assert.equal(decodeText(encodeText(value)), value);
  });

  test('a stored value in escape format is refused, not misread', () => {
    assert.throws(() => decodeHex('abc'), TypeError);
    assert.throws(() => decodeHex('\\x0002ab'), TypeError);
  });
});
