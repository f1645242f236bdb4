/**
 * The store contract suite, balance changes without a transfer (`IndexBatch.balanceChanges`:
 * WETH9's deposits and withdrawals, Tether's issues, redeems and destroyed black funds): they move
 * balances, holder counts and holder lists, are no transfers (not in `transferCount`, a transfer
 * list or an address's transfer count), make a token of the index on their own, are taken off by a
 * rollback, replayed after balances were deferred, and seen by `scanBalanceChanges`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { seededRandom } from '../../internal/random.js';
import { AddressModel } from '../testing/address-model.js';
import { applyToBoth, assertAddressViews } from '../testing/address-model-check.js';
import { batch, blockHash, holder, moves, tokenMetadata } from '../testing/batches.js';
import type { BalanceChange, IndexBatch, TransferRecord } from '../types.js';
import { type ContractContext, H1, H2, H3, T1, T2, T3 } from './fixtures.js';

/** A balance change of `token` at `block`:`logIndex`. */
const change = (
  token: string,
  block: number,
  logIndex: number,
  holderAddress: string,
  amount: bigint,
): BalanceChange => ({ token, blockNumber: block, logIndex, holder: holderAddress, amount });

/** `batch(spec)` with `changes`, and the metadata of every token either names. */
function withChanges(
  spec: { from: number; to: number; transfers?: TransferRecord[]; prune?: number },
  changes: BalanceChange[],
): IndexBatch {
  const tokens = new Set([...(spec.transfers ?? []), ...changes].map((t) => t.token));
  return { ...batch(spec), balanceChanges: changes, tokens: [...tokens].map((t) => tokenMetadata(t)) };
}

export function runBalanceChangeCases({ withStore }: ContractContext): void {
  describe('balance changes without a transfer', () => {
    test('deposits and withdrawals move balances, holder counts and ranks, and are no transfers', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          // H1 wraps 10 and sends 4 to H2; H3 wraps 7 (WETH9: no Transfer for either deposit).
          withChanges({ from: 1, to: 1, transfers: moves(T1, 1, [[H1, H2, 4n]], 1) }, [
            change(T1, 1, 0, H1, 10n),
            change(T1, 1, 2, H3, 7n),
          ]),
          // H3 unwraps everything: it leaves the holders; H2 unwraps 1.
          withChanges({ from: 2, to: 2 }, [change(T1, 2, 0, H3, -7n), change(T1, 2, 1, H2, -1n)]),
        ]);
        const token = await store.reader.getToken('eth', T1);
        assert.equal(token?.transferCount, 1);
        assert.equal(token?.holderCount, 2);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H1, balance: 6n },
          { address: H2, balance: 3n },
        ]);
        assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
        assert.deepEqual(await store.reader.getAddressHolding('eth', H3, T1), {
          balance: 0n,
          transferCount: 0,
        });
        assert.equal((await store.reader.listTransfers('eth', T1, 0, 10)).length, 1);
        assert.deepEqual(await store.reader.listAddressTransfers('eth', H3, null, 0, 10), []);
        assert.equal((await store.reader.getChainActivity?.('eth'))?.transfers ?? 1, 1);
        assert.deepEqual(
          (await store.scans.scanBalanceChanges('eth', T1, null, 10)).map((c) => [
            c.blockNumber,
            c.logIndex,
            c.amount,
          ]),
          [
            [1, 0, 10n],
            [1, 2, 7n],
            [2, 0, -7n],
            [2, 1, -1n],
          ],
        );
        assert.deepEqual(
          (await store.scans.scanBalanceChanges('eth', T1, { blockNumber: 1, logIndex: 2 }, 1)).map(
            (c) => c.holder,
          ),
          [H3],
        );
        await assertAddressViews(store, model, 'eth', { pageSizes: [1, 50] });
      }));

    test('a contract named only by balance changes is a token of the index, with no transfers', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          withChanges({ from: 5, to: 6, transfers: moves(T2, 6, [[ZERO_ADDRESS, H1, 1n]]) }, [
            change(T1, 5, 0, H1, 3n),
            change(T1, 6, 4, H2, 2n),
          ]),
        ]);
        const token = await store.reader.getToken('eth', T1);
        assert.deepEqual(
          { holders: token?.holderCount, transfers: token?.transferCount, first: token?.firstBlock },
          { holders: 2, transfers: 0, first: 5 },
        );
        // A new token's supply is read, and so is that of a token whose balances changed.
        assert.ok((await store.writer.tokensNeedingSupply('eth', 0, 10)).includes(T1));
        const listed = await store.reader.listAddressBalances('eth', H1);
        assert.deepEqual(
          listed.map((b) => [b.token.address, b.balance, b.transferCount]),
          [
            [T1, 3n, 0],
            [T2, 1n, 1],
          ],
        );
        await assertAddressViews(store, model, 'eth');
      }));

    test('a zero change or one outside the batch is refused, and changes nothing', () =>
      withStore(async (store) => {
        await assert.rejects(
          store.writer.applyBatch(withChanges({ from: 1, to: 1 }, [change(T1, 1, 0, H1, 0n)])),
        );
        await assert.rejects(
          store.writer.applyBatch(withChanges({ from: 1, to: 1 }, [change(T1, 2, 0, H1, 5n)])),
        );
        assert.equal(await store.writer.getCheckpoint('eth'), null);
        assert.equal(await store.reader.getToken('eth', T1), null);
      }));

    test('a rollback takes off the changes above the ancestor, and drops a token they alone brought', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          withChanges({ from: 1, to: 2, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 5n]]) }, [
            change(T1, 2, 0, H2, 9n),
          ]),
          withChanges({ from: 3, to: 4, transfers: moves(T1, 4, [[H2, H3, 2n]], 5) }, [
            change(T1, 3, 0, H2, -9n),
            change(T1, 4, 1, H1, 100n),
            change(T3, 4, 2, H3, 8n),
          ]),
        ]);
        assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
        await assertAddressViews(store, model, 'eth', { label: 'before' });
        const result = await store.writer.rollback('eth', 2, blockHash(2));
        model.rollback('eth', 2);
        assert.deepEqual(result, { affectedTokens: [T1, T3].sort(), removedTransfers: 1 });
        assert.equal(await store.reader.getToken('eth', T3), null);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [
          { address: H2, balance: 9n },
          { address: H1, balance: 5n },
        ]);
        assert.deepEqual(
          (await store.scans.scanBalanceChanges('eth', T1, null, 10)).map((c) => c.blockNumber),
          [2],
        );
        await assertAddressViews(store, model, 'eth', { label: 'after', extraTokens: [T3] });
        // The same blocks again, on the new fork.
        await applyToBoth(store, model, [withChanges({ from: 3, to: 3 }, [change(T3, 3, 0, H1, 1n)])]);
        await assertAddressViews(store, model, 'eth', { label: 'new fork' });
      }));

    test('a token only balance changes name keeps its changes below the ancestor', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        await applyToBoth(store, model, [
          withChanges({ from: 1, to: 1 }, [change(T1, 1, 0, H1, 4n)]),
          withChanges({ from: 2, to: 2 }, [change(T1, 2, 0, H1, -4n), change(T1, 2, 1, H2, 6n)]),
        ]);
        await store.writer.rollback('eth', 1, blockHash(1));
        model.rollback('eth', 1);
        assert.deepEqual(await store.reader.listHolders('eth', T1, 0, 10), [{ address: H1, balance: 4n }]);
        await assertAddressViews(store, model, 'eth', { extraAddresses: [H2] });
      }));

    test('late start: a holder only a balance change names is seeded once, and the change adds to it', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        const b: IndexBatch = {
          ...withChanges({ from: 100, to: 100 }, [change(T1, 100, 0, H1, 5n)]),
          seeds: { block: 99, balances: [{ token: T1, holder: H1, amount: 20n }], partial: false },
        };
        await applyToBoth(store, model, [b]);
        assert.equal(await store.reader.getBalance('eth', T1, H1), 25n);
        assert.deepEqual(await store.writer.seededHolders('eth', [{ token: T1, holder: H1 }]), [true]);
        await assertAddressViews(store, model, 'eth');
      }));

    for (const { seed, steps } of [
      { seed: 18, steps: 12 },
      { seed: 1818, steps: 10 },
    ]) {
      test(`seed ${seed}: transfers and balance changes, balances deferred now and then, rollbacks: every read agrees with the model`, () =>
        withStore(async (store) => {
          const next = seededRandom(seed);
          const int = (n: number): number => Math.floor(next() * n);
          const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
          const tokens = [T1, T2];
          // T3 logs no transfer at all (a wrapped-native token before its first Transfer).
          const changeTokens = [T1, T2, T3];
          const holders = Array.from({ length: 12 }, (_, i) => holder(i + 1));
          const parties = [ZERO_ADDRESS, ...holders];
          const amount = (): bigint => BigInt(1 + int(30)) << BigInt(next() < 0.1 ? 150 : 0);
          const model = new AddressModel();
          let checkpoint = 0;
          for (let step = 0; step < steps; step++) {
            if (checkpoint > 3 && next() < 0.25) {
              const toBlock = Math.max(1, checkpoint - 1 - int(3));
              await store.writer.rollback('eth', toBlock, blockHash(toBlock));
              model.rollback('eth', toBlock);
              checkpoint = toBlock;
            } else {
              const from = checkpoint + 1;
              const to = from + int(3);
              const transfers: TransferRecord[] = [];
              const changes: BalanceChange[] = [];
              for (let block = from; block <= to; block++) {
                for (let log = 0; log < 8; log++) {
                  const kind = next();
                  if (kind < 0.35) {
                    const sender = next() < 0.3 ? ZERO_ADDRESS : pick(parties);
                    transfers.push(...moves(pick(tokens), block, [[sender, pick(parties), amount()]], log));
                  } else if (kind < 0.7) {
                    const sign = next() < 0.4 ? -1n : 1n;
                    changes.push(change(pick(changeTokens), block, log, pick(holders), sign * amount()));
                  }
                }
              }
              const b = { ...withChanges({ from, to, transfers }, changes), deferBalances: next() < 0.5 };
              await applyToBoth(store, model, [b]);
              checkpoint = to;
            }
            await assertAddressViews(store, model, 'eth', {
              label: `seed ${seed}, step ${step}`,
              pageSizes: [3, 50],
              extraTokens: changeTokens.filter((t) => !model.tokens('eth').includes(t)),
            });
          }
        }));
    }
  });
}
