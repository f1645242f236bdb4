import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { holderPage, holderPercentage } from './holder-views.js';

describe('holder percentage', () => {
  test('exact decimal text, truncated to 6 digits, without trailing zeros or point', () => {
    assert.equal(holderPercentage(85n, 100n), '85');
    assert.equal(holderPercentage(12_345_678n, 100_000_000n), '12.345678');
    // 12.3456789 % is truncated, never rounded up.
    assert.equal(holderPercentage(123_456_789n, 1_000_000_000n), '12.345678');
    assert.equal(holderPercentage(1n, 100_000_000n), '0.000001');
    assert.equal(holderPercentage(15n, 100n), '15');
    assert.equal(holderPercentage(1n, 8n), '12.5');
    assert.equal(holderPercentage(1n, 3n), '33.333333');
    assert.equal(holderPercentage(2n, 3n), '66.666666');
    assert.equal(holderPercentage(100n, 100n), '100');
  });

  test('a share below 0.000001 % is "0"', () => {
    assert.equal(holderPercentage(1n, 100_000_001n), '0');
    assert.equal(holderPercentage(1n, 10n ** 30n), '0');
    assert.equal(holderPercentage(0n, 5n), '0');
  });

  test('null when the total supply is unknown or zero', () => {
    assert.equal(holderPercentage(5n, null), null);
    assert.equal(holderPercentage(5n, 0n), null);
  });

  test('exact far beyond 2^53 and past 100 % when balances exceed the supply', () => {
    const supply = 3n * 10n ** 75n;
    assert.equal(holderPercentage(10n ** 75n, supply), '33.333333');
    assert.equal(holderPercentage(supply - 1n, supply), '99.999999');
    assert.equal(holderPercentage(3n, 2n), '150');
  });
});

describe('holder page', () => {
  test('ranks count from the page offset, balances are integer text', () => {
    const page = holderPage({
      page: 3,
      size: 2,
      total: 9,
      exact: true,
      offset: 4,
      holders: [
        { address: 'a', balance: 2n ** 64n + 1n },
        { address: 'b', balance: 1n },
      ],
      totalSupply: null,
    });
    assert.deepEqual(page, {
      page: 3,
      size: 2,
      total: 9,
      exact: true,
      data: [
        { rank: 5, address: 'a', balance: '18446744073709551617', percentage: null },
        { rank: 6, address: 'b', balance: '1', percentage: null },
      ],
    });
  });
});
