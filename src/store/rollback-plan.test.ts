import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { journalCovers, rollBackToken, rollbackResult } from './rollback-plan.js';

type Row = [string, string, bigint];
const decode = (row: Row) => row;

describe('rollback plan', () => {
  test('the journal covers a rollback whose first undone block is at or above its floor', () => {
    assert.equal(journalCovers(99, 100), true);
    assert.equal(journalCovers(100, 100), true);
    assert.equal(journalCovers(98, 100), false);
  });

  test('a token first seen above the target is dropped whole', () => {
    assert.equal(rollBackToken(11, 10, [['0xa', '0xb', 5n]] as Row[], decode), null);
  });

  test('a kept token takes the removed transfers off, loses their count and is marked at the target', () => {
    const rows: Row[] = [
      ['0xa', '0xb', 5n],
      ['0xb', '0xc', 2n],
      ['0xc', '0xc', 9n],
    ];
    const kept = rollBackToken(10, 10, rows, decode);
    assert.deepEqual(kept, {
      deltas: new Map([
        ['0xa', 5n],
        ['0xb', -3n],
        ['0xc', -2n],
      ]),
      // Transfer counts: each removed transfer once per address it names, a self-transfer once.
      named: new Map([
        ['0xa', -1],
        ['0xb', -2],
        ['0xc', -2],
      ]),
      transfers: -3,
      dirty: 10,
    });
  });

  test('the affected tokens come back sorted', () => {
    assert.deepEqual(rollbackResult(['0xc', '0xa', '0xb'], 4), {
      affectedTokens: ['0xa', '0xb', '0xc'],
      removedTransfers: 4,
    });
  });
});
