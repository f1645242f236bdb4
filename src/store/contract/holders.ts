/**
 * The store contract suite, token holders: `listHolders` and the `verify` scans `scanHolders` and
 * `scanHoldings`, uint256-exact ranks, ties, paging, and balances written behind the checkpoint
 * (`IndexBatch.deferBalances`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_UINT256 } from '../../internal/amount.js';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { AddressModel } from '../testing/address-model.js';
import { applyToBoth, assertAddressViews } from '../testing/address-model-check.js';
import { address, batch, holder, moves } from '../testing/batches.js';
import type { HolderEntry, IndexBatch } from '../types.js';
import { type ContractContext, H1, H2, H3, T1, T2 } from './fixtures.js';

const P53 = 1n << 53n;
const P64 = 1n << 64n;
const P128 = 1n << 128n;
const HIGH = address('aa', 1);

/** Holders in their expected rank, minted in another order. */
const ranked: HolderEntry[] = [
  { address: holder(1), balance: MAX_UINT256 },
  { address: holder(2), balance: P128 },
  { address: holder(3), balance: P128 - 1n },
  { address: holder(4), balance: P64 + 1n },
  { address: holder(5), balance: P64 },
  { address: holder(6), balance: P64 },
  { address: HIGH, balance: P64 },
  { address: holder(7), balance: P64 - 1n },
  { address: holder(8), balance: P53 + 1n },
  { address: holder(9), balance: P53 },
  { address: holder(10), balance: P53 - 1n },
  { address: holder(0x1f), balance: 1n },
  { address: holder(0x20), balance: 1n },
];
const mintOrder = [6, 12, 0, 9, 4, 11, 2, 7, 5, 1, 10, 3, 8].map((i) => ranked[i]!);

export function runHolderCases({ withStore }: ContractContext): void {
  describe('token holders', () => {
    test('rank by balance descending, uint256-exact, then by address; page and seek through ties', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 2,
            transfers: [
              ...moves(
                T1,
                1,
                mintOrder.map((h) => [ZERO_ADDRESS, h.address, h.balance] as const),
              ),
              // A second token, so the holder lists are per token.
              ...moves(T2, 2, [[ZERO_ADDRESS, holder(5), 1n]]),
            ],
          }),
        ]);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 50), ranked);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, ranked.length);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 4, 3), ranked.slice(4, 7));
        assert.deepEqual(await store.reader.listHolders('eth', T1, 12, 3), ranked.slice(12));
        assert.deepEqual(await store.reader.listHolders('eth', T1, 13, 3), []);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 2450, 50), []);
        // The seek starts strictly after the entry given, also inside a tie.
        assert.deepEqual(await store.scans.scanHolders('eth', T1, ranked[5]!, 2), ranked.slice(6, 8));
        assert.deepEqual(await store.scans.scanHolders('eth', T1, null, 1), ranked.slice(0, 1));
        assert.deepEqual(await store.scans.scanHolders('eth', T1, ranked[12]!, 5), []);
        assert.deepEqual(await store.reader.listHolders('eth', T2, 0, 50), [
          { address: holder(5), balance: 1n },
        ]);
        await assertAddressViews(store, model, 'eth', { pageSizes: [1, 2, 3, 50] });
      }));

    test('ranks follow later batches; holders that empty leave, the zero address never joins', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 1,
            transfers: moves(T1, 1, [
              [ZERO_ADDRESS, H1, 30n],
              [ZERO_ADDRESS, H2, 20n],
              [ZERO_ADDRESS, H3, 10n],
            ]),
          }),
          batch({
            from: 2,
            to: 2,
            transfers: moves(T1, 2, [
              [H1, H3, 25n],
              [H2, ZERO_ADDRESS, 20n],
            ]),
          }),
        ]);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H3, balance: 35n },
          { address: H1, balance: 5n },
        ]);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
        await assertAddressViews(store, model, 'eth', { pageSizes: [1, 50] });
      }));

    test('unknown tokens have no holders and no holdings', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 1n]]) }),
        );
        assert.deepEqual(await store.reader.listHolders('eth', T2, 0, 10), []);
        assert.deepEqual(await store.reader.listHolders('bsc', T1, 0, 10), []);
        assert.deepEqual(await store.scans.scanHolders('eth', T2, null, 10), []);
        assert.deepEqual(await store.scans.scanHoldings('eth', T2, null, 10), []);
        assert.deepEqual(await store.scans.scanHoldings('bsc', T1, null, 10), []);
      }));

    test('scanHoldings lists every row transfers name, zero balances and mint parties included', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          batch({
            from: 1,
            to: 1,
            transfers: moves(T1, 1, [
              [ZERO_ADDRESS, H1, 5n],
              [H1, H2, 5n],
              [H3, H3, 0n],
            ]),
          }),
        );
        const rows = [];
        for (let after: string | null = null; ; ) {
          const page = await store.scans.scanHoldings('eth', T1, after, 1);
          if (page.length === 0) break;
          rows.push(...page);
          after = page[0]!.holder;
        }
        rows.sort((a, b) => (a.holder < b.holder ? -1 : 1));
        assert.deepEqual(rows, [
          { holder: ZERO_ADDRESS, balance: -5n, transferCount: 1 },
          { holder: H1, balance: 0n, transferCount: 2 },
          { holder: H2, balance: 5n, transferCount: 1 },
          { holder: H3, balance: 0n, transferCount: 1 },
        ]);
      }));

    /** Five batches: holders move, a token appears, a holder empties and another fills. */
    const lagging = (): IndexBatch[] => [
      batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 10n]]) }),
      batch({ from: 2, to: 2, transfers: moves(T1, 2, [[H1, H2, 4n]]) }),
      batch({
        from: 3,
        to: 3,
        transfers: [...moves(T1, 3, [[H2, H3, 4n]]), ...moves(T2, 3, [[ZERO_ADDRESS, H2, 1n]], 1)],
      }),
      batch({
        from: 4,
        to: 4,
        transfers: moves(T1, 4, [
          [H1, H1, 0n],
          [H1, H3, 6n],
        ]),
      }),
      batch({ from: 5, to: 5, transfers: moves(T2, 5, [[H2, H1, 1n]]) }),
    ];

    test('while balances lag the checkpoint (deferBalances), holdings and holders answer as of balancesBlock', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        const steps = lagging();
        for (const [i, step] of steps.entries()) {
          const last = i === steps.length - 1;
          await applyToBoth(store, model, [{ ...step, deferBalances: !last }]);
          const status = await store.reader.getChainStatus('eth');
          if (status?.balancesBlock !== undefined) assert.ok(status.balancesBlock < step.toBlock);
          // Token counts and transfers as of the checkpoint, balances as of balancesBlock.
          await assertAddressViews(store, model, 'eth', {
            label: `after block ${step.toBlock}`,
            pageSizes: [2, 50],
          });
        }
        assert.equal((await store.reader.getChainStatus('eth'))?.balancesBlock, undefined);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [{ address: H3, balance: 10n }]);
      }));

    // More deferred balances than the table holds: SQLite writes them in one go and builds its
    // holder indexes after (bulk-indexes.ts); the reads must not tell the difference.
    test('a backfill whose deferred balances outnumber the stored ones: holders and holdings agree with the model', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        const perBatch = 4_100;
        // Amounts with ties, some past 2^53 and 2^64; a few holders hold both tokens.
        const amount = (n: number): bigint =>
          n % 7 === 0 ? P64 + BigInt(n % 5) : n % 3 === 0 ? P53 + BigInt(n % 11) : BigInt(1 + (n % 97));
        const steps: IndexBatch[] = [
          batch({
            from: 1,
            to: 1,
            transfers: moves(T1, 1, [
              [ZERO_ADDRESS, H1, 100n],
              [ZERO_ADDRESS, H2, 5n],
            ]),
          }),
        ];
        for (let b = 0; b < 3; b++) {
          const list: [string, string, bigint][] = [];
          for (let i = 0; i < perBatch; i++) {
            const n = b * perBatch + i + 16;
            list.push([ZERO_ADDRESS, holder(n), amount(n)]);
          }
          const block = 2 + b;
          steps.push({
            ...batch({
              from: block,
              to: block,
              transfers: [
                ...moves(T1, block, list.slice(0, perBatch / 2)),
                ...moves(T2, block, list.slice(perBatch / 2), perBatch / 2),
                // An earlier holder sends on: a row updated in the table, another made.
                ...moves(T1, block, [[H1, holder(16 + b), 1n]], perBatch),
              ],
            }),
            deferBalances: true,
          });
        }
        steps.push(batch({ from: 5, to: 5, transfers: moves(T2, 5, [[holder(17 + perBatch), H3, 1n]]) }));
        await applyToBoth(store, model, steps);
        assert.equal((await store.reader.getChainStatus('eth'))?.balancesBlock, undefined);
        for (const token of [T1, T2]) {
          const holders = model.holders('eth', token);
          assert.ok(holders.length > 6_000);
          assert.deepEqual(
            {
              holderCount: (await store.reader.getToken('eth', token))?.holderCount,
              firstPages: [
                ...(await store.reader.listHolders('eth', token, 0, 50)),
                ...(await store.reader.listHolders('eth', token, 50, 50)),
              ],
              lastPage: await store.reader.listHolders('eth', token, 2_450, 50),
            },
            {
              holderCount: holders.length,
              firstPages: holders.slice(0, 100),
              lastPage: holders.slice(2_450, 2_500),
            },
          );
          const walked: HolderEntry[] = [];
          for (let after: HolderEntry | null = null; ; ) {
            const page = await store.scans.scanHolders('eth', token, after, 1_000);
            walked.push(...page);
            if (page.length < 1_000) break;
            after = page[page.length - 1]!;
          }
          assert.deepEqual(walked, holders, `scanHolders of ${token}`);
        }
        for (const n of [16, 17, 18, 16 + perBatch / 2, 17 + perBatch, 3 * perBatch + 15]) {
          for (const who of [holder(n), H1, H2, H3]) {
            const listed = await store.reader.listAddressBalances('eth', who);
            assert.deepEqual(
              listed.map((b) => ({
                token: b.token.address,
                balance: b.balance,
                transferCount: b.transferCount,
              })),
              model.addressBalances('eth', who),
              `listAddressBalances of ${who}`,
            );
          }
        }
      }));

    test('balances deferred when the store closes: after reopening, reads agree with the model', () =>
      withStore(async (store, context) => {
        if (context.reopen === undefined) return;
        const model = new AddressModel();
        const steps = lagging();
        await applyToBoth(
          store,
          model,
          steps.slice(0, 4).map((b) => ({ ...b, deferBalances: true })),
        );
        await store.close();
        const reopened = await context.reopen();
        await assertAddressViews(reopened, model, 'eth', { label: 'reopened', pageSizes: [2, 50] });
        await applyToBoth(reopened, model, steps.slice(4));
        await assertAddressViews(reopened, model, 'eth', { label: 'after block 5', pageSizes: [2, 50] });
      }));
  });
}
