import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fixed8ToAssetUnits, parseFixed8 } from './fixed8.js';

describe('Fixed8 amounts', () => {
  test('decimal text becomes exact units of 10^-8', () => {
    assert.equal(parseFixed8('39.999'), 3_999_900_000n);
    assert.equal(parseFixed8('0.00000001'), 1n);
    assert.equal(parseFixed8('0.0027566'), 275_660n);
    assert.equal(parseFixed8('100000000'), 10_000_000_000_000_000n);
    assert.equal(parseFixed8('0'), 0n);
    // The largest Fixed8 (C# long): beyond 2^53, kept exact.
    assert.equal(parseFixed8('92233720368.54775807'), (1n << 63n) - 1n);
  });

  test('anything else is refused', () => {
    for (const bad of [
      '',
      '1.',
      '.5',
      '1e-8',
      '0.000000001',
      ' 1',
      '1,5',
      '+1',
      '-1',
      '92233720368.54775808',
      1,
      null,
    ]) {
      assert.equal(parseFixed8(bad), undefined, String(bad));
    }
    assert.equal(parseFixed8('-0.00000001', true), -1n);
  });

  test('units convert to the asset precision exactly', () => {
    assert.equal(fixed8ToAssetUnits(24_400_000_000n, 0), 244n);
    assert.equal(fixed8ToAssetUnits(275_660n, 8), 275_660n);
    assert.equal(fixed8ToAssetUnits(150_000_000n, 2), 150n);
    assert.throws(() => fixed8ToAssetUnits(150_000_001n, 0), RangeError);
    assert.throws(() => fixed8ToAssetUnits(1n, 9), RangeError);
  });
});
