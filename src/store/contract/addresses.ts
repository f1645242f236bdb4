/**
 * The store contract suite, address operations: the tokens an address holds
 * (`listAddressBalances`), one holding (`getAddressHolding`) and the transfers naming an address
 * (`listAddressTransfers`). Expected answers are spelled out here; `assertAddressViews` then
 * checks every other read against the reference model (`testing/address-model.ts`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { AddressModel } from '../testing/address-model.js';
import { applyToBoth, assertAddressViews, labelOf } from '../testing/address-model-check.js';
import { batch, blockHash, holder, moves, seeded, transferRecord } from '../testing/batches.js';
import type { Store, TransferRecord } from '../types.js';
import { type ContractContext, H1, H2, H3, T1, T2, T3, T4 } from './fixtures.js';

const H4 = holder(4);
const H5 = holder(5);
const UNKNOWN = holder(0xabc);

/** `[token, balance, transferCount]` of each entry of `listAddressBalances`. */
async function balancesOf(store: Store, address: string, chain = 'eth') {
  return (await store.reader.listAddressBalances(chain, address)).map((b) => [
    b.token.address,
    b.balance,
    b.transferCount,
  ]);
}

/** `[block, log, token]` of each transfer. */
const keys = (list: readonly TransferRecord[]) => list.map((t) => [t.blockNumber, t.logIndex, t.token]);

export function runAddressCases({ withStore }: ContractContext): void {
  describe('address balances and transfers', () => {
    test('the tokens an address holds, ordered like the token list, with their token labels', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 3,
            transfers: [
              // T3: 3 holders. T1 and T2: 2 holders and 3 transfers each (tie: address asc).
              // T4: 2 holders, 4 transfers; H1 held some and gave it all away.
              ...moves(T3, 1, [
                [ZERO_ADDRESS, H1, 7n],
                [ZERO_ADDRESS, H2, 1n],
                [ZERO_ADDRESS, H3, 1n],
              ]),
              ...moves(T2, 2, [
                [ZERO_ADDRESS, H1, 5n],
                [ZERO_ADDRESS, H2, 5n],
                [H1, H1, 5n],
              ]),
              ...moves(
                T1,
                2,
                [
                  [ZERO_ADDRESS, H1, 1n],
                  [ZERO_ADDRESS, H2, 1n],
                  [H2, H2, 0n],
                ],
                3,
              ),
              ...moves(T4, 3, [
                [ZERO_ADDRESS, H1, 4n],
                [H1, H2, 4n],
                [ZERO_ADDRESS, H3, 4n],
                [H3, H3, 0n],
              ]),
            ],
          }),
        ]);
        assert.deepEqual(await balancesOf(store, H1), [
          [T3, 7n, 1],
          [T1, 1n, 1],
          [T2, 5n, 2],
        ]);
        assert.deepEqual(await balancesOf(store, H2), [
          [T3, 1n, 1],
          [T4, 4n, 1],
          [T1, 1n, 2],
          [T2, 5n, 1],
        ]);
        const listed = await store.reader.listAddressBalances('eth', H1);
        for (const entry of listed) {
          const record = await store.reader.getToken('eth', entry.token.address);
          assert.deepEqual(entry.token, record && labelOf(record));
        }
        // The labels of a page that names several tokens, in one read: known ones only, of this chain.
        const labels = await store.reader.getTokenLabels('eth', [T4, UNKNOWN, T1, T4, T3]);
        const byAddress = (list: { address: string }[]) =>
          [...list].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
        const expected = [];
        for (const token of [T1, T3, T4]) {
          const record = await store.reader.getToken('eth', token);
          expected.push(record && labelOf(record));
        }
        assert.deepEqual(byAddress(labels), byAddress(expected as { address: string }[]));
        assert.deepEqual(await store.reader.getTokenLabels('bsc', [T1, T3]), []);
        assert.deepEqual(await store.reader.getTokenLabels('eth', []), []);
        // H1 holds no T4 any more: not listed, but its holding tells its transfers.
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T4), {
          balance: 0n,
          transferCount: 2,
        });
        assert.deepEqual(await store.reader.getAddressHolding('eth', H3, T4), {
          balance: 4n,
          transferCount: 2,
        });
        await assertAddressViews(store, model, 'eth');
      }));

    test('the zero address holds nothing; its transfer lists hold the mints and burns', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 2,
            transfers: [
              ...moves(T1, 1, [
                [ZERO_ADDRESS, H1, 10n],
                [H1, ZERO_ADDRESS, 3n],
                [H1, DEAD_ADDRESS, 2n],
                [ZERO_ADDRESS, ZERO_ADDRESS, 1n],
                // A burn by an address the index never saw receive: the zero address's computed
                // balance turns positive, yet it holds nothing.
                [H3, ZERO_ADDRESS, 20n],
              ]),
              ...moves(T2, 2, [[ZERO_ADDRESS, H2, 4n]]),
            ],
          }),
        ]);
        assert.deepEqual(await store.reader.listAddressBalances('eth', ZERO_ADDRESS), []);
        assert.deepEqual(await store.reader.listAddressBalances('eth', ''), []);
        // Whatever the store computed for it: mints take from it, burns give back.
        assert.deepEqual(await store.reader.getAddressHolding('eth', ZERO_ADDRESS, T1), {
          balance: 13n,
          transferCount: 4,
        });
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H1, balance: 5n },
          { address: DEAD_ADDRESS, balance: 2n },
        ]);
        assert.deepEqual(keys(await store.reader.listAddressTransfers('eth', ZERO_ADDRESS, null, 0, 50)), [
          [2, 0, T2],
          [1, 4, T1],
          [1, 3, T1],
          [1, 1, T1],
          [1, 0, T1],
        ]);
        // 0x…dead is an ordinary holder.
        assert.deepEqual(await balancesOf(store, DEAD_ADDRESS), [[T1, 2n, 1]]);
        await assertAddressViews(store, model, 'eth');
      }));

    test('a self-transfer counts and lists once; zero-value transfers count and list', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 1,
            transfers: moves(T1, 1, [
              [ZERO_ADDRESS, H1, 5n],
              [H1, H1, 5n],
              [H1, H1, 0n],
              [H2, H3, 0n],
            ]),
          }),
        ]);
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T1), {
          balance: 5n,
          transferCount: 3,
        });
        assert.deepEqual(keys(await store.reader.listAddressTransfers('eth', H1, T1, 0, 50)), [
          [1, 2, T1],
          [1, 1, T1],
          [1, 0, T1],
        ]);
        // Named only by a zero-value transfer: no balance, no holder, but the transfer counts.
        for (const h of [H2, H3]) {
          assert.deepEqual(await store.reader.getAddressHolding('eth', h, T1), {
            balance: 0n,
            transferCount: 1,
          });
          assert.deepEqual(await store.reader.listAddressBalances('eth', h), []);
          assert.deepEqual(keys(await store.reader.listAddressTransfers('eth', h, null, 0, 50)), [
            [1, 3, T1],
          ]);
        }
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [{ address: H1, balance: 5n }]);
        await assertAddressViews(store, model, 'eth');
      }));

    test('a holder going to zero and back leaves and rejoins the lists', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 1,
            transfers: moves(T1, 1, [
              [ZERO_ADDRESS, H1, 10n],
              [ZERO_ADDRESS, H2, 1n],
            ]),
          }),
          batch({ from: 2, to: 2, transfers: moves(T1, 2, [[H1, H2, 10n]]) }),
        ]);
        assert.deepEqual(await store.reader.listAddressBalances('eth', H1), []);
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T1), {
          balance: 0n,
          transferCount: 2,
        });
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [{ address: H2, balance: 11n }]);
        await assertAddressViews(store, model, 'eth');
        await applyToBoth(store, model, [batch({ from: 3, to: 3, transfers: moves(T1, 3, [[H2, H1, 3n]]) })]);
        assert.deepEqual(await balancesOf(store, H1), [[T1, 3n, 3]]);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H2, balance: 8n },
          { address: H1, balance: 3n },
        ]);
        await assertAddressViews(store, model, 'eth');
      }));

    test('unknown addresses, tokens and chains answer [] and {0n, 0}', () =>
      withStore(async (store) => {
        const empty = { balance: 0n, transferCount: 0 };
        // Before anything is indexed.
        assert.deepEqual(await store.reader.listAddressBalances('eth', H1), []);
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T1), empty);
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H1, null, 0, 10), []);
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 1n]]) }),
        ]);
        assert.deepEqual(await store.reader.listAddressBalances('eth', UNKNOWN), []);
        assert.deepEqual(await store.reader.getAddressHolding('eth', UNKNOWN, T1), empty);
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T2), empty);
        assert.deepEqual(await store.reader.listAddressTransfers('eth', UNKNOWN, null, 0, 10), []);
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H1, T2, 0, 10), []);
        assert.deepEqual(await store.reader.listAddressBalances('bsc', H1), []);
        assert.deepEqual(await store.reader.getAddressHolding('bsc', H1, T1), empty);
        assert.deepEqual(await store.reader.listAddressTransfers('bsc', H1, null, 0, 10), []);
        await assertAddressViews(store, model, 'eth', { extraAddresses: [UNKNOWN, ''], extraTokens: [T2] });
      }));

    test('address transfers are newest first, of one token or all, and page by offset and limit', () =>
      withStore(async (store) => {
        const transfers = [
          ...moves(T1, 5, [
            [ZERO_ADDRESS, H1, 100n],
            [H1, H2, 1n],
            [H3, H2, 1n],
          ]),
          ...moves(T2, 5, [[ZERO_ADDRESS, H1, 1n]], 3),
          transferRecord({ token: T1, blockNumber: 6, logIndex: 9, from: H2, to: H1, value: 1n, txIndex: 4 }),
          ...moves(T3, 7, [[H1, H1, 0n]]),
          ...moves(T1, 7, [[H1, H2, 5n]], 1),
          ...moves(T2, 9, [[H1, H3, 1n]], 4),
        ];
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({ from: 5, to: 6, transfers: transfers.filter((t) => t.blockNumber <= 6) }),
          batch({ from: 7, to: 9, transfers: transfers.filter((t) => t.blockNumber > 6) }),
        ]);
        const all = await store.reader.listAddressTransfers('eth', H1, null, 0, 50);
        assert.deepEqual(keys(all), [
          [9, 4, T2],
          [7, 1, T1],
          [7, 0, T3],
          [6, 9, T1],
          [5, 3, T2],
          [5, 1, T1],
          [5, 0, T1],
        ]);
        // Whole records, exactly as given.
        assert.deepEqual(
          all,
          keys(all).map(([b, l, t]) =>
            transfers.find((x) => x.blockNumber === b && x.logIndex === l && x.token === t),
          ),
        );
        assert.deepEqual(keys(await store.reader.listAddressTransfers('eth', H1, T1, 0, 50)), [
          [7, 1, T1],
          [6, 9, T1],
          [5, 1, T1],
          [5, 0, T1],
        ]);
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H1, null, 2, 3), all.slice(2, 5));
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H1, null, 6, 3), all.slice(6));
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H1, null, 7, 3), []);
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H1, T1, 2450, 50), []);
        await assertAddressViews(store, model, 'eth', { pageSizes: [1, 2, 3, 50] });
      }));

    test('a rollback removes address transfers and the holdings they made', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 5,
            transfers: moves(T1, 3, [
              [ZERO_ADDRESS, H1, 100n],
              [ZERO_ADDRESS, H2, 50n],
              [ZERO_ADDRESS, H3, 70n],
            ]),
          }),
          batch({
            from: 6,
            to: 9,
            transfers: [
              ...moves(T1, 7, [
                [H1, H2, 60n],
                [H3, H4, 70n],
              ]),
              ...moves(T2, 8, [[ZERO_ADDRESS, H1, 1n]]),
            ],
          }),
        ]);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H2, balance: 110n },
          { address: H4, balance: 70n },
          { address: H1, balance: 40n },
        ]);
        assert.deepEqual(await balancesOf(store, H1), [
          [T1, 40n, 2],
          [T2, 1n, 1],
        ]);
        await assertAddressViews(store, model, 'eth');

        await store.writer.rollback('eth', 5, blockHash(5));
        model.rollback('eth', 5);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H1, balance: 100n },
          { address: H3, balance: 70n },
          { address: H2, balance: 50n },
        ]);
        assert.deepEqual(await balancesOf(store, H1), [[T1, 100n, 1]]);
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T2), {
          balance: 0n,
          transferCount: 0,
        });
        assert.deepEqual(await store.reader.getAddressHolding('eth', H4, T1), {
          balance: 0n,
          transferCount: 0,
        });
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H4, null, 0, 10), []);
        assert.deepEqual(keys(await store.reader.listAddressTransfers('eth', H1, null, 0, 10)), [[3, 0, T1]]);
        await assertAddressViews(store, model, 'eth', { extraAddresses: [H4], extraTokens: [T2] });
        // Indexing goes on from the rollback.
        await applyToBoth(store, model, [batch({ from: 6, to: 6, transfers: moves(T1, 6, [[H3, H1, 1n]]) })]);
        await assertAddressViews(store, model, 'eth', { extraAddresses: [H4], extraTokens: [T2] });
      }));

    test('a late start: seeds make holdings; a negative computed balance is never held', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          seeded(
            {
              from: 10,
              to: 11,
              transfers: [
                ...moves(T1, 10, [
                  [H1, H2, 30n],
                  [H3, H4, 5n],
                ]),
                ...moves(T2, 11, [[H3, H1, 2n]]),
              ],
            },
            9,
            [
              [T1, H1, 100n],
              [T1, H2, 0n],
              [T1, H3, 0n],
              [T1, H4, 0n],
              [T2, H3, 0n],
              [T2, H1, 0n],
            ],
          ),
        ]);
        // H3's balances went negative: the node knows better, so H3 is no holder anywhere.
        assert.deepEqual(await store.reader.getAddressHolding('eth', H3, T1), {
          balance: -5n,
          transferCount: 1,
        });
        assert.deepEqual(await store.reader.listAddressBalances('eth', H3), []);
        assert.deepEqual(await balancesOf(store, H1), [
          [T1, 70n, 1],
          [T2, 2n, 1],
        ]);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H1, balance: 70n },
          { address: H2, balance: 30n },
          { address: H4, balance: 5n },
        ]);
        await assertAddressViews(store, model, 'eth');
        // A rollback keeps starting balances and takes off the transfer counts of what it removes.
        await applyToBoth(store, model, [
          seeded(
            {
              from: 12,
              to: 12,
              transfers: moves(T1, 12, [
                [H2, H3, 30n],
                [H5, H1, 0n],
              ]),
            },
            9,
            [
              [T1, H2, 0n],
              [T1, H5, 50n],
            ],
          ),
        ]);
        assert.deepEqual(await balancesOf(store, H3), [[T1, 25n, 2]]);
        assert.deepEqual(await balancesOf(store, H5), [[T1, 50n, 1]]);
        await store.writer.rollback('eth', 10, blockHash(10));
        model.rollback('eth', 10);
        // H5 holds its starting balance without a transfer naming it.
        assert.deepEqual(await balancesOf(store, H5), [[T1, 50n, 0]]);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H1, balance: 70n },
          { address: H5, balance: 50n },
          { address: H2, balance: 30n },
          { address: H4, balance: 5n },
        ]);
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T1), {
          balance: 70n,
          transferCount: 1,
        });
        assert.deepEqual(await store.reader.getAddressHolding('eth', H1, T2), {
          balance: 0n,
          transferCount: 0,
        });
        await assertAddressViews(store, model, 'eth', { extraTokens: [T2] });
      }));

    test('address balances, holdings and holders survive close and reopen', () =>
      withStore(async (store, context) => {
        if (context.reopen === undefined) return;
        const model = new AddressModel();
        await applyToBoth(store, model, [
          batch({
            from: 1,
            to: 2,
            transfers: [
              ...moves(T1, 1, [
                [ZERO_ADDRESS, H1, 1n << 200n],
                [H1, H2, 1n << 64n],
                [H2, H2, 0n],
              ]),
              ...moves(T2, 2, [
                [ZERO_ADDRESS, H2, 3n],
                [H2, ZERO_ADDRESS, 1n],
              ]),
            ],
          }),
        ]);
        await assertAddressViews(store, model, 'eth');
        await store.close();
        const reopened = await context.reopen();
        await assertAddressViews(reopened, model, 'eth');
        await applyToBoth(reopened, model, [
          batch({ from: 3, to: 3, transfers: moves(T2, 3, [[H2, H3, 2n]]) }),
        ]);
        await assertAddressViews(reopened, model, 'eth');
      }));
  });
}
