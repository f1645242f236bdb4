/**
 * The store contract suite, persistence: data survives close and reopen, and a refresh of the
 * planner's statistics (after a bulk load) changes no answer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_UINT256 } from '../../internal/amount.js';
import { batch, blockRefs } from '../testing/batches.js';
import { applyAll, batchesOf, type ContractContext, randomHistory, snapshot } from './fixtures.js';

export function runPersistenceCases({ withStore }: ContractContext): void {
  describe('persistence', () => {
    test('data survives close and reopen', () =>
      withStore(async (store, context) => {
        if (context.reopen === undefined) return;
        const history = randomHistory(7, 12, 3, 4);
        await applyAll(
          store,
          batchesOf(history, [
            [1, 6],
            [7, 12],
          ]),
        );
        await store.writer.updateSupplies('eth', [
          {
            address: history.tokens[0]!,
            totalSupply: MAX_UINT256,
            cap: 1n,
            burnedBalance: 2n,
            atBlock: 12,
          },
        ]);
        await store.writer.setChainStatus('eth', { head: 99, lastError: 'slow node' });
        await store.keys.createApiKey({
          id: 'k',
          hash: 'f'.repeat(64),
          label: 'ci',
          createdAt: 1,
          revokedAt: null,
        });
        const before = await snapshot(store, 'eth', history.tokens, history.parties);
        const statusBefore = await store.reader.getChainStatus('eth');
        await store.close();

        const reopened = await context.reopen();
        assert.deepEqual(await snapshot(reopened, 'eth', history.tokens, history.parties), before);
        assert.deepEqual(await reopened.reader.getChainStatus('eth'), statusBefore);
        assert.deepEqual(await reopened.writer.getBlockRefs('eth', 0, 100), blockRefs(1, 12));
        assert.equal((await reopened.keys.listApiKeys()).length, 1);
        await reopened.writer.applyBatch(batch({ from: 13, to: 13 }));
        assert.equal((await reopened.writer.getCheckpoint('eth'))?.block, 13);
      }));

    test('refreshStatistics changes no answer, and writes go on after it', () =>
      withStore(async (store) => {
        const history = randomHistory(11, 12, 3, 4);
        await applyAll(store, batchesOf(history, [[1, 12]]));
        const before = await snapshot(store, 'eth', history.tokens, history.parties);
        await store.writer.refreshStatistics();
        assert.deepEqual(await snapshot(store, 'eth', history.tokens, history.parties), before);
        await store.writer.applyBatch(batch({ from: 13, to: 13 }));
        assert.equal((await store.writer.getCheckpoint('eth'))?.block, 13);
      }));
  });
}
