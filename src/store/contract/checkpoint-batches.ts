/**
 * The store contract suite, batches that add no block (`IndexBatch.toBlock` = `fromBlock - 1`):
 * balance changes at the checkpoint they continue, as reconcile mode writes its corrections
 * (indexer/reconcile.ts). They move balances, holder counts and lists like any balance change,
 * leave the checkpoint where it is, are taken off by a rollback below their block (and kept by one
 * to it), and are refused, changing nothing, unless they continue the checkpoint and carry balance
 * changes at it alone. The reads reconcile makes through the writer answer as the reader's do.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { batch, blockHash, blockRefs, moves } from '../testing/batches.js';
import type { BalanceChange, IndexBatch, Store } from '../types.js';
import { type ContractContext, H1, H2, H3, T1 } from './fixtures.js';

/** Reconcile's log indexes (indexer/reconcile.ts): far above any log's. */
const BASE = 2_000_000_000;

const correction = (block: number, k: number, holder: string, amount: bigint): BalanceChange => ({
  token: T1,
  blockNumber: block,
  logIndex: BASE + k,
  holder,
  amount,
});

/** A batch that adds no block: `changes` at `checkpoint`, which it continues. */
function atCheckpoint(checkpoint: number, changes: BalanceChange[]): IndexBatch {
  return {
    chain: 'eth',
    fromBlock: checkpoint + 1,
    continues: checkpoint,
    toBlock: checkpoint,
    toBlockHash: blockHash(checkpoint),
    transfers: [],
    balanceChanges: changes,
    tokens: [],
    blocks: [],
    head: checkpoint + 5,
    pruneBlocksBelow: 0,
  };
}

async function balancesOf(store: Store): Promise<bigint[]> {
  return Promise.all([H1, H2, H3].map((h) => store.reader.getBalance('eth', T1, h)));
}

export function runCheckpointBatchCases({ withStore }: ContractContext): void {
  describe('batches that add no block (balance changes at the checkpoint)', () => {
    test('they move balances and holders, keep the checkpoint, and a rollback below their block takes them off', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 10n]]) }),
        );
        await store.writer.applyBatch({
          ...batch({ from: 2, to: 2, transfers: moves(T1, 2, [[H1, H2, 4n]]) }),
          continues: 1,
        });
        // The node says H1 has 11 (not 6), H2 none (not 4), H3 2 (never named by a transfer).
        await store.writer.applyBatch(
          atCheckpoint(2, [correction(2, 0, H1, 5n), correction(2, 1, H2, -4n), correction(2, 2, H3, 2n)]),
        );
        assert.deepEqual(await balancesOf(store), [11n, 0n, 2n]);
        assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 2, hash: blockHash(2) });
        const token = await store.reader.getToken('eth', T1);
        assert.equal(token?.holderCount, 2);
        assert.equal(token?.transferCount, 2, 'corrections are no transfers');
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H1, balance: 11n },
          { address: H3, balance: 2n },
        ]);
        // A second one at the same checkpoint, with the next log indexes.
        await store.writer.applyBatch(atCheckpoint(2, [correction(2, 3, H3, 1n)]));
        assert.deepEqual(await balancesOf(store), [11n, 0n, 3n]);
        assert.deepEqual(
          (await store.writer.scanBalanceChanges('eth', T1, { blockNumber: 2, logIndex: BASE - 1 }, 10)).map(
            (c) => [c.blockNumber, c.logIndex, c.holder, c.amount],
          ),
          [
            [2, BASE, H1, 5n],
            [2, BASE + 1, H2, -4n],
            [2, BASE + 2, H3, 2n],
            [2, BASE + 3, H3, 1n],
          ],
        );
        // The reads reconcile makes through the writer answer as the reader's and the scans' do.
        assert.equal(await store.writer.getBalance('eth', T1, H1), 11n);
        assert.deepEqual(
          await store.writer.scanHoldings('eth', T1, null, 10),
          await store.scans.scanHoldings('eth', T1, null, 10),
        );
        assert.deepEqual(
          await store.writer.scanBalanceChanges('eth', T1, null, 10),
          await store.scans.scanBalanceChanges('eth', T1, null, 10),
        );

        // The next block goes on from the same checkpoint.
        await store.writer.applyBatch({
          ...batch({ from: 3, to: 3, transfers: moves(T1, 3, [[H1, H2, 1n]]) }),
          continues: 2,
        });
        assert.deepEqual(await balancesOf(store), [10n, 1n, 3n]);
        // A rollback to their block keeps them; one below it takes them off with the block.
        await store.writer.rollback('eth', 2, blockHash(2));
        assert.deepEqual(await balancesOf(store), [11n, 0n, 3n]);
        await store.writer.rollback('eth', 1, blockHash(1));
        assert.deepEqual(await balancesOf(store), [10n, 0n, 0n]);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 1);
        assert.deepEqual(await store.scans.scanBalanceChanges('eth', T1, null, 10), []);
      }));

    test('one that does not continue the checkpoint, or carries more than balance changes at it, is refused and changes nothing', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 10n]]) }),
        );
        await store.writer.applyBatch({
          ...batch({ from: 2, to: 2, transfers: moves(T1, 2, [[H1, H2, 4n]]) }),
          continues: 1,
        });
        const before = await balancesOf(store);
        const fix = [correction(1, 0, H3, 5n)];
        const refused: [string, IndexBatch][] = [
          // Read at block 1, but block 2 committed since: the stored side is not the one read.
          ['a checkpoint that moved', atCheckpoint(1, fix)],
          ['a change at another block', atCheckpoint(2, fix)],
          [
            'no checkpoint named',
            (({ continues: _, ...rest }) => rest)(atCheckpoint(2, [correction(2, 0, H3, 5n)])),
          ],
          ['a transfer', { ...atCheckpoint(2, []), transfers: moves(T1, 2, [[H1, H3, 1n]], 7) }],
          ['a block ref', { ...atCheckpoint(2, [correction(2, 0, H3, 5n)]), blocks: blockRefs(2, 2) }],
        ];
        for (const [what, wrong] of refused) {
          await assert.rejects(store.writer.applyBatch(wrong), /batch/, what);
          assert.deepEqual(await balancesOf(store), before, what);
          assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 2, hash: blockHash(2) }, what);
        }
        assert.deepEqual(await store.scans.scanBalanceChanges('eth', T1, null, 10), []);
      }));
  });
}
