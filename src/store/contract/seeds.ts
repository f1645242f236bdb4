/**
 * The store contract suite, starting balances of a late start (`IndexBatch.seeds`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_UINT256 } from '../../internal/amount.js';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { batch, blockHash, holder, moves, seeded, transferRecord } from '../testing/batches.js';
import { type ContractContext, H1, H2, H3, T1, T2 } from './fixtures.js';

export function runSeedCases({ withStore }: ContractContext): void {
  describe('starting balances of a late start', () => {
    test("a seed is the holder's balance before the batch's transfers, and counts as a holder", () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          seeded({ from: 10, to: 12, transfers: moves(T1, 11, [[H1, H2, 30n]]) }, 9, [
            [T1, H1, 100n],
            [T1, H2, 0n],
          ]),
        );
        assert.equal(await store.reader.getBalance('eth', T1, H1), 70n);
        assert.equal(await store.reader.getBalance('eth', T1, H2), 30n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
        const status = await store.reader.getChainStatus('eth');
        assert.equal(status?.seedBlock, 9);
        assert.equal(status?.holdersPartial, undefined);
        assert.deepEqual(
          await store.writer.seededHolders('eth', [
            { token: T1, holder: H1 },
            { token: T1, holder: H3 },
            { token: T2, holder: H1 },
            { token: T1, holder: H2 },
          ]),
          [true, false, false, true],
        );
        // Zero seeds are recorded too: they say the holder was seen.
        assert.deepEqual(await store.scans.scanSeedBalances('eth', T1, null, 10), [
          { token: T1, holder: H1, amount: 100n },
          { token: T1, holder: H2, amount: 0n },
        ]);
      }));

    test('a holder is seeded once, also after its balance went to zero and back', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          seeded({ from: 10, to: 10, transfers: moves(T1, 10, [[H1, H2, 100n]]) }, 9, [
            [T1, H1, 100n],
            [T1, H2, 0n],
          ]),
        );
        assert.equal(await store.reader.getBalance('eth', T1, H1), 0n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 1);
        // The indexer may read a seed again (a range fetched while the first was committing).
        await store.writer.applyBatch(
          seeded({ from: 11, to: 11, transfers: moves(T1, 11, [[H2, H1, 40n]]) }, 9, [
            [T1, H2, 0n],
            [T1, H1, 100n],
            [T1, H1, 100n],
          ]),
        );
        assert.equal(await store.reader.getBalance('eth', T1, H1), 40n);
        assert.equal(await store.reader.getBalance('eth', T1, H2), 60n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
        // Twice in one batch counts once too.
        await store.writer.applyBatch(
          seeded({ from: 12, to: 12, transfers: moves(T1, 12, [[H2, H3, 1n]]) }, 9, [
            [T1, H3, 5n],
            [T1, H3, 5n],
          ]),
        );
        assert.equal(await store.reader.getBalance('eth', T1, H3), 6n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 3);
      }));

    test('seeds of several tokens, uint256-sized, in batches larger than one statement', () =>
      withStore(async (store) => {
        const holders = Array.from({ length: 250 }, (_, i) => holder(100 + i));
        const transfers = [
          ...holders.map((h, i) =>
            transferRecord({ token: T1, blockNumber: 21, logIndex: i, from: h, to: H1, value: 1n }),
          ),
          ...moves(T2, 22, [[ZERO_ADDRESS, H1, 1n]]),
        ];
        await store.writer.applyBatch(
          seeded({ from: 21, to: 22, transfers }, 20, [
            ...holders.map((h, i): [string, string, bigint] => [T1, h, BigInt(i + 1)]),
            [T1, H1, MAX_UINT256],
            [T2, H1, 0n],
          ]),
        );
        assert.equal(await store.reader.getBalance('eth', T1, holder(100)), 0n);
        assert.equal(await store.reader.getBalance('eth', T1, holder(349)), 249n);
        assert.equal(await store.reader.getBalance('eth', T1, H1), MAX_UINT256 + 250n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 250);
        assert.equal(await store.reader.getBalance('eth', T2, H1), 1n);
        const page = await store.scans.scanSeedBalances('eth', T1, null, 200);
        const rest = await store.scans.scanSeedBalances('eth', T1, page[page.length - 1]!.holder, 200);
        assert.equal(page.length + rest.length, 251);
        assert.equal(new Set([...page, ...rest].map((s) => s.holder)).size, 251);
        assert.deepEqual(
          (
            await store.writer.seededHolders(
              'eth',
              holders.map((h) => ({ token: T1, holder: h })),
            )
          ).every(Boolean),
          true,
        );
      }));

    test('a rollback keeps starting balances; a token that disappears takes its seeds along', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          seeded({ from: 10, to: 11, transfers: moves(T1, 11, [[H1, H2, 10n]]) }, 9, [
            [T1, H1, 50n],
            [T1, H2, 0n],
          ]),
        );
        await store.writer.applyBatch(
          seeded(
            {
              from: 12,
              to: 14,
              transfers: [...moves(T1, 12, [[H3, H1, 5n]]), ...moves(T2, 13, [[H3, H2, 7n]])],
            },
            9,
            [
              [T1, H3, 20n],
              [T2, H3, 9n],
              [T2, H2, 0n],
            ],
          ),
        );
        assert.equal(await store.reader.getBalance('eth', T1, H3), 15n);
        await store.writer.rollback('eth', 11, blockHash(11));
        // H3 held 20 before the start, whatever the dropped blocks did.
        assert.equal(await store.reader.getBalance('eth', T1, H3), 20n);
        assert.equal(await store.reader.getBalance('eth', T1, H1), 40n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 3);
        assert.equal(await store.reader.getToken('eth', T2), null);
        assert.deepEqual(
          await store.writer.seededHolders('eth', [
            { token: T1, holder: H3 },
            { token: T2, holder: H3 },
          ]),
          [true, false],
        );
        // Seen again, T2's holders are seeded again; T1's seeded holder is not.
        await store.writer.applyBatch(
          seeded(
            {
              from: 12,
              to: 12,
              transfers: [...moves(T2, 12, [[H3, H1, 1n]]), ...moves(T1, 12, [[H3, H1, 1n]], 1)],
            },
            9,
            [
              [T2, H3, 9n],
              [T2, H1, 0n],
              [T1, H3, 20n],
            ],
          ),
        );
        assert.equal(await store.reader.getBalance('eth', T2, H3), 8n);
        assert.equal((await store.reader.getToken('eth', T2))?.holderCount, 2);
        assert.equal(await store.reader.getBalance('eth', T1, H3), 19n);
      }));

    test("the node without the seed block's state marks the chain partial for good", () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          seeded({ from: 10, to: 10, transfers: moves(T1, 10, [[H1, H2, 1n]]) }, 9, [[T1, H1, 5n]]),
        );
        await store.writer.applyBatch(
          seeded({ from: 11, to: 11, transfers: moves(T1, 11, [[H3, H2, 1n]]) }, 9, [], true),
        );
        await store.writer.applyBatch(seeded({ from: 12, to: 12 }, 9, []));
        const status = await store.reader.getChainStatus('eth');
        assert.equal(status?.holdersPartial, true);
        assert.equal(status?.seedBlock, 9);
        assert.deepEqual((await store.reader.listChainStatuses())[0], status);
        assert.equal(await store.reader.getBalance('eth', T1, H3), -1n);
        // Partial from the first batch on: the seed block is recorded all the same.
        await store.writer.applyBatch(seeded({ chain: 'bsc', from: 5, to: 6 }, 4, [], true));
        assert.deepEqual(
          [
            (await store.reader.getChainStatus('bsc'))?.seedBlock,
            (await store.reader.getChainStatus('bsc'))?.holdersPartial,
          ],
          [4, true],
        );
      }));

    test('seeds that do not fit the chain are rejected and change nothing', () =>
      withStore(async (store) => {
        const one = moves(T1, 10, [[H1, H2, 1n]]);
        // The first batch seeds at the block before it.
        await assert.rejects(store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 8, [])));
        // Only tokens the batch moves, and only holders.
        await assert.rejects(
          store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 9, [[T2, H1, 1n]])),
        );
        await assert.rejects(
          store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 9, [[T1, ZERO_ADDRESS, 1n]])),
        );
        await assert.rejects(
          store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 9, [[T1, H1, -1n]])),
        );
        assert.equal(await store.writer.getCheckpoint('eth'), null);
        assert.equal(await store.reader.getChainStatus('eth'), null);
        assert.equal(await store.reader.getToken('eth', T1), null);
        await store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 9, [[T1, H1, 3n]]));
        // Later batches seed at the same block.
        await assert.rejects(
          store.writer.applyBatch(
            seeded({ from: 11, to: 11, transfers: moves(T1, 11, [[H3, H2, 1n]]) }, 10, [[T1, H3, 1n]]),
          ),
        );
        assert.deepEqual(await store.writer.seededHolders('eth', [{ token: T1, holder: H3 }]), [false]);
        assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
        assert.equal((await store.writer.getCheckpoint('eth'))?.block, 10);
        // A chain indexed without seeds cannot start seeding.
        await store.writer.applyBatch(batch({ chain: 'bsc', from: 10, to: 10, transfers: one }));
        await assert.rejects(
          store.writer.applyBatch(
            seeded({ chain: 'bsc', from: 11, to: 11, transfers: moves(T1, 11, [[H3, H2, 1n]]) }, 10, []),
          ),
        );
        assert.equal((await store.reader.getChainStatus('bsc'))?.seedBlock, undefined);
      }));

    test('seeds survive close and reopen', () =>
      withStore(async (store, context) => {
        if (context.reopen === undefined) return;
        await store.writer.applyBatch(
          seeded({ from: 10, to: 10, transfers: moves(T1, 10, [[H1, H2, 1n]]) }, 9, [[T1, H1, 5n]], true),
        );
        await store.close();
        const reopened = await context.reopen();
        assert.deepEqual(await reopened.writer.seededHolders('eth', [{ token: T1, holder: H1 }]), [true]);
        assert.equal((await reopened.reader.getChainStatus('eth'))?.holdersPartial, true);
        assert.equal(await reopened.reader.getBalance('eth', T1, H1), 4n);
      }));
  });
}
