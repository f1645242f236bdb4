/**
 * The store contract suite, the running sum of a token's stored balances
 * (`StoreReader.getBalanceSum`, what the exactness check compares with `totalSupply()`): every
 * holder's balance but the zero address's, signed and beyond uint256, kept by batches (transfers,
 * balance changes, starting balances of a late start), deferred balances and rollbacks, and gone
 * with a token a rollback drops. (`assertAddressViews` checks it too, after every step of the
 * address and holder cases.)
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { seededRandom } from '../../internal/random.js';
import { AddressModel } from '../testing/address-model.js';
import { batch, blockHash, holder, moves, tokenMetadata } from '../testing/batches.js';
import type { BalanceChange, IndexBatch, SeedBalance, Store, TransferRecord } from '../types.js';
import { type ContractContext, H1, H2, H3, T1, T2, T3 } from './fixtures.js';

const BIG = 2n ** 255n;

/** `batch(spec)` with balance changes and starting balances, and the metadata of every token they name. */
function fullBatch(
  spec: { from: number; to: number; transfers?: TransferRecord[] },
  changes: BalanceChange[] = [],
  seeds?: { block: number; balances: SeedBalance[] },
): IndexBatch {
  const tokens = new Set([...(spec.transfers ?? []), ...changes].map((t) => t.token));
  return {
    ...batch(spec),
    balanceChanges: changes,
    tokens: [...tokens].map((t) => tokenMetadata(t)),
    ...(seeds === undefined ? {} : { seeds: { ...seeds, partial: false } }),
  };
}

/** Asserts every token's running sum against the model's (as of `balancesBlock`, like the balances). */
async function assertSums(store: Store, model: AddressModel, tokens: readonly string[], label: string) {
  const asOf = (await store.reader.getChainStatus('eth'))?.balancesBlock;
  for (const token of tokens) {
    const known = (await store.reader.getToken('eth', token)) !== null;
    const expected = known ? model.balanceSum('eth', token, asOf) : null;
    assert.equal(await store.reader.getBalanceSum('eth', token), expected, `${label}: sum of ${token}`);
    assert.equal(
      await store.writer.getBalanceSum('eth', token),
      expected,
      `${label}: writer's sum of ${token}`,
    );
  }
}

export function runBalanceSumCases({ withStore }: ContractContext): void {
  describe('running sums of stored balances', () => {
    test('seeds, mints, transfers, balance changes and a rollback: the sum leaves the zero address out, exact past uint256', () =>
      withStore(async (store) => {
        // A late start at block 100: H1 and H2 held 20 and 5 before it.
        await store.writer.applyBatch(
          fullBatch(
            {
              from: 100,
              to: 100,
              transfers: [
                ...moves(T1, 100, [
                  [ZERO_ADDRESS, H3, BIG],
                  [ZERO_ADDRESS, H3, BIG],
                  [H1, H2, 3n],
                ]),
                // H1 sends before anything reached it: −9 (history starts late), H2 +9: sum 0.
                ...moves(T2, 100, [[H1, H2, 9n]], 5),
              ],
            },
            [{ token: T1, blockNumber: 100, logIndex: 9, holder: H1, amount: 7n }],
            {
              block: 99,
              balances: [
                { token: T1, holder: H1, amount: 20n },
                { token: T1, holder: H2, amount: 5n },
              ],
            },
          ),
        );
        // 2^256 held by H3 (two mints of 2^255), 20 + 5 seeded, 7 deposited; the −2^256 of the zero address is not summed.
        assert.equal(await store.reader.getBalanceSum('eth', T1), 2n * BIG + 32n);
        assert.equal(await store.reader.getBalanceSum('eth', T2), 0n);
        assert.equal(await store.reader.getBalanceSum('eth', T3), null);
        // Burned to the zero address and sent to 0x…dead: a burn leaves the sum, `dead` stays in it.
        await store.writer.applyBatch(
          fullBatch(
            {
              from: 101,
              to: 101,
              transfers: moves(T1, 101, [
                [H3, ZERO_ADDRESS, BIG],
                [H3, DEAD_ADDRESS, 1n],
              ]),
            },
            [{ token: T1, blockNumber: 101, logIndex: 5, holder: H2, amount: -2n }],
          ),
        );
        assert.equal(await store.reader.getBalanceSum('eth', T1), BIG + 30n);
        // A token first seen above the ancestor goes whole, its sum with it.
        await store.writer.applyBatch(
          fullBatch({ from: 102, to: 102, transfers: moves(T3, 102, [[ZERO_ADDRESS, H1, 4n]]) }),
        );
        assert.equal(await store.reader.getBalanceSum('eth', T3), 4n);
        await store.writer.rollback('eth', 100, blockHash(100));
        assert.equal(await store.reader.getBalanceSum('eth', T1), 2n * BIG + 32n);
        assert.equal(await store.reader.getBalanceSum('eth', T3), null);
        // Negative past 2^53 and past uint256: balances that history started late on.
        await store.writer.applyBatch(
          fullBatch({ from: 101, to: 101, transfers: moves(T2, 101, [[H2, ZERO_ADDRESS, 3n * BIG]]) }),
        );
        assert.equal(await store.reader.getBalanceSum('eth', T2), -3n * BIG);
      }));

    for (const { seed, steps } of [
      { seed: 7, steps: 14 },
      { seed: 707, steps: 12 },
    ]) {
      test(`seed ${seed}: late start, transfers, balance changes, deferred balances, rollbacks, reopening: every sum agrees with the model`, () =>
        withStore(async (first, underTest) => {
          let store = first;
          const next = seededRandom(seed);
          const int = (n: number): number => Math.floor(next() * n);
          const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
          const tokens = [T1, T2, T3];
          const holders = Array.from({ length: 10 }, (_, i) => holder(i + 1));
          const parties = [ZERO_ADDRESS, DEAD_ADDRESS, ...holders];
          const amount = (): bigint =>
            BigInt(1 + int(1000)) << BigInt(next() < 0.2 ? 200 : next() < 0.3 ? 60 : 0);
          const model = new AddressModel();
          const start = 50;
          let checkpoint = start - 1;
          for (let step = 0; step < steps; step++) {
            if (checkpoint > start + 3 && next() < 0.25) {
              const toBlock = Math.max(start, checkpoint - 1 - int(3));
              await store.writer.rollback('eth', toBlock, blockHash(toBlock));
              model.rollback('eth', toBlock);
              checkpoint = toBlock;
            } else {
              const from = checkpoint + 1;
              const to = from + int(3);
              const transfers: TransferRecord[] = [];
              const changes: BalanceChange[] = [];
              for (let block = from; block <= to; block++) {
                for (let log = 0; log < 6; log++) {
                  const kind = next();
                  if (kind < 0.5) {
                    const sender = next() < 0.3 ? ZERO_ADDRESS : pick(parties);
                    const recipient = next() < 0.15 ? ZERO_ADDRESS : pick(parties);
                    transfers.push(...moves(pick(tokens), block, [[sender, recipient, amount()]], log));
                  } else if (kind < 0.8) {
                    const sign = next() < 0.4 ? -1n : 1n;
                    changes.push({
                      token: pick(tokens),
                      blockNumber: block,
                      logIndex: log,
                      holder: pick(holders),
                      amount: sign * amount(),
                    });
                  }
                }
              }
              // Starting balances of holders met now, of tokens this batch moves (the late start's rule).
              const moved = [...new Set([...transfers, ...changes].map((t) => t.token))];
              const seeds: SeedBalance[] =
                moved.length === 0
                  ? []
                  : Array.from({ length: int(4) }, () => ({
                      token: pick(moved),
                      holder: pick(holders),
                      amount: amount(),
                    }));
              const b = {
                ...fullBatch({ from, to, transfers }, changes, { block: start - 1, balances: seeds }),
                deferBalances: next() < 0.5,
              };
              await store.writer.applyBatch(b);
              model.apply(b);
              checkpoint = to;
            }
            await assertSums(store, model, tokens, `seed ${seed}, step ${step}`);
            if (underTest.reopen !== undefined && step === Math.floor(steps / 2)) {
              await store.close();
              store = await underTest.reopen();
              await assertSums(store, model, tokens, `seed ${seed}, reopened`);
            }
          }
        }));
    }
  });
}
