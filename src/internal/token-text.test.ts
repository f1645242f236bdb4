import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  cleanTokenMetadata,
  cleanTokenText,
  MAX_TOKEN_NAME_CHARS,
  MAX_TOKEN_SYMBOL_CHARS,
} from './token-text.js';

const codePoints = (text: string) => [...text].length;

describe('cleanTokenText', () => {
  test('clean text passes unchanged, and is the same string', () => {
    for (const text of ['Tether USD', 'USDT', 'Ether 🦄', '', 'Ünïcödé 日本円', 'a'.repeat(128)]) {
      assert.equal(cleanTokenText(text, 128), text);
    }
  });

  test('caps by code points, never splitting a surrogate pair', () => {
    assert.equal(cleanTokenText('x'.repeat(200), 128), 'x'.repeat(128));
    // 𝔸 is one code point and two UTF-16 units: 128 of them are 256 units.
    const doubled = '𝔸'.repeat(300);
    const capped = cleanTokenText(doubled, 128);
    assert.equal(capped, '𝔸'.repeat(128));
    assert.equal(capped.length, 256);
    // A cut that would fall between the halves of a pair falls after it.
    const odd = cleanTokenText(`a${'😀'.repeat(40)}`, 32);
    assert.equal(codePoints(odd), 32);
    assert.equal(odd, `a${'😀'.repeat(31)}`);
    for (let max = 1; max < 10; max++) {
      const cut = cleanTokenText('a😀b😀😀c'.repeat(5), max);
      assert.equal(codePoints(cut), max);
      assert.equal(cut, [...'a😀b😀😀c'.repeat(5)].slice(0, max).join(''));
    }
  });

  test('a megabyte name is cut to the cap', () => {
    const huge = `Hostile${' Token'.repeat(200_000)}`;
    const capped = cleanTokenText(huge, MAX_TOKEN_NAME_CHARS);
    assert.ok(codePoints(capped) <= MAX_TOKEN_NAME_CHARS);
    assert.ok(huge.startsWith(capped));
    assert.equal(capped, huge.slice(0, MAX_TOKEN_NAME_CHARS).trimEnd());
    // A pair straddling the internal slice boundary stays whole.
    for (const lead of ['', 'a', 'ab']) {
      const text = lead + '😀'.repeat(100_000);
      const cut = cleanTokenText(text, 200);
      assert.equal(cut, lead + '😀'.repeat(200 - lead.length));
    }
  });

  test('strips C0, DEL and C1 controls; line breaks and tabs become spaces', () => {
    assert.equal(cleanTokenText('\u001b[31mEVIL\u001b[0m', 32), '[31mEVIL[0m');
    assert.equal(cleanTokenText('US\u0000DT\u0000\u0000', 32), 'USDT');
    assert.equal(cleanTokenText('A\u0007\u007f\u0080\u009fB', 32), 'AB');
    assert.equal(cleanTokenText('Wrapped\tEther\r\nToken\u2028X\u0085Y', 128), 'Wrapped Ether  Token X Y');
  });

  test('strips invisible format characters but keeps ZWJ and ZWNJ', () => {
    // Right-to-left override: "USDT" hiding as something else.
    assert.equal(cleanTokenText('\u202eTDSU\u202c', 32), 'TDSU');
    assert.equal(cleanTokenText('U\u200bS\u2060D\ufeffT\u00ad\u2066\u2069', 32), 'USDT');
    // Tag characters (hidden text) are outside the BMP.
    assert.equal(cleanTokenText('USDT\u{e0041}\u{e0042}', 32), 'USDT');
    const family = '👨\u200d👩\u200d👧';
    assert.equal(cleanTokenText(family, 32), family);
    assert.equal(cleanTokenText('می\u200cخواهم', 32), 'می\u200cخواهم');
  });

  test('drops lone surrogates', () => {
    assert.equal(cleanTokenText('a\ud800b\udc00c', 32), 'abc');
    assert.equal(cleanTokenText('\ud83d', 32), '');
  });

  test('trims, before and after the cut; nothing visible left is ""', () => {
    assert.equal(cleanTokenText('  USDT \n', 32), 'USDT');
    assert.equal(cleanTokenText('\u0000\u0001\u202e \t\u200b', 32), '');
    assert.equal(cleanTokenText('', 32), '');
    assert.equal(cleanTokenText('\u0000'.repeat(1 << 20), 128), '');
    assert.equal(cleanTokenText(`${' '.repeat(10)}ab   cd`, 4), 'ab');
    assert.equal(cleanTokenText(`${'\u0000'.repeat(500)}name`, 4), 'name');
  });

  test('refuses a cap that is not a positive integer', () => {
    for (const max of [0, -1, 1.5, Number.NaN]) assert.throws(() => cleanTokenText('a', max), RangeError);
  });
});

describe('cleanTokenMetadata', () => {
  test('caps the name and the symbol at their own limits; clean metadata is the same object', () => {
    const clean = { address: '0x1', name: 'Tether USD', symbol: 'USDT', decimals: 6 };
    assert.equal(cleanTokenMetadata(clean), clean);
    const hostile = {
      address: '0x1',
      name: 'N'.repeat(1000),
      symbol: `\u0000${'S'.repeat(100)}`,
      decimals: 6,
    };
    assert.deepEqual(cleanTokenMetadata(hostile), {
      address: '0x1',
      name: 'N'.repeat(MAX_TOKEN_NAME_CHARS),
      symbol: 'S'.repeat(MAX_TOKEN_SYMBOL_CHARS),
      decimals: 6,
    });
    assert.equal(hostile.name.length, 1000, 'the input is not changed');
  });
});
