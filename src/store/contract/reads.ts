/**
 * The store contract suite, reads: the transfer list and its paging, whole-history scans, and
 * the token list and its order.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { seededRandom as random } from '../../internal/random.js';
import { batch, holder, moves, transferRecord } from '../testing/batches.js';
import type { TransferRecord } from '../types.js';
import { type ContractContext, H1, H2, H3, T1, T2, T3, T4, T5 } from './fixtures.js';

export function runReadCases({ withStore }: ContractContext): void {
  describe('transfer list', () => {
    const transfers = [
      ...moves(T1, 5, [
        [ZERO_ADDRESS, H1, 100n],
        [H1, H2, 1n],
        [H1, H3, 2n],
      ]),
      ...moves(T2, 5, [[ZERO_ADDRESS, H1, 1n]], 3),
      transferRecord({ token: T1, blockNumber: 6, logIndex: 9, from: H2, to: H3, value: 1n, txIndex: 4 }),
      ...moves(T1, 7, [
        [H3, H1, 1n],
        [H1, H2, 5n],
      ]),
      transferRecord({ token: T1, blockNumber: 7, logIndex: 3, from: H2, to: H1, value: 2n, txIndex: 0 }),
    ];
    const newestFirst = transfers
      .filter((t) => t.token === T1)
      .sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);

    test('is newest first: block, then log index, descending', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(batch({ from: 5, to: 7, transfers }));
        const listed = await store.reader.listTransfers('eth', T1, 0, 50);
        assert.deepEqual(listed, newestFirst);
        assert.deepEqual(
          listed.map((t) => [t.blockNumber, t.logIndex]),
          [
            [7, 3],
            [7, 1],
            [7, 0],
            [6, 9],
            [5, 2],
            [5, 1],
            [5, 0],
          ],
        );
      }));

    test('pages with offset and limit, also across batches', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 5, to: 5, transfers: transfers.filter((t) => t.blockNumber === 5) }),
        );
        await store.writer.applyBatch(
          batch({ from: 6, to: 7, transfers: transfers.filter((t) => t.blockNumber > 5) }),
        );
        const pages = [];
        for (let offset = 0; offset < 7; offset += 2)
          pages.push(...(await store.reader.listTransfers('eth', T1, offset, 2)));
        assert.deepEqual(pages, newestFirst);
        assert.deepEqual(await store.reader.listTransfers('eth', T1, 3, 3), newestFirst.slice(3, 6));
      }));

    test('page past the end returns an empty list', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(batch({ from: 5, to: 7, transfers }));
        assert.deepEqual(await store.reader.listTransfers('eth', T1, 7, 10), []);
        assert.deepEqual(await store.reader.listTransfers('eth', T1, 1000, 10), []);
      }));

    test('an unknown token has no transfers', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(batch({ from: 5, to: 7, transfers }));
        assert.deepEqual(await store.reader.listTransfers('eth', T3, 0, 10), []);
        assert.deepEqual(await store.reader.listTransfers('bsc', T1, 0, 10), []);
      }));
  });

  describe('whole-history scans', () => {
    test('scanTransfers pages oldest first without gaps or repeats; scanBalances lists every non-zero balance', () =>
      withStore(async (store) => {
        const rand = random(7);
        const holders = Array.from({ length: 9 }, (_, i) => holder(i + 1));
        const expected = new Map<string, bigint>();
        const all: TransferRecord[] = [];
        for (let block = 1; block <= 6; block++) {
          const list: [string, string, bigint][] = [];
          for (let i = 0; i < 7; i++) {
            const to = holders[Math.floor(rand() * holders.length)]!;
            list.push([ZERO_ADDRESS, to, BigInt(1 + Math.floor(rand() * 5))]);
          }
          const transfers = moves(T1, block, list);
          for (const t of transfers) {
            expected.set(t.to, (expected.get(t.to) ?? 0n) + t.value);
            // The mint's sender is stored too, negative (as any balance while history starts late).
            expected.set(t.from, (expected.get(t.from) ?? 0n) - t.value);
          }
          all.push(...transfers);
          await store.writer.applyBatch(batch({ from: block, to: block, transfers }));
        }
        // An emptied balance has no row: move one holder's whole balance away.
        const [emptied] = [...expected.keys()].filter((h) => h !== ZERO_ADDRESS);
        const amount = expected.get(emptied!)!;
        const last = transferRecord({
          token: T1,
          blockNumber: 7,
          logIndex: 0,
          from: emptied!,
          to: holder(99),
          value: amount,
        });
        await store.writer.applyBatch(batch({ from: 7, to: 7, transfers: [last] }));
        all.push(last);
        expected.delete(emptied!);
        expected.set(holder(99), amount);

        const scanned: TransferRecord[] = [];
        let after: { blockNumber: number; logIndex: number } | null = null;
        for (;;) {
          const page = await store.scans.scanTransfers('eth', T1, after, 5);
          if (page.length === 0) break;
          scanned.push(...page);
          const tail = page[page.length - 1]!;
          after = { blockNumber: tail.blockNumber, logIndex: tail.logIndex };
        }
        assert.deepEqual(scanned, all);

        const balances = new Map<string, bigint>();
        let afterHolder: string | null = null;
        for (;;) {
          const page = await store.scans.scanBalances('eth', T1, afterHolder, 4);
          if (page.length === 0) break;
          for (const row of page) {
            assert.ok(!balances.has(row.holder), `holder ${row.holder} listed twice`);
            balances.set(row.holder, row.amount);
          }
          afterHolder = page[page.length - 1]!.holder;
        }
        assert.deepEqual(balances, expected);
        assert.deepEqual(await store.scans.scanTransfers('eth', T2, null, 5), []);
        assert.deepEqual(await store.scans.scanBalances('eth', T2, null, 5), []);
      }));
  });

  describe('token list', () => {
    /** A token with exactly `holders` holders and `count` transfers, all in `block`. */
    function shaped(token: string, block: number, holders: number, count: number): TransferRecord[] {
      const list: [string, string, bigint][] = [];
      for (let i = 0; i < holders; i++) list.push([ZERO_ADDRESS, holder(i + 1), 1n]);
      for (let i = holders; i < count; i++) list.push([holder(1), holder(1), 0n]);
      return moves(token, block, list);
    }

    test('orders by holders, then transfers descending, then address ascending', () =>
      withStore(async (store) => {
        // T2 and T1 tie on both counts; T2 is seen first, yet T1 sorts first by address.
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 5,
            transfers: [
              ...shaped(T2, 1, 2, 5),
              ...shaped(T1, 2, 2, 5),
              ...shaped(T5, 3, 1, 9),
              ...shaped(T3, 4, 2, 7),
              ...shaped(T4, 5, 3, 3),
            ],
          }),
        );
        const page = await store.reader.listTokens('eth', 0, 50);
        assert.equal(page.total, 5);
        assert.deepEqual(
          page.tokens.map((t) => [t.address, t.holderCount, t.transferCount]),
          [
            [T4, 3, 3],
            [T3, 2, 7],
            [T1, 2, 5],
            [T2, 2, 5],
            [T5, 1, 9],
          ],
        );
        assert.deepEqual(page.tokens[2], await store.reader.getToken('eth', T1));
        const second = await store.reader.listTokens('eth', 2, 2);
        assert.deepEqual(second, { total: 5, tokens: page.tokens.slice(2, 4) });
      }));

    test('order follows later batches', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: [...shaped(T1, 1, 2, 2), ...shaped(T2, 1, 1, 1)] }),
        );
        assert.deepEqual(
          (await store.reader.listTokens('eth', 0, 10)).tokens.map((t) => t.address),
          [T1, T2],
        );
        await store.writer.applyBatch(
          batch({
            from: 2,
            to: 2,
            transfers: moves(T2, 2, [
              [ZERO_ADDRESS, H3, 1n],
              [ZERO_ADDRESS, H2, 1n],
            ]),
          }),
        );
        await store.writer.applyBatch(batch({ from: 3, to: 3, transfers: moves(T1, 3, [[H1, H2, 1n]]) }));
        assert.deepEqual(
          (await store.reader.listTokens('eth', 0, 10)).tokens.map((t) => [t.address, t.holderCount]),
          [
            [T2, 3],
            [T1, 1],
          ],
        );
      }));

    test('page past the end returns an empty list with the total', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: [...shaped(T1, 1, 1, 1), ...shaped(T2, 1, 1, 1)] }),
        );
        await store.writer.applyBatch(
          batch({ chain: 'bsc', from: 1, to: 1, transfers: shaped(T3, 1, 1, 1) }),
        );
        assert.deepEqual(await store.reader.listTokens('eth', 2, 10), { total: 2, tokens: [] });
        assert.deepEqual(await store.reader.listTokens('eth', 50, 50), { total: 2, tokens: [] });
        assert.equal((await store.reader.listTokens('bsc', 0, 10)).total, 1);
      }));
  });
}
