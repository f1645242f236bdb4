/**
 * The store contract suite, a seeded random history against the reference model: several tokens,
 * a few dozen addresses, batches of mints, burns, self-transfers, zero and uint256-sized values,
 * balances that go negative, deferred balances, a late start with starting balances, and
 * rollbacks; after every batch and rollback, every address and holder read is compared with
 * `testing/address-model.ts`.
 */
import { describe, test } from 'node:test';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { seededRandom } from '../../internal/random.js';
import { AddressModel } from '../testing/address-model.js';
import { assertAddressViews } from '../testing/address-model-check.js';
import { batch, blockHash, holder, tokenAddress, transferRecord } from '../testing/batches.js';
import type { IndexBatch, SeedBalance, TransferRecord } from '../types.js';
import type { ContractContext } from './fixtures.js';

/** Amounts around the edges a store may get wrong: 2^53, 2^64, 2^128, 2^256 − 1. */
const EDGES = [53n, 64n, 128n].flatMap((bits) => [(1n << bits) - 1n, 1n << bits, (1n << bits) + 1n]);
EDGES.push((1n << 256n) - 1n);

interface HistoryCase {
  seed: number;
  steps: number;
  /** Start at block 100 with starting balances (`IndexBatch.seeds`) read at block 99. */
  lateStart: boolean;
}

/** One seed each keeps the run to a few seconds on PostgreSQL; add seeds here to hunt a bug. */
const CASES: HistoryCase[] = [
  { seed: 16, steps: 14, lateStart: false },
  { seed: 1616, steps: 9, lateStart: true },
];

export function runAddressHistoryCases({ withStore }: ContractContext): void {
  describe('address reads over a random history', () => {
    for (const { seed, steps, lateStart } of CASES) {
      const what = lateStart ? 'a late start with seeds' : 'from genesis, balances deferred now and then';
      test(`seed ${seed}, ${what}: every read agrees with the reference model after every batch and rollback`, () =>
        withStore(async (store) => {
          const next = seededRandom(seed);
          const int = (n: number): number => Math.floor(next() * n);
          const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
          const tokens = Array.from({ length: 4 }, (_, i) => tokenAddress(i + 1));
          const holders = Array.from({ length: 20 }, (_, i) => holder(i + 1));
          const parties = [ZERO_ADDRESS, DEAD_ADDRESS, ...holders];
          const value = (): bigint => {
            const kind = next();
            if (kind < 0.12) return 0n;
            if (kind < 0.2) return pick(EDGES);
            if (kind < 0.3) return BigInt(Math.floor(next() * 2 ** 52)) << BigInt(int(200));
            // Small amounts, so that balances tie and holders empty now and then.
            return BigInt(1 + int(20));
          };
          const start = lateStart ? 100 : 1;
          const model = new AddressModel();
          let checkpoint = start - 1;
          for (let step = 0; step < steps; step++) {
            if (checkpoint > start + 2 && next() < 0.2) {
              const toBlock = Math.max(start, checkpoint - 1 - int(4));
              await store.writer.rollback('eth', toBlock, blockHash(toBlock));
              model.rollback('eth', toBlock);
              checkpoint = toBlock;
            } else {
              const from = checkpoint + 1;
              const to = from + int(3);
              const transfers: TransferRecord[] = [];
              for (let block = from; block <= to; block++) {
                const count = int(7);
                for (let log = 0; log < count; log++) {
                  const sender = next() < 0.25 ? ZERO_ADDRESS : pick(parties);
                  const recipient = next() < 0.1 ? sender : next() < 0.1 ? ZERO_ADDRESS : pick(parties);
                  transfers.push(
                    transferRecord({
                      token: pick(tokens),
                      blockNumber: block,
                      logIndex: log * 3 + int(3),
                      from: sender,
                      to: recipient,
                      value: value(),
                    }),
                  );
                }
              }
              const b: IndexBatch = { ...batch({ from, to, transfers }), deferBalances: next() < 0.4 };
              if (lateStart) {
                // Starting balances of most holders the batch names (some named again: ignored).
                const balances: SeedBalance[] = [];
                for (const t of transfers) {
                  for (const party of [t.from, t.to]) {
                    if (party !== ZERO_ADDRESS && next() < 0.8) {
                      balances.push({ token: t.token, holder: party, amount: next() < 0.3 ? 0n : value() });
                    }
                  }
                }
                b.seeds = { block: start - 1, balances, partial: false };
              }
              await store.writer.applyBatch(b);
              model.apply(b);
              checkpoint = to;
            }
            await assertAddressViews(store, model, 'eth', {
              label: `seed ${seed}, step ${step}`,
              pageSizes: [4, 50],
              extraAddresses: [holder(0xfff)],
            });
          }
        }));
    }
  });
}
