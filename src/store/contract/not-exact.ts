/**
 * The store contract suite, not-exact marks (issue #18, `StoreWriter.setExactness`): a mark is
 * stored per token with how far off it is, cleared by `null`, counted per chain; it survives a
 * rollback (a judgement about the token at the head, checked again after the rollback's supply
 * read) and goes with a token the rollback removes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { batch, blockHash, moves } from '../testing/batches.js';
import type { NotExactMark } from '../types.js';
import { type ContractContext, H1, H2, H3, T1, T2, T3, T5 } from './fixtures.js';

/** A drift past 2^256 and negative: the stored text must keep every digit and the sign. */
const HUGE_NEGATIVE_DRIFT = -(2n ** 256n - 1n);

export function runNotExactCases({ withStore }: ContractContext): void {
  describe('not-exact marks', () => {
    test('a mark is stored with how far off the token is, counted per chain, and cleared by null', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 2,
            transfers: [...moves(T1, 1, [[H1, H2, 5n]]), ...moves(T2, 2, [[H1, H2, 7n]])],
          }),
        );
        await store.writer.applyBatch(
          batch({ chain: 'bsc', from: 1, to: 1, transfers: moves(T1, 1, [[H1, H2, 1n]]) }),
        );
        assert.equal(await store.reader.getNotExact('eth', T1), null);
        assert.deepEqual(await store.reader.countNotExact(), {});
        // The reads the exactness check makes through the writer answer as the reader's do.
        assert.deepEqual(
          await store.writer.listHolders('eth', T1, 0, 10),
          await store.reader.listHolders('eth', T1, 0, 10),
        );
        assert.deepEqual(
          await store.writer.scanBalances('eth', T2, null, 10),
          await store.scans.scanBalances('eth', T2, null, 10),
        );
        assert.equal((await store.writer.scanBalances('eth', T2, null, 10)).length, 2);

        const mark: NotExactMark = { atBlock: 2, supplyDrift: HUGE_NEGATIVE_DRIFT, sampled: 6, differing: 4 };
        const small: NotExactMark = { atBlock: 2, supplyDrift: 12n, sampled: 1, differing: 1 };
        await store.writer.setExactness('eth', [
          { address: T1, mark },
          { address: T2, mark: small },
          // Unknown to the store: skipped, not created.
          { address: T5, mark: small },
        ]);
        await store.writer.setExactness('bsc', [{ address: T1, mark: small }]);
        assert.deepEqual(await store.reader.getNotExact('eth', T1), mark);
        assert.deepEqual(await store.reader.getNotExact('eth', T2), small);
        assert.deepEqual(await store.reader.getNotExact('bsc', T1), small);
        assert.equal(await store.reader.getNotExact('eth', T5), null);
        assert.equal(await store.reader.getToken('eth', T5), null);
        assert.deepEqual(await store.reader.countNotExact(), { eth: 2, bsc: 1 });

        // The last update of a token in one call wins; null clears.
        await store.writer.setExactness('eth', [
          { address: T2, mark: { ...small, atBlock: 3 } },
          { address: T2, mark: null },
          { address: T1, mark: null },
          { address: T1, mark: { ...mark, atBlock: 3, supplyDrift: 0n } },
        ]);
        assert.equal(await store.reader.getNotExact('eth', T2), null);
        assert.deepEqual(await store.reader.getNotExact('eth', T1), { ...mark, atBlock: 3, supplyDrift: 0n });
        assert.deepEqual(await store.reader.countNotExact(), { eth: 1, bsc: 1 });
        await store.writer.setExactness('eth', []);
        assert.deepEqual(await store.reader.countNotExact(), { eth: 1, bsc: 1 });
      }));

    test('negative stored balances are listed, never the zero address, and leave when they end', () =>
      withStore(async (store) => {
        const big = 2n ** 60n; // past 2^53: stored in the other representation
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 2,
            transfers: [
              ...moves(T1, 1, [
                [ZERO_ADDRESS, H1, 10n],
                [H2, H3, 4n],
              ]),
              ...moves(T2, 2, [[H3, H1, big]]),
              ...moves(T3, 2, [[H1, H2, 1n]]),
            ],
          }),
        );
        await store.writer.applyBatch(
          batch({ chain: 'bsc', from: 1, to: 1, transfers: moves(T1, 1, [[H1, H2, 7n]]) }),
        );
        assert.deepEqual(await store.writer.negativeBalances('eth', T1, 10), [{ holder: H2, amount: -4n }]);
        assert.deepEqual(await store.writer.negativeBalances('eth', T2, 10), [{ holder: H3, amount: -big }]);
        assert.deepEqual(await store.writer.negativeBalances('bsc', T1, 10), [{ holder: H1, amount: -7n }]);
        assert.deepEqual(
          (await store.writer.negativeBalances('eth', T3, 10)).map((b) => b.holder),
          [H1],
        );
        assert.deepEqual(await store.writer.negativeBalances('eth', T3, 0), []);
        assert.deepEqual(await store.writer.negativeBalances('eth', T5, 10), []);

        await store.writer.applyBatch(
          batch({
            from: 3,
            to: 3,
            transfers: [...moves(T1, 3, [[H1, H2, 9n]]), ...moves(T2, 3, [[H1, H3, big]])],
          }),
        );
        assert.deepEqual(await store.writer.negativeBalances('eth', T1, 10), []);
        assert.deepEqual(await store.writer.negativeBalances('eth', T2, 10), []);
        await store.writer.rollback('eth', 2, blockHash(2));
        assert.deepEqual(await store.writer.negativeBalances('eth', T1, 10), [{ holder: H2, amount: -4n }]);
        assert.deepEqual(await store.writer.negativeBalances('eth', T2, 10), [{ holder: H3, amount: -big }]);
      }));

    test('a rollback keeps the mark of a token it keeps and removes it with a token it removes', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 3,
            transfers: [
              ...moves(T1, 1, [[H1, H2, 5n]]),
              ...moves(T1, 3, [[H2, H1, 1n]]),
              ...moves(T3, 3, [[H1, H2, 2n]]),
            ],
          }),
        );
        const mark: NotExactMark = { atBlock: 3, supplyDrift: -3n, sampled: 2, differing: 1 };
        await store.writer.setExactness('eth', [
          { address: T1, mark },
          { address: T3, mark },
        ]);
        await store.writer.rollback('eth', 2, blockHash(2));
        assert.deepEqual(await store.reader.getNotExact('eth', T1), mark);
        assert.equal(await store.reader.getNotExact('eth', T3), null);
        assert.deepEqual(await store.reader.countNotExact(), { eth: 1 });
        // T3 comes back without the mark of the token that was removed.
        await store.writer.applyBatch(batch({ from: 3, to: 3, transfers: moves(T3, 3, [[H1, H2, 2n]]) }));
        assert.equal(await store.reader.getNotExact('eth', T3), null);
        assert.deepEqual(await store.reader.countNotExact(), { eth: 1 });
      }));
  });
}
