/**
 * The store contract suite, bulk loads (`IndexBatch.bulkLoad`): a seeded random history loaded
 * into a chain without transfers as a bulk load, ended by a batch without the flag or by a
 * rollback, reads like the reference model afterwards; while the load goes on, the checkpoint
 * moves with each batch and reads are as of the block before the load (or current). Both stores
 * take the flag (SQLite: store/sqlite/bulk-load.ts; PostgreSQL: store/postgres/bulk-load.ts, which
 * stages the batches and builds the chain's partitions anew), so these cases run their real path
 * on both; a store that ignored the flag would pass the same checks.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { seededRandom } from '../../internal/random.js';
import { AddressModel } from '../testing/address-model.js';
import { assertAddressViews } from '../testing/address-model-check.js';
import { batch, blockHash, holder, tokenAddress, transferRecord } from '../testing/batches.js';
import type { IndexBatch, TransferRecord } from '../types.js';
import type { ContractContext } from './fixtures.js';

export function runBulkLoadCases({ withStore }: ContractContext): void {
  describe('bulk loads', () => {
    for (const end of ['a batch without the flag', 'a rollback'] as const) {
      test(`a load ended by ${end} reads like the model: counts, balances, holders, address views`, () =>
        withStore(async (store) => {
          const next = seededRandom(end === 'a rollback' ? 7 : 17);
          const int = (n: number): number => Math.floor(next() * n);
          const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
          const tokens = Array.from({ length: 5 }, (_, i) => tokenAddress(i + 1));
          const parties = [
            ZERO_ADDRESS,
            DEAD_ADDRESS,
            ...Array.from({ length: 25 }, (_, i) => holder(i + 1)),
          ];
          const value = (): bigint =>
            next() < 0.3 ? BigInt(Math.floor(next() * 2 ** 52)) << BigInt(int(180)) : BigInt(int(30));
          const model = new AddressModel();
          const steps = 8;
          for (let step = 0; step < steps; step++) {
            const from = step * 4 + 1;
            const transfers: TransferRecord[] = [];
            for (let block = from; block < from + 4; block++) {
              for (let log = 0; log < 6; log++) {
                const sender = pick(parties);
                transfers.push(
                  transferRecord({
                    token: pick(tokens),
                    blockNumber: block,
                    logIndex: log,
                    from: sender,
                    to: next() < 0.1 ? sender : pick(parties),
                    value: value(),
                  }),
                );
              }
            }
            const last = step === steps - 1 && end === 'a batch without the flag';
            const b: IndexBatch = {
              ...batch({ from, to: from + 3, transfers }),
              continues: step === 0 ? null : from - 1,
              ...(last ? {} : { deferBalances: true, bulkLoad: true }),
            };
            await store.writer.applyBatch(b);
            model.apply(b);
            const status = await store.reader.getChainStatus('eth');
            assert.equal(status?.indexed, from + 3);
            // Loading: reads stay as of the block before the load, or are current.
            if (!last) assert.ok(status?.balancesBlock === undefined || status.balancesBlock === 0);
            else assert.equal(status?.balancesBlock, undefined);
          }
          if (end === 'a rollback') {
            await store.writer.rollback('eth', 21, blockHash(21));
            model.rollback('eth', 21);
            assert.equal((await store.reader.getChainStatus('eth'))?.balancesBlock, undefined);
          }
          await assertAddressViews(store, model, 'eth', { label: end, pageSizes: [4, 50] });
          for (const token of tokens) {
            const record = await store.reader.getToken('eth', token);
            const transfers = await store.reader.listTransfers('eth', token, 0, 1_000);
            assert.equal(record?.transferCount ?? 0, transfers.length, `${end}: transfer count of ${token}`);
          }
        }));
    }
  });
}
