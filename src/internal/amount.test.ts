import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatUnits, hexToBigInt, MAX_UINT256 } from './amount.js';

describe('formatUnits', () => {
  test('examples from docs/api.md#amounts', () => {
    assert.equal(formatUnits(1_000_000_000_000_000_000_000_000_000n, 18), '1000000000');
    assert.equal(formatUnits(1_500_000n, 6), '1.5');
  });

  test('no trailing zeros, no point when integral, leading zero for fractions', () => {
    assert.equal(formatUnits(0n, 18), '0');
    assert.equal(formatUnits(7n, 18), '0.000000000000000007');
    assert.equal(formatUnits(10n ** 18n, 18), '1');
    assert.equal(formatUnits(1_230_000n, 6), '1.23');
    assert.equal(formatUnits(42n, 0), '42');
  });

  test('exact at uint256 scale, where floats would round', () => {
    assert.equal(
      formatUnits(MAX_UINT256, 18),
      '115792089237316195423570985008687907853269984665640564039457.584007913129639935',
    );
    assert.equal(formatUnits(2n ** 53n + 1n, 0), '9007199254740993');
  });

  test('negative amounts keep their sign', () => {
    assert.equal(formatUnits(-1_500_000n, 6), '-1.5');
  });

  test('rejects impossible decimals', () => {
    assert.throws(() => formatUnits(1n, -1), RangeError);
    assert.throws(() => formatUnits(1n, 1.5), RangeError);
  });
});

describe('hexToBigInt', () => {
  test('reads quantities and the empty 0x as zero', () => {
    assert.equal(hexToBigInt('0x'), 0n);
    assert.equal(hexToBigInt('0xff'), 255n);
    assert.equal(hexToBigInt(`0x${'f'.repeat(64)}`), MAX_UINT256);
  });
});
