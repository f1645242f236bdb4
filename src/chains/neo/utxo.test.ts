import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TransferRecord } from '../../internal/records.js';
import { decodeBlock, parseBlock } from './block.js';
import { parseApplicationLog } from './nep5.js';
import { loadNeoscanRecordings } from './testing/recordings.js';
import { synthesizePrevouts } from './testing/synthetic.js';
import type { NeoBlock, NeoCreatedOutput, NeoOutputRef } from './types.js';
import {
  type AssetTransfer,
  createdOutputs,
  deriveAssetTransfers,
  externalInputs,
  GAS_ASSET_ID,
  NEO_ASSET_ID,
  outputKey,
  spentOutputs,
  UnresolvedInputError,
} from './utxo.js';

const recordings = loadNeoscanRecordings();
const rawBlock = (index: number) => recordings.blocks.find((b) => b.index === index)!;
const decoded = (index: number): NeoBlock => {
  const logs = new Map(
    recordings.applicationLogs.flatMap((l) => {
      const txid = (l.result as { txid: string }).txid;
      return txid === l.txid ? [[txid, parseApplicationLog(l.result, txid)] as const] : [];
    }),
  );
  return decodeBlock(parseBlock(rawBlock(index), index), logs).block;
};
const noLookup = () => undefined;
const noPrecision = (asset: string): number => {
  throw new Error(`unexpected asset ${asset}`);
};
/** An output table holding what `rows` create. */
const tableOf = (rows: readonly NeoCreatedOutput[]) => {
  const table = new Map(rows.map((row) => [outputKey(row), row]));
  return (ref: NeoOutputRef) => table.get(outputKey(ref));
};

describe('global-asset transfers', () => {
  test('genesis: all NEO issued to one address is a mint from ""', () => {
    const transfers = deriveAssetTransfers(decoded(0), noLookup, noPrecision);
    assert.deepEqual(transfers, [
      {
        token: NEO_ASSET_ID,
        blockNumber: 0,
        logIndex: 0,
        txIndex: 3,
        txHash: '0x3631f66024ca6f5b033d7e0809eb993443374830025af904fb51b0334f127cda',
        from: '',
        to: 'AQVh2pG732YvtNaxEGkQUei3YA4cvo7d2i',
        value: 100_000_000n,
        time: 1468595301,
        kind: 'issue',
      },
    ]);
  });

  test('block 1444843: miner fee and claims are mints; sends count per (sender, recipient), change excluded', () => {
    const block = decoded(1444843);
    // Owners of the spent outputs: the recorded blocks do not hold them (see testing/synthetic.ts).
    const prevouts = synthesizePrevouts([rawBlock(1444843)]);
    const rows = prevouts.flatMap((tx) =>
      (tx.vout as { n: number; asset: string; address: string }[]).map((o) => ({
        txid: tx.txid as string,
        n: o.n,
        asset: o.asset,
        address: o.address,
        value: 1n,
      })),
    );
    const transfers = deriveAssetTransfers(block, tableOf(rows), noPrecision);
    const summary = (t: AssetTransfer) => [t.txHash.slice(0, 10), t.kind, t.from, t.to, t.token, t.value];
    const mints = transfers.filter((t) => t.from === '');
    assert.deepEqual(mints.map((t) => t.kind).sort(), ['miner', ...Array(13).fill('claim')].sort());
    assert.deepEqual(summary(mints[0]!), [
      '0x2519fbc6',
      'miner',
      '',
      'ARtmDzcTZxHCYydqFxFw31d21CpSArZwi4',
      GAS_ASSET_ID,
      100_000n,
    ]);
    assert.deepEqual(summary(mints[1]!), [
      '0xa2e21393',
      'claim',
      '',
      'ATkhBJKYoNt9jpQTcvJ2eNXmg8fwQD5DZh',
      GAS_ASSET_ID,
      275_660n,
    ]);
    assert.deepEqual(transfers.filter((t) => t.from !== '').map(summary), [
      [
        '0x14572752',
        'transfer',
        'AH49unXqx7MvkhbQho5L5K2hQxQzCGoeBY',
        'AVWyFZeLKioKvsWDvVDKc4ECnWURwhVsrL',
        NEO_ASSET_ID,
        3n,
      ],
      [
        '0xb53eca9b',
        'transfer',
        'AHBRwoGQ9MJvEfc1DkLiGrrWKe3Vukpyds',
        'Aa9WRVhiPdMzEFz29RtLhZfAjw3vGQFWhe',
        NEO_ASSET_ID,
        20n,
      ],
      [
        '0x9ab972de',
        'transfer',
        'AFuiwwJBo1jLVHYSeSGrbsS5CfifoQMaGN',
        'AZnTptKwHL6pHrASQCvR9NZJNJzKS5yBdJ',
        NEO_ASSET_ID,
        800n,
      ],
      [
        '0x5e49d7a7',
        'transfer',
        'AV8kbruyQp5tuPUiLnUShzLXgzS9U7q8rm',
        'AdnsEEfYo8dYLAvkxHv41cu4Jnbu3wk1Wv',
        GAS_ASSET_ID,
        200_000n,
      ],
      [
        '0x5dcd724b',
        'transfer',
        'APfmW14PkL3C1sXx4dby2BXZhGPbQrfzTK',
        'AJFq4odEDo8AgihLaDE25J25wjFweAQvAY',
        NEO_ASSET_ID,
        1n,
      ],
      [
        '0xf8e045cd',
        'transfer',
        'AMya9cb9Y3ADgCrvpQoCgWfTGVo5Qp4UQV',
        'ALHupom7Skv6eLE2pFZYkfEae356LQzaQu',
        NEO_ASSET_ID,
        10n,
      ],
      [
        '0x28984693',
        'transfer',
        'AeNzkZzj5SSwo2bAN1xf5YE7m6NbVSoQcr',
        'ATSdbaQtu9Zr5eEmWuEQNQbQR4xgPkPVbi',
        GAS_ASSET_ID,
        1_000_000n,
      ],
    ]);
    assert.deepEqual(
      transfers.map((t) => t.logIndex),
      transfers.map((_, i) => i),
    );
    assert.ok(transfers.every((t, i) => i === 0 || t.txIndex >= transfers[i - 1]!.txIndex));
    assert.ok(transfers.every((t) => t.blockNumber === 1444843 && t.time === 1507466032));
    // The store keeps these as they are: they are TransferRecords.
    const asRecords: TransferRecord[] = transfers;
    assert.equal(asRecords.length, 21);
  });

  test('an input nobody resolved is an error naming it', () => {
    assert.throws(
      () => deriveAssetTransfers(decoded(1444843), noLookup, noPrecision),
      (error: unknown) => error instanceof UnresolvedInputError && error.ref.txid.startsWith('0xc8c96964'),
    );
  });

  test('several senders, several assets, in-block spends, fee-only and change-only assets', () => {
    const A = 'AQVh2pG732YvtNaxEGkQUei3YA4cvo7d2i';
    const B = 'AWrAn2pkW4LPj8qvduJsBxxhWmHEPNrYTB';
    const C = 'AZ1p8aZiAVvhjLVuJT6KU2pnyjg9nquxve';
    const TOKEN = `0x${'12'.repeat(32)}`;
    const base = {
      claims: [],
      sysFee: 0n,
      netFee: 0n,
      witnesses: [],
      firstWitnessAddress: null,
      attributes: [],
      script: null,
      faulted: null,
    };
    const block: NeoBlock = {
      index: 9,
      hash: `0x${'01'.repeat(32)}`,
      previousHash: `0x${'02'.repeat(32)}`,
      time: 99,
      nep5Transfers: [],
      deployments: [],
      assetRegistrations: [],
      transactions: [
        {
          ...base,
          index: 0,
          txid: `0x${'a0'.repeat(32)}`,
          type: 'MinerTransaction',
          inputs: [],
          outputs: [],
        },
        {
          // A and B pay C in NEO; A takes change; B pays a GAS fee only; C gets 150 units of a 2-decimal token.
          ...base,
          index: 1,
          txid: `0x${'a1'.repeat(32)}`,
          type: 'ContractTransaction',
          inputs: [
            { txid: `0x${'f0'.repeat(32)}`, n: 0 },
            { txid: `0x${'f0'.repeat(32)}`, n: 1 },
            { txid: `0x${'f0'.repeat(32)}`, n: 2 },
            { txid: `0x${'f0'.repeat(32)}`, n: 3 },
          ],
          outputs: [
            { n: 0, asset: NEO_ASSET_ID, value: 500_000_000n, address: C },
            { n: 1, asset: NEO_ASSET_ID, value: 100_000_000n, address: A },
            { n: 2, asset: TOKEN, value: 150_000_000n, address: C },
            { n: 3, asset: NEO_ASSET_ID, value: 100_000_000n, address: C },
          ],
        },
        {
          // C spends what it got in this very block and sends it all back to itself.
          ...base,
          index: 2,
          txid: `0x${'a2'.repeat(32)}`,
          type: 'ContractTransaction',
          inputs: [{ txid: `0x${'a1'.repeat(32)}`, n: 0 }],
          outputs: [{ n: 0, asset: NEO_ASSET_ID, value: 500_000_000n, address: C }],
        },
      ],
    };
    const prior: NeoCreatedOutput[] = [
      { txid: `0x${'f0'.repeat(32)}`, n: 0, asset: NEO_ASSET_ID, value: 400_000_000n, address: A },
      { txid: `0x${'f0'.repeat(32)}`, n: 1, asset: NEO_ASSET_ID, value: 300_000_000n, address: B },
      { txid: `0x${'f0'.repeat(32)}`, n: 2, asset: GAS_ASSET_ID, value: 1n, address: B },
      { txid: `0x${'f0'.repeat(32)}`, n: 3, asset: TOKEN, value: 150_000_000n, address: A },
    ];
    const transfers = deriveAssetTransfers(block, tableOf(prior), (asset) => (asset === TOKEN ? 2 : 0));
    assert.deepEqual(
      transfers.map((t) => [t.txIndex, t.from, t.to, t.token, t.value, t.kind]),
      [
        [1, A, C, NEO_ASSET_ID, 6n, 'transfer'],
        [1, B, C, NEO_ASSET_ID, 6n, 'transfer'],
        [1, A, C, TOKEN, 150n, 'transfer'],
      ],
    );
    assert.deepEqual(externalInputs([block]), block.transactions[1]!.inputs);
    assert.equal(createdOutputs([block]).length, 5);
    assert.equal(spentOutputs([block]).length, 5);
    // An amount finer than the asset's precision cannot be right.
    assert.throws(() => deriveAssetTransfers(block, tableOf(prior), () => 0), RangeError);
  });

  test('externalInputs leaves out what the blocks create and names each output once', () => {
    const block = decoded(1444843);
    const external = externalInputs([block, block]);
    assert.equal(external.length, 26);
    assert.equal(new Set(external.map(outputKey)).size, 26);
  });
});
