/**
 * The store contract suite, applying batches: an empty store, balances, holders and counts,
 * checkpoints, rejected batches, and block refs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_UINT256 } from '../../internal/amount.js';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { MAX_TOKEN_NAME_CHARS, MAX_TOKEN_SYMBOL_CHARS } from '../../internal/token-text.js';
import { batch, blockHash, blockRefs, moves, tokenMetadata, transferRecord } from '../testing/batches.js';
import { type ContractContext, H1, H2, H3, snapshot, T1, T2 } from './fixtures.js';

export function runBatchCases({ withStore }: ContractContext): void {
  describe('empty store', () => {
    test('answers nothing before the first batch', () =>
      withStore(async (store) => {
        assert.equal(await store.writer.getCheckpoint('eth'), null);
        assert.equal(await store.reader.getChainStatus('eth'), null);
        assert.deepEqual(await store.reader.listChainStatuses(), []);
        assert.equal(await store.reader.getToken('eth', T1), null);
        assert.deepEqual(await store.reader.listTransfers('eth', T1, 0, 10), []);
        assert.deepEqual(await store.reader.listTokens('eth', 0, 10), { total: 0, tokens: [] });
        assert.equal(await store.reader.getBalance('eth', T1, H1), 0n);
        assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 100), []);
        assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 100, 10), []);
        assert.deepEqual(await store.keys.listApiKeys(), []);
        assert.equal(typeof store.kind, 'string');
      }));
  });

  describe('applying batches', () => {
    test('a new token gets its metadata, first block and counts', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 10,
            to: 11,
            transfers: [...moves(T1, 10, [[ZERO_ADDRESS, H1, 1000n]]), ...moves(T1, 11, [[H1, H2, 300n]])],
            tokens: [{ address: T1, name: 'Tether USD', symbol: 'USDT', decimals: 6 }],
          }),
        );
        assert.deepEqual(await store.reader.getToken('eth', T1), {
          chain: 'eth',
          address: T1,
          name: 'Tether USD',
          symbol: 'USDT',
          decimals: 6,
          totalSupply: null,
          cap: null,
          burnedBalance: null,
          holderCount: 2,
          transferCount: 2,
          firstBlock: 10,
          icon: '',
        });
        assert.equal(await store.reader.getBalance('eth', T1, H1), 700n);
        assert.equal(await store.reader.getBalance('eth', T1, H2), 300n);
        assert.equal(await store.reader.getBalance('eth', T1, ZERO_ADDRESS), -1000n);
        assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
      }));

    test('the name and symbol of a new token are stored capped and clean, whatever the batch carries', () =>
      withStore(async (store) => {
        // A writer that did not clean them (an older indexer, a hand-made batch): the store does.
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 1,
            transfers: [...moves(T1, 1, [[ZERO_ADDRESS, H1, 5n]]), ...moves(T2, 1, [[ZERO_ADDRESS, H1, 5n]])],
            tokens: [
              {
                address: T1,
                name: `\u202e${'𝔸'.repeat(200_000)}`,
                symbol: '\u001b[2JEVIL\u0000',
                decimals: 6,
              },
              { address: T2, name: '\u0000\u0000', symbol: ` ${'S'.repeat(100)}`, decimals: 0 },
            ],
          }),
        );
        const t1 = await store.reader.getToken('eth', T1);
        assert.ok(t1 !== null && t1.name.length < 1000, 'the name is capped');
        assert.deepEqual([t1.name, t1.symbol], ['𝔸'.repeat(MAX_TOKEN_NAME_CHARS), '[2JEVIL']);
        const t2 = await store.reader.getToken('eth', T2);
        assert.deepEqual([t2?.name, t2?.symbol], ['', 'S'.repeat(MAX_TOKEN_SYMBOL_CHARS)]);
      }));

    test('a known token keeps the metadata it was first seen with', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        await store.writer.applyBatch(
          batch({
            from: 2,
            to: 2,
            transfers: moves(T1, 2, [[H1, H2, 1n]]),
            tokens: [{ address: T1, name: 'Other', symbol: 'OTH', decimals: 2 }],
          }),
        );
        const token = await store.reader.getToken('eth', T1);
        assert.equal(token?.name, tokenMetadata(T1).name);
        assert.equal(token?.decimals, 18);
        assert.equal(token?.firstBlock, 1);
      }));

    test('the checkpoint follows each batch, empty batches too', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 100, to: 104, transfers: moves(T1, 102, [[ZERO_ADDRESS, H1, 5n]]) }),
        );
        assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 104, hash: blockHash(104) });
        await store.writer.applyBatch({ ...batch({ from: 105, to: 110 }), toBlockHash: null });
        assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 110, hash: null });
        assert.equal(await store.writer.getCheckpoint('bsc'), null);
      }));

    test('uint256 extremes round-trip exactly', () =>
      withStore(async (store) => {
        const values = [
          0n,
          1n,
          2n ** 53n - 1n,
          2n ** 53n,
          2n ** 53n + 1n,
          2n ** 64n,
          2n ** 255n,
          2n ** 255n - 1n,
        ];
        const sent = values.reduce((a, b) => a + b, 0n);
        const transfers = [
          ...moves(T1, 1, [[ZERO_ADDRESS, H1, MAX_UINT256]]),
          ...moves(
            T1,
            2,
            values.map((v): [string, string, bigint] => [H1, H2, v]),
          ),
        ];
        await store.writer.applyBatch(batch({ from: 1, to: 2, transfers }));
        const listed = await store.reader.listTransfers('eth', T1, 0, 50);
        assert.deepEqual(listed, [...transfers].reverse());
        assert.equal(await store.reader.getBalance('eth', T1, ZERO_ADDRESS), -MAX_UINT256);
        assert.equal(await store.reader.getBalance('eth', T1, H1), MAX_UINT256 - sent);
        assert.equal(await store.reader.getBalance('eth', T1, H2), sent);
        await store.writer.updateSupplies('eth', [
          {
            address: T1,
            totalSupply: MAX_UINT256,
            cap: MAX_UINT256 - 1n,
            burnedBalance: 2n ** 200n,
            atBlock: 2,
          },
        ]);
        const token = await store.reader.getToken('eth', T1);
        assert.equal(token?.totalSupply, MAX_UINT256);
        assert.equal(token?.cap, MAX_UINT256 - 1n);
        assert.equal(token?.burnedBalance, 2n ** 200n);
      }));

    test('a negative balance is kept exactly and is not a holder', () =>
      withStore(async (store) => {
        // History that starts late: H1 sends what it received before the first indexed block.
        const big = 3n * 2n ** 200n;
        await store.writer.applyBatch(batch({ from: 1, to: 1, transfers: moves(T1, 1, [[H1, H2, big]]) }));
        assert.equal(await store.reader.getBalance('eth', T1, H1), -big);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 1);
        await store.writer.applyBatch(
          batch({ from: 2, to: 2, transfers: moves(T1, 2, [[H3, H1, big + 7n]]) }),
        );
        assert.equal(await store.reader.getBalance('eth', T1, H1), 7n);
        assert.equal(await store.reader.getBalance('eth', T1, H3), -(big + 7n));
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
      }));

    test('the holder count follows balances to zero and back', () =>
      withStore(async (store) => {
        const steps: [[string, string, bigint][], number][] = [
          [[[ZERO_ADDRESS, H1, 10n]], 1],
          [[[H1, H2, 10n]], 1],
          [[[H2, H1, 4n]], 2],
          [[[H1, H2, 4n]], 1],
          // Within one batch: H3 receives everything and gives it all back.
          [
            [
              [H2, H3, 10n],
              [H3, H2, 10n],
            ],
            1,
          ],
          [[[H2, ZERO_ADDRESS, 10n]], 0],
          [[[ZERO_ADDRESS, H2, 1n]], 1],
        ];
        let block = 1;
        for (const [list, holders] of steps) {
          await store.writer.applyBatch(batch({ from: block, to: block, transfers: moves(T1, block, list) }));
          assert.equal(
            (await store.reader.getToken('eth', T1))?.holderCount,
            holders,
            `after block ${block}`,
          );
          block++;
        }
        assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
        assert.equal(await store.reader.getBalance('eth', T1, H2), 1n);
        assert.equal(await store.reader.getBalance('eth', T1, H1), 0n);
      }));

    test('the zero address is never a holder, 0x…dead is', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 1,
            transfers: moves(T1, 1, [
              [H1, ZERO_ADDRESS, 5n],
              [H2, DEAD_ADDRESS, 6n],
            ]),
          }),
        );
        assert.equal(await store.reader.getBalance('eth', T1, ZERO_ADDRESS), 5n);
        assert.equal(await store.reader.getBalance('eth', T1, DEAD_ADDRESS), 6n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 1);
      }));

    test('every transfer counts, zero-value and self transfers too', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 1,
            transfers: [
              ...moves(T1, 1, [
                [ZERO_ADDRESS, H1, 10n],
                [H1, H1, 4n],
                [H1, H2, 0n],
              ]),
              ...moves(T2, 1, [[ZERO_ADDRESS, H1, 1n]], 3),
            ],
          }),
        );
        await store.writer.applyBatch(batch({ from: 2, to: 3, transfers: moves(T1, 3, [[H1, H2, 1n]]) }));
        assert.equal((await store.reader.getToken('eth', T1))?.transferCount, 4);
        assert.equal((await store.reader.getToken('eth', T2))?.transferCount, 1);
        assert.equal(await store.reader.getBalance('eth', T1, H1), 9n);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
      }));

    test('chains are separate', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ chain: 'eth', from: 1, to: 1, transfers: moves(T1, 1, [[H1, H2, 5n]]) }),
        );
        await store.writer.applyBatch(
          batch({ chain: 'bsc', from: 50, to: 50, transfers: moves(T1, 50, [[H1, H3, 7n]]) }),
        );
        assert.equal(await store.reader.getBalance('eth', T1, H2), 5n);
        assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
        assert.equal(await store.reader.getBalance('bsc', T1, H3), 7n);
        assert.equal((await store.reader.getToken('bsc', T1))?.firstBlock, 50);
        assert.equal((await store.reader.listTransfers('eth', T1, 0, 10)).length, 1);
        assert.equal((await store.reader.listTokens('bsc', 0, 10)).total, 1);
        assert.equal(await store.reader.getToken('kcs', T1), null);
      }));

    test('NEO-style addresses, empty parties and any other strings round-trip', () =>
      withStore(async (store) => {
        const token = '0xceab719b8baa2310f232ee0d277c061704541cfb';
        const alice = 'AK2nJJpJr6o664CWJKi1QRXjqeic2zRp8y';
        const bob = 'AQzRMe3zyGS8W177xLJfewRRQZY2kddMun';
        const odd = '0xABCdef';
        const transfers = [
          transferRecord({ token, blockNumber: 7, logIndex: 0, from: '', to: alice, value: 100n }),
          transferRecord({ token, blockNumber: 7, logIndex: 1, from: alice, to: bob, value: 40n }),
          transferRecord({ token, blockNumber: 8, logIndex: 0, from: bob, to: '', value: 15n }),
          {
            ...transferRecord({ token, blockNumber: 8, logIndex: 1, from: alice, to: odd, value: 1n }),
            txHash: '0xABCDEF01',
          },
        ];
        await store.writer.applyBatch(batch({ chain: 'neo', from: 7, to: 8, transfers }));
        assert.deepEqual(await store.reader.listTransfers('neo', token, 0, 10), [...transfers].reverse());
        assert.equal(await store.reader.getBalance('neo', token, alice), 59n);
        assert.equal(await store.reader.getBalance('neo', token, bob), 25n);
        assert.equal(await store.reader.getBalance('neo', token, ''), -85n);
        assert.equal(await store.reader.getBalance('neo', token, odd), 1n);
        assert.equal(await store.reader.getBalance('neo', token, odd.toLowerCase()), 0n);
        // alice, bob and the odd address; '' (mints and burns) is never a holder.
        assert.equal((await store.reader.getToken('neo', token))?.holderCount, 3);
        await store.writer.applyBatch(
          batch({ chain: 'neo', from: 9, to: 9, transfers: moves(token, 9, [[bob, '', 200n]]) }),
        );
        assert.equal(await store.reader.getBalance('neo', token, ''), 115n);
        assert.equal((await store.reader.getToken('neo', token))?.holderCount, 2);
      }));

    test('a batch that does not continue the checkpoint is rejected and changes nothing', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 10, transfers: moves(T1, 5, [[ZERO_ADDRESS, H1, 9n]]) }),
        );
        const parties = [ZERO_ADDRESS, H1, H2];
        const before = await snapshot(store, 'eth', [T1, T2], parties);
        const statusBefore = await store.reader.getChainStatus('eth');
        const refsBefore = await store.writer.getBlockRefs('eth', 0, 100);
        for (const from of [12, 10, 1]) {
          const bad = batch({
            from,
            to: from + 3,
            transfers: [...moves(T1, from, [[H1, H2, 1n]]), ...moves(T2, from + 1, [[ZERO_ADDRESS, H2, 1n]])],
            head: 99,
          });
          await assert.rejects(store.writer.applyBatch(bad), `batch from ${from}`);
        }
        assert.deepEqual(await snapshot(store, 'eth', [T1, T2], parties), before);
        assert.deepEqual(await store.reader.getChainStatus('eth'), statusBefore);
        assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 100), refsBefore);
        // The right continuation is still accepted.
        await store.writer.applyBatch(batch({ from: 11, to: 11, transfers: moves(T1, 11, [[H1, H2, 1n]]) }));
        assert.equal(await store.reader.getBalance('eth', T1, H2), 1n);
      }));

    test('a batch that names the checkpoint it continues is refused unless the store holds exactly that one', () =>
      withStore(async (store) => {
        // Behind a first batch that failed (a full disk, say), the next one must not commit over
        // the gap, although the chain has no checkpoint to compare its first block with.
        const second = {
          ...batch({ from: 11, to: 20, transfers: moves(T1, 12, [[ZERO_ADDRESS, H1, 5n]]) }),
          continues: 10,
        };
        await assert.rejects(
          store.writer.applyBatch(second),
          /continues block 10, but the chain has no checkpoint yet/,
        );
        assert.equal(await store.writer.getCheckpoint('eth'), null);
        assert.equal(await store.reader.getToken('eth', T1), null);
        const first = {
          ...batch({ from: 1, to: 10, transfers: moves(T1, 5, [[ZERO_ADDRESS, H1, 9n]]) }),
          continues: null,
        };
        await store.writer.applyBatch(first);
        // A first batch again, once the chain has a checkpoint: refused.
        await assert.rejects(
          store.writer.applyBatch({ ...batch({ from: 11, to: 12 }), continues: null }),
          /continues the first batch of the chain, but the checkpoint is block 10/,
        );
        await store.writer.applyBatch(second);
        assert.equal((await store.writer.getCheckpoint('eth'))?.block, 20);
        assert.equal(await store.reader.getBalance('eth', T1, H1), 14n);
      }));
  });

  describe('block refs', () => {
    test('come back in a range, ascending, and are pruned below the window', () =>
      withStore(async (store) => {
        await store.writer.applyBatch({
          ...batch({ from: 1, to: 10 }),
          blocks: [...blockRefs(1, 10)].reverse(),
        });
        assert.deepEqual(await store.writer.getBlockRefs('eth', 3, 5), blockRefs(3, 5));
        assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 1000), blockRefs(1, 10));
        await store.writer.applyBatch(batch({ from: 11, to: 12, prune: 8 }));
        assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 1000), blockRefs(8, 12));
        assert.deepEqual(await store.writer.getBlockRefs('bsc', 0, 1000), []);
      }));
  });
}
