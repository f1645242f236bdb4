import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dirtyThenStale } from './supply-reads.js';

describe('dirtyThenStale', () => {
  const stale = ['s1', 's2', 's3'];

  test('dirty tokens first, then stale ones up to the limit', async () => {
    const asked: number[] = [];
    const tokens = await dirtyThenStale(
      4,
      () => ['d1', 'd2'],
      (n) => {
        asked.push(n);
        return stale.slice(0, n);
      },
      (row) => row.toUpperCase(),
    );
    assert.deepEqual(tokens, ['D1', 'D2', 'S1', 'S2']);
    assert.deepEqual(asked, [2]);
  });

  test('no stale read when the dirty tokens fill the limit (asynchronous readers too)', async () => {
    let staleRead = false;
    const tokens = await dirtyThenStale(
      2,
      async (n) => ['d1', 'd2', 'd3'].slice(0, n),
      async () => {
        staleRead = true;
        return stale;
      },
      (row) => row,
    );
    assert.deepEqual(tokens, ['d1', 'd2']);
    assert.equal(staleRead, false);
  });
});
