/**
 * The store contract suite, NEO address operations and holders: global-asset balances come from
 * outputs while their transfers count and list like any transfer; NEP-5 tokens behave as EVM
 * tokens with `""` as the mint party; `listNeoAddressBalances` adds the NEO token records.
 * Run with the NEO cases (see `suite.ts`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AddressModel } from '../testing/address-model.js';
import { applyToBoth, assertAddressViews } from '../testing/address-model-check.js';
import type { IndexBatch, Store } from '../types.js';
import type { ContractContext } from './fixtures.js';
import {
  A1,
  A2,
  A3,
  A4,
  assetTransfer,
  CHAIN,
  GAS,
  GAS_META,
  genesis,
  issue1,
  issue2,
  NEO,
  neoBatch,
  nep5Transfer,
  ONE,
  output,
  RPX,
} from './neo.js';

const RPX_META = { address: RPX, name: 'Red Pulse Token', symbol: 'RPX', decimals: 8 };

/**
 * Block 3: A1 sends 60 NEO to A3 (40 change); A4 pays A3 2 GAS with an output from before the
 * index; RPX is minted to A1, who sends some to A2. Block 4: A2 sends 5 NEO to A1 (A1 and A2 then
 * tie), A3 sends 1 GAS to A1 and A1 sends 1 RPX to A3, all three at log index 0.
 */
const gasOut = output(5, 0, GAS, A3, 2n * ONE, 3);
function history(): IndexBatch[] {
  const pre = output(900, 3, GAS, A4, 7n * ONE, 3);
  return [
    genesis(),
    neoBatch(3, 3, {
      tokens: [GAS_META, RPX_META],
      outputsCreated: [output(3, 0, NEO, A3, 60n * ONE, 3), output(3, 1, NEO, A1, 40n * ONE, 3), gasOut],
      outputsSpent: [issue1, pre].map((o) => ({ ...o, blockNumber: 3 })),
      assetTransfers: [
        assetTransfer(NEO, 3, 0, A1, A3, 60n, 3),
        assetTransfer(GAS, 3, 1, A4, A3, 2n * ONE, 5),
      ],
      transfers: [nep5Transfer(RPX, 3, 2, '', A1, 5n), nep5Transfer(RPX, 3, 3, A1, A2, 2n)],
    }),
    neoBatch(4, 4, {
      outputsCreated: [
        output(6, 0, NEO, A1, 5n * ONE, 4),
        output(6, 1, NEO, A2, 45n * ONE, 4),
        output(7, 0, GAS, A1, ONE, 4),
        output(7, 1, GAS, A3, ONE, 4),
      ],
      outputsSpent: [issue2, gasOut].map((o) => ({ ...o, blockNumber: 4 })),
      assetTransfers: [assetTransfer(NEO, 4, 0, A2, A1, 5n, 6), assetTransfer(GAS, 4, 0, A3, A1, ONE, 7)],
      transfers: [nep5Transfer(RPX, 4, 0, A1, A3, 1n)],
    }),
  ];
}

async function neoBalancesOf(store: Store, address: string) {
  return (await store.neo.listNeoAddressBalances(CHAIN, address)).map((b) => [
    b.token.address,
    b.token.category,
    b.balance,
    b.transferCount,
  ]);
}

export function runNeoAddressCases({ withStore }: ContractContext): void {
  describe('NEO address balances, transfers and holders', () => {
    test('asset balances from outputs, asset transfers counted and listed, NEP-5 as EVM', () =>
      withStore(async (store) => {
        const model = new AddressModel();
        for (const b of history()) {
          await store.writer.applyBatch(b);
          model.apply(b);
          await assertAddressViews(store, model, CHAIN, { neo: true, label: `after block ${b.toBlock}` });
        }
        // Token order: NEO (3 holders, 4 transfers), RPX (3 holders, 3 transfers), GAS (2 holders).
        assert.deepEqual(await neoBalancesOf(store, A1), [
          [NEO, 'GoverningToken', 45n * ONE, 3],
          [RPX, 'NEP5', 2n, 3],
          [GAS, 'UtilityToken', ONE, 1],
        ]);
        assert.deepEqual(await neoBalancesOf(store, A3), [
          [NEO, 'GoverningToken', 60n * ONE, 1],
          [RPX, 'NEP5', 1n, 1],
          [GAS, 'UtilityToken', ONE, 2],
        ]);
        const plain = await store.reader.listAddressBalances(CHAIN, A1);
        assert.deepEqual(
          plain.map((b) => [b.token.address, b.balance, b.transferCount]),
          [
            [NEO, 45n * ONE, 3],
            [RPX, 2n, 3],
            [GAS, ONE, 1],
          ],
        );
        // A4 spent more GAS than the index saw it receive: no holding, but the transfer counts.
        assert.deepEqual(await store.neo.listNeoAddressBalances(CHAIN, A4), []);
        assert.deepEqual(await store.reader.getAddressHolding(CHAIN, A4, GAS), {
          balance: -7n * ONE,
          transferCount: 1,
        });
        // "" is the mint party: it holds nothing; its transfer list holds the mints.
        assert.deepEqual(await store.neo.listNeoAddressBalances(CHAIN, ''), []);
        assert.deepEqual(await store.reader.listAddressBalances(CHAIN, ''), []);
        assert.deepEqual(
          (await store.reader.listAddressTransfers(CHAIN, '', null, 0, 10)).map((t) => [
            t.blockNumber,
            t.logIndex,
            t.token,
          ]),
          [
            [3, 2, RPX],
            [2, 1, NEO],
            [2, 0, NEO],
          ],
        );
        // Ties between tokens at one (block, log index): token address descending.
        assert.deepEqual(
          (await store.reader.listAddressTransfers(CHAIN, A1, null, 0, 4)).map((t) => [
            t.blockNumber,
            t.logIndex,
            t.token,
          ]),
          [
            [4, 0, RPX],
            [4, 0, NEO],
            [4, 0, GAS],
            [3, 3, RPX],
          ],
        );
        assert.deepEqual(
          (await store.reader.listAddressTransfers(CHAIN, A1, null, 1, 2)).map((t) => t.token),
          [NEO, GAS],
        );
        // Holders of an asset are owners of unspent outputs; ties by address in code-unit order
        // ("AQ…" before "Ab…", whatever a collation thinks of case).
        assert.deepEqual(await store.reader.listHolders(CHAIN, NEO, 0, 10), [
          { address: A3, balance: 60n * ONE },
          { address: A1, balance: 45n * ONE },
          { address: A2, balance: 45n * ONE },
        ]);
        assert.deepEqual(await store.scans.scanHolders(CHAIN, NEO, { address: A1, balance: 45n * ONE }, 10), [
          { address: A2, balance: 45n * ONE },
        ]);
        assert.deepEqual(await store.reader.listHolders(CHAIN, GAS, 0, 10), [
          { address: A1, balance: ONE },
          { address: A3, balance: ONE },
        ]);
      }));

    test('NEO address reads survive close and reopen', () =>
      withStore(async (store, context) => {
        if (context.reopen === undefined) return;
        const model = new AddressModel();
        await applyToBoth(store, model, history());
        await store.close();
        await assertAddressViews(await context.reopen(), model, CHAIN, { neo: true });
      }));
  });
}
