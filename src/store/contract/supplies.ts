/**
 * The store contract suite, supplies: which tokens need a supply read, and what a read records.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { batch, moves } from '../testing/batches.js';
import { type ContractContext, H1, H2, T1, T2, T3, T4, T5 } from './fixtures.js';

export function runSupplyCases({ withStore }: ContractContext): void {
  describe('supplies', () => {
    test('new tokens need their supply read, up to the limit', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 3,
            transfers: [
              ...moves(T1, 1, [[H1, H2, 1n]]),
              ...moves(T2, 2, [[H1, H2, 1n]]),
              ...moves(T3, 3, [[H1, H2, 1n]]),
            ],
          }),
        );
        assert.deepEqual((await store.writer.tokensNeedingSupply('eth', 0, 10)).sort(), [T1, T2, T3]);
        assert.equal((await store.writer.tokensNeedingSupply('eth', 0, 2)).length, 2);
        assert.deepEqual(await store.writer.tokensNeedingSupply('bsc', 0, 10), []);
      }));

    test('an update records the values and clears the mark', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 3, transfers: moves(T1, 2, [[ZERO_ADDRESS, H1, 10n]]) }),
        );
        await store.writer.updateSupplies('eth', [
          { address: T1, totalSupply: 10n, cap: null, burnedBalance: 3n, atBlock: 3 },
          { address: T5, totalSupply: 1n, cap: 1n, burnedBalance: 1n, atBlock: 3 },
        ]);
        const token = await store.reader.getToken('eth', T1);
        assert.equal(token?.totalSupply, 10n);
        assert.equal(token?.cap, null);
        assert.equal(token?.burnedBalance, 3n);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
        assert.equal(await store.reader.getToken('eth', T5), null);
        // A supply that cannot be read is recorded as null and still clears the mark.
        await store.writer.applyBatch(
          batch({ from: 4, to: 4, transfers: moves(T1, 4, [[ZERO_ADDRESS, H1, 1n]]) }),
        );
        await store.writer.updateSupplies('eth', [
          { address: T1, totalSupply: null, cap: null, burnedBalance: null, atBlock: 4 },
        ]);
        assert.equal((await store.reader.getToken('eth', T1))?.totalSupply, null);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
      }));

    test('a mint, a burn or a transfer to 0x…dead marks the token again; other transfers do not', () =>
      withStore(async (store) => {
        const tokens = [T1, T2, T3, T4];
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: tokens.flatMap((t, i) => moves(t, 1, [[H1, H2, 5n]], i)) }),
        );
        await store.writer.updateSupplies(
          'eth',
          tokens.map((address) => ({ address, totalSupply: 1n, cap: null, burnedBalance: 0n, atBlock: 1 })),
        );
        await store.writer.applyBatch(
          batch({
            from: 2,
            to: 2,
            transfers: [
              ...moves(T1, 2, [[H2, H1, 1n]], 0),
              ...moves(T2, 2, [[ZERO_ADDRESS, H1, 1n]], 1),
              ...moves(T3, 2, [[H2, ZERO_ADDRESS, 1n]], 2),
              ...moves(T4, 2, [[H2, DEAD_ADDRESS, 1n]], 3),
            ],
          }),
        );
        assert.deepEqual((await store.writer.tokensNeedingSupply('eth', 0, 10)).sort(), [T2, T3, T4]);
      }));

    test('a read older than the marking transfer records its values but leaves the mark', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        await store.writer.applyBatch(
          batch({ from: 2, to: 20, transfers: moves(T1, 20, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        await store.writer.updateSupplies('eth', [
          { address: T1, totalSupply: 5n, cap: null, burnedBalance: 0n, atBlock: 19 },
        ]);
        assert.equal((await store.reader.getToken('eth', T1))?.totalSupply, 5n);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), [T1]);
        await store.writer.updateSupplies('eth', [
          { address: T1, totalSupply: 10n, cap: null, burnedBalance: 0n, atBlock: 20 },
        ]);
        assert.equal((await store.reader.getToken('eth', T1))?.totalSupply, 10n);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
      }));

    test('tokens read before staleBefore follow the marked ones, oldest read first', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 30,
            transfers: [
              ...moves(T1, 1, [[H1, H2, 1n]]),
              ...moves(T2, 2, [[H1, H2, 1n]]),
              ...moves(T3, 3, [[H1, H2, 1n]]),
            ],
          }),
        );
        await store.writer.updateSupplies('eth', [
          { address: T2, totalSupply: 1n, cap: null, burnedBalance: 0n, atBlock: 20 },
          { address: T1, totalSupply: 1n, cap: null, burnedBalance: 0n, atBlock: 10 },
        ]);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 5, 10), [T3]);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 15, 10), [T3, T1]);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 25, 10), [T3, T1, T2]);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 25, 2), [T3, T1]);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 25, 1), [T3]);
      }));
  });
}
