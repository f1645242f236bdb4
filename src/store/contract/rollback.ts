/**
 * The store contract suite, rollbacks: undoing blocks equals never applying them; what a
 * rollback reports, keeps and refuses.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { batch, blockHash, hash32, moves } from '../testing/batches.js';
import {
  applyAll,
  batchesOf,
  type ContractContext,
  H1,
  H2,
  H3,
  randomHistory,
  snapshot,
  T1,
  T2,
  T3,
} from './fixtures.js';

export function runRollbackCases({ withStore, open }: ContractContext): void {
  describe('rollback', () => {
    const ranges: [number, number][] = [
      [1, 10],
      [11, 25],
      [26, 40],
    ];
    const history = randomHistory(20240611, 40, 5, 8);
    const clip = (to: number): [number, number][] =>
      ranges.filter(([from]) => from <= to).map(([from, end]) => [from, Math.min(end, to)]);

    for (const [label, window] of [
      ['inside the unfinalized window', undefined],
      ['below the pruned window', 5],
    ] as const) {
      for (const toBlock of [10, 18, 33, 37, 0]) {
        test(`undoing blocks above ${toBlock} ${label} equals never applying them`, () =>
          withStore(async (store) => {
            await applyAll(store, batchesOf(history, ranges, window));
            const result = await store.writer.rollback('eth', toBlock, blockHash(toBlock));
            const removed = history.transfers.filter((t) => t.blockNumber > toBlock);
            assert.equal(result.removedTransfers, removed.length);

            const reference = await open();
            try {
              await applyAll(reference.store, batchesOf(history, clip(toBlock), window));
              const expected = await snapshot(reference.store, 'eth', history.tokens, history.parties);
              if (toBlock === 0) expected.checkpoint = { block: 0, hash: blockHash(0) };
              assert.deepEqual(await snapshot(store, 'eth', history.tokens, history.parties), expected);
              if (window === undefined) {
                assert.deepEqual(
                  await store.writer.getBlockRefs('eth', 0, 100),
                  await reference.store.writer.getBlockRefs('eth', 0, 100),
                );
              }
            } finally {
              await reference.cleanup();
            }
          }));
      }
    }

    test('undoes a token touched only below the pruned window', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        await store.writer.applyBatch(
          batch({
            from: 6,
            to: 20,
            transfers: [...moves(T1, 7, [[H1, H2, 2n]]), ...moves(T2, 19, [[ZERO_ADDRESS, H1, 1n]])],
            prune: 15,
          }),
        );
        const result = await store.writer.rollback('eth', 5, blockHash(5));
        assert.deepEqual(result, { affectedTokens: [T1, T2], removedTransfers: 2 });
        assert.equal(await store.reader.getBalance('eth', T1, H1), 5n);
        assert.equal(await store.reader.getBalance('eth', T1, H2), 0n);
        const token = await store.reader.getToken('eth', T1);
        assert.equal(token?.transferCount, 1);
        assert.equal(token?.holderCount, 1);
        assert.equal(await store.reader.getToken('eth', T2), null);
      }));

    test('a token first seen in a rolled-back block disappears', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        await store.writer.applyBatch(
          batch({
            from: 6,
            to: 9,
            transfers: [...moves(T2, 7, [[ZERO_ADDRESS, H2, 8n]]), ...moves(T1, 8, [[H1, H2, 1n]])],
          }),
        );
        assert.equal((await store.reader.listTokens('eth', 0, 10)).total, 2);
        await store.writer.rollback('eth', 5, blockHash(5));
        assert.equal(await store.reader.getToken('eth', T2), null);
        assert.deepEqual(await store.reader.listTransfers('eth', T2, 0, 10), []);
        assert.equal(await store.reader.getBalance('eth', T2, H2), 0n);
        const page = await store.reader.listTokens('eth', 0, 10);
        assert.deepEqual(
          page.tokens.map((t) => t.address),
          [T1],
        );
        assert.equal(page.total, 1);
        // Seen again later, it is a new token with the metadata of that batch.
        await store.writer.applyBatch(
          batch({
            from: 6,
            to: 6,
            transfers: moves(T2, 6, [[ZERO_ADDRESS, H3, 1n]]),
            tokens: [{ address: T2, name: 'Again', symbol: 'AGN', decimals: 3 }],
          }),
        );
        const again = await store.reader.getToken('eth', T2);
        assert.equal(again?.name, 'Again');
        assert.equal(again?.firstBlock, 6);
        assert.equal(again?.holderCount, 1);
        assert.equal(again?.transferCount, 1);
      }));

    test('reports every token that lost transfers and marks survivors for a supply read', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 5,
            transfers: [...moves(T1, 2, [[ZERO_ADDRESS, H1, 5n]]), ...moves(T3, 3, [[ZERO_ADDRESS, H1, 5n]])],
          }),
        );
        await store.writer.updateSupplies(
          'eth',
          [T1, T3].map((address) => ({
            address,
            totalSupply: 5n,
            cap: null,
            burnedBalance: 0n,
            atBlock: 5,
          })),
        );
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
        await store.writer.applyBatch(
          batch({
            from: 6,
            to: 9,
            transfers: [
              ...moves(T1, 6, [
                [H1, H2, 1n],
                [H2, H3, 1n],
              ]),
              ...moves(T2, 7, [[ZERO_ADDRESS, H2, 8n]]),
            ],
          }),
        );
        const result = await store.writer.rollback('eth', 5, blockHash(5));
        assert.deepEqual(result, { affectedTokens: [T1, T2], removedTransfers: 3 });
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), [T1]);
        // A read at the new checkpoint is recent enough.
        await store.writer.updateSupplies('eth', [
          { address: T1, totalSupply: 5n, cap: null, burnedBalance: 0n, atBlock: 5 },
        ]);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
      }));

    test('sets the checkpoint, drops block refs above it, and indexing continues from there', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        await store.writer.applyBatch(batch({ from: 6, to: 9, transfers: moves(T1, 8, [[H1, H2, 1n]]) }));
        await store.writer.rollback('eth', 6, hash32(0xf0f0));
        assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 6, hash: hash32(0xf0f0) });
        assert.equal((await store.reader.getChainStatus('eth'))?.indexed, 6);
        assert.deepEqual(
          (await store.writer.getBlockRefs('eth', 0, 100)).map((r) => r.number),
          [1, 2, 3, 4, 5, 6],
        );
        await assert.rejects(store.writer.applyBatch(batch({ from: 10, to: 10 })));
        await store.writer.applyBatch(batch({ from: 7, to: 7, transfers: moves(T1, 7, [[H1, H3, 2n]]) }));
        assert.equal(await store.reader.getBalance('eth', T1, H3), 2n);
        assert.equal(await store.reader.getBalance('eth', T1, H2), 0n);
        assert.equal((await store.reader.getToken('eth', T1))?.transferCount, 2);
      }));

    test('a rollback above the checkpoint is rejected and changes nothing', () =>
      withStore(async (store) => {
        await assert.rejects(store.writer.rollback('eth', 3, null));
        await store.writer.applyBatch(
          batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        await assert.rejects(store.writer.rollback('eth', 6, null));
        assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 5, hash: blockHash(5) });
        await store.writer.rollback('eth', 5, blockHash(5));
        assert.equal((await store.reader.getToken('eth', T1))?.transferCount, 1);
      }));
  });
}
