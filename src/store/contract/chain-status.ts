/**
 * The store contract suite, chain status (head, indexed block, last error) and chain activity.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batch, blockHash, moves, neoPart, tokenMetadata, transferRecord } from '../testing/batches.js';
import { type ContractContext, H1, H2, H3, T1, T2 } from './fixtures.js';

export function runChainStatusCases({ withStore }: ContractContext): void {
  describe('chain status', () => {
    test('head and error are recorded outside batches', () =>
      withStore(async (store) => {
        const before = Date.now();
        await store.writer.setChainStatus('eth', { head: 100 });
        const first = await store.reader.getChainStatus('eth');
        assert.deepEqual(
          { ...first, updatedAt: 0 },
          {
            chain: 'eth',
            head: 100,
            indexed: null,
            lastError: null,
            updatedAt: 0,
          },
        );
        assert.ok(first !== null && first.updatedAt >= before && first.updatedAt <= Date.now());
        await store.writer.setChainStatus('eth', { lastError: 'node unreachable' });
        assert.equal((await store.reader.getChainStatus('eth'))?.head, 100);
        assert.equal((await store.reader.getChainStatus('eth'))?.lastError, 'node unreachable');
        await store.writer.setChainStatus('eth', { head: 101 });
        assert.equal((await store.reader.getChainStatus('eth'))?.lastError, 'node unreachable');
        assert.equal((await store.reader.getChainStatus('eth'))?.head, 101);
        await store.writer.setChainStatus('eth', { lastError: null });
        assert.equal((await store.reader.getChainStatus('eth'))?.lastError, null);
        assert.equal(await store.writer.getCheckpoint('eth'), null);
        await store.writer.setChainStatus('bsc', { lastError: 'boom' });
        assert.deepEqual(
          { ...(await store.reader.getChainStatus('bsc')), updatedAt: 0 },
          {
            chain: 'bsc',
            head: 0,
            indexed: null,
            lastError: 'boom',
            updatedAt: 0,
          },
        );
      }));

    test('a batch sets the indexed block and the head; the head then moves by the given value', () =>
      withStore(async (store) => {
        await store.writer.setChainStatus('eth', { head: 5, lastError: 'x' });
        await store.writer.applyBatch(batch({ from: 1, to: 10, head: 50 }));
        const status = await store.reader.getChainStatus('eth');
        assert.equal(status?.indexed, 10);
        assert.equal(status?.head, 50);
        assert.equal(status?.lastError, 'x');
        await store.writer.setChainStatus('eth', { head: 60 });
        assert.equal((await store.reader.getChainStatus('eth'))?.head, 60);
        assert.equal((await store.reader.getChainStatus('eth'))?.indexed, 10);
      }));

    test('every chain is listed, by name', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(batch({ chain: 'eth', from: 1, to: 3 }));
        await store.writer.setChainStatus('bsc', { head: 9 });
        const statuses = await store.reader.listChainStatuses();
        assert.deepEqual(
          statuses.map((s) => [s.chain, s.head, s.indexed]),
          [
            ['bsc', 9, null],
            ['eth', 8, 3],
          ],
        );
        assert.deepEqual(statuses[1], await store.reader.getChainStatus('eth'));
      }));
  });

  describe('chain activity', () => {
    /** `n` transfers of T1 in `block`, H1 → H2, log indexes 0..n-1. */
    const burst = (block: number, n: number) =>
      moves(
        T1,
        block,
        Array.from({ length: n }, (_, i): [string, string, bigint] => [H1, H2, BigInt(i + 1)]),
      );

    test('counts every transfer of every batch and keeps the newest 16 of the chain', () =>
      withStore(async (store) => {
        assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
        assert.equal(await store.reader.getChainActivity('eth'), null);
        const first = [...burst(2, 3), ...moves(T2, 3, [[H2, H3, 5n]])];
        await store.writer.applyBatch(batch({ from: 1, to: 3, transfers: first }));
        const afterFirst = await store.reader.getChainActivity('eth');
        assert.equal(afterFirst?.chain, 'eth');
        assert.equal(afterFirst?.transfers, 4);
        assert.deepEqual(afterFirst?.recent, [...first].reverse());

        // More than are kept: the newest 16, newest first (block, then log index, descending).
        const second = [...burst(4, 10), ...burst(5, 12)];
        await store.writer.applyBatch(batch({ from: 4, to: 5, transfers: second }));
        const afterSecond = await store.reader.getChainActivity('eth');
        assert.equal(afterSecond?.transfers, 26);
        assert.deepEqual(afterSecond?.recent, second.slice(-16).reverse());

        // A batch without transfers keeps the list; other chains are separate.
        await store.writer.applyBatch(batch({ from: 6, to: 8 }));
        await store.writer.applyBatch(batch({ chain: 'bsc', from: 1, to: 1, transfers: burst(1, 2) }));
        assert.deepEqual(await store.reader.getChainActivity('eth'), afterSecond);
        assert.equal((await store.reader.getChainActivity('bsc'))?.transfers, 2);

        // Fewer than 16: the batch's own, then the newest from before it.
        const third = moves(T2, 9, [
          [H1, H3, 1n],
          [H3, H1, 1n],
        ]);
        await store.writer.applyBatch(batch({ from: 9, to: 9, transfers: third }));
        const afterThird = await store.reader.getChainActivity('eth');
        assert.equal(afterThird?.transfers, 28);
        assert.deepEqual(afterThird?.recent, [...second.slice(-14), ...third].reverse());
      }));

    test('a rollback takes its removed transfers off the count and empties the newest', () =>
      withStore(async (store) => {
        assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
        await store.writer.applyBatch(batch({ from: 1, to: 3, transfers: [...burst(2, 3), ...burst(3, 4)] }));
        const result = await store.writer.rollback('eth', 2, blockHash(2));
        assert.equal(result.removedTransfers, 4);
        assert.deepEqual(await store.reader.getChainActivity('eth'), {
          chain: 'eth',
          transfers: 3,
          recent: [],
        });
        await store.writer.applyBatch(batch({ from: 3, to: 3, transfers: burst(3, 1) }));
        assert.deepEqual(await store.reader.getChainActivity('eth'), {
          chain: 'eth',
          transfers: 4,
          recent: burst(3, 1),
        });
      }));

    test('NEO asset transfers count and show like any other', () =>
      withStore(async (store) => {
        assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
        const asset = `0x${'ab'.repeat(32)}`;
        const nep5 = transferRecord({
          token: T1,
          blockNumber: 2,
          logIndex: 0,
          from: 'AHolderOne',
          to: 'AHolderTwo',
          value: 7n,
        });
        const assetMove = { ...nep5, token: asset, logIndex: 1, value: 3n };
        await store.writer.applyBatch({
          ...batch({ chain: 'neo', from: 1, to: 2, transfers: [nep5] }),
          tokens: [tokenMetadata(T1), { address: asset, name: 'NEO', symbol: 'NEO', decimals: 0 }],
          neo: neoPart({ assetTransfers: [assetMove] }),
        });
        assert.deepEqual(await store.reader.getChainActivity('neo'), {
          chain: 'neo',
          transfers: 2,
          recent: [assetMove, nep5],
        });
      }));

    test('a chain known only by its status has no transfers yet', () =>
      withStore(async (store) => {
        assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
        await store.writer.setChainStatus('eth', { head: 7 });
        assert.deepEqual(await store.reader.getChainActivity('eth'), {
          chain: 'eth',
          transfers: 0,
          recent: [],
        });
      }));

    test('the storage size is a positive whole number of bytes', () =>
      withStore(async (store) => {
        assert.ok(store.reader.storageBytes, 'every backend tells its storage size');
        await store.writer.applyBatch(batch({ from: 1, to: 2, transfers: burst(2, 50) }));
        const bytes = await store.reader.storageBytes();
        assert.ok(Number.isSafeInteger(bytes) && bytes > 0, `storageBytes() = ${bytes}`);
      }));
  });
}
