import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mulberry32, seededRandom, seededRandomInt } from './random.js';

const take = (next: () => number, count: number): number[] => Array.from({ length: count }, () => next());

describe('mulberry32', () => {
  test('gives the published mulberry32 sequence, on which fixtures and benchmarks depend', () => {
    // Computed with the copies this module replaced; a change here changes every derived fixture.
    assert.deepEqual(take(mulberry32(0), 5), [1144304738, 1416247, 958946056, 627933444, 2007157716]);
    assert.deepEqual(take(mulberry32(1), 5), [2693262067, 11749833, 2265367787, 4213581821, 4159151403]);
    assert.deepEqual(take(mulberry32(42), 5), [2581720956, 1925393290, 3661312704, 2876485805, 750819978]);
  });

  test('reads the seed as an unsigned 32-bit integer', () => {
    assert.deepEqual(take(mulberry32(-1), 5), take(mulberry32(0xffffffff), 5));
    assert.deepEqual(take(mulberry32(2 ** 32 + 42), 5), take(mulberry32(42), 5));
  });

  test('the same seed gives the same sequence; another seed another one', () => {
    assert.deepEqual(take(mulberry32(7), 100), take(mulberry32(7), 100));
    assert.notDeepEqual(take(mulberry32(7), 100), take(mulberry32(8), 100));
  });
});

describe('seededRandom and seededRandomInt', () => {
  test('are the same sequence scaled to [0, 1) and to [0, n)', () => {
    const raw = take(mulberry32(99), 1000);
    const floats = take(seededRandom(99), 1000);
    const int = seededRandomInt(99);
    const ints = raw.map((_, i) => int(i + 1));
    raw.forEach((u, i) => {
      assert.equal(floats[i], u / 2 ** 32);
      assert.ok(floats[i]! >= 0 && floats[i]! < 1);
      assert.equal(ints[i], Math.floor((u / 2 ** 32) * (i + 1)));
      assert.ok(ints[i]! >= 0 && ints[i]! < i + 1);
    });
  });
});
