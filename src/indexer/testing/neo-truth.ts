/**
 * What a fake NEO node's window holds, worked out without the indexer or the store: the NEP-5
 * transfers of the RPX `deploy` call as the fixture file lists them, the global-asset
 * transfers the chain layer derives from the node's blocks (inputs resolved from the window
 * itself, else from the node), each address's unspent value per asset, and the deployments.
 */
import assert from 'node:assert/strict';
import { createRpcClient } from '../../chains/jsonrpc/rpc-client.js';
import { createNeoSource } from '../../chains/neo/source.js';
import { loadExpectedNep5Transfers } from '../../chains/neo/testing/recordings.js';
import { RPX_HASH } from '../../chains/neo/testing/synthetic.js';
import type { NeoBlock, NeoContractDeployment, NeoCreatedOutput } from '../../chains/neo/types.js';
import {
  type AssetTransfer,
  deriveAssetTransfers,
  externalInputs,
  outputKey,
} from '../../chains/neo/utxo.js';
import { silentLogger } from '../../internal/logger.js';
import type { Store } from '../../store/types.js';
import { diffAddressViews, type ExpectedToken, type ViewTransfer } from './address-views.js';

/** The RPX `deploy` invocation of block 1444843. */
export const RPX_DEPLOY_TXID = '0xc920b2192e74eda4ca6140510813aa40fef1767d00c152aa6f8027c24bdf14f2';

export interface ExpectedNep5 {
  token: string;
  txHash: string;
  from: string;
  to: string;
  value: bigint;
}

export interface NeoWindowTruth {
  blocks: NeoBlock[];
  /** Asset id → its transfers, chain order. */
  assetTransfers: Map<string, AssetTransfer[]>;
  /** Asset id → address → created minus spent in the window (Fixed8 units), zero entries left out. */
  balances: Map<string, Map<string, bigint>>;
  /** The RPX mints of `expected_nep5_transfers.json` (counted ones), notification order. */
  rpxMints: ExpectedNep5[];
  deployments: NeoContractDeployment[];
}

/** Reads blocks `from..to` from the node at `url` and works out the truth of the window. */
export async function neoWindowTruth(url: string, from: number, to: number): Promise<NeoWindowTruth> {
  const logger = silentLogger();
  const source = createNeoSource({ rpc: createRpcClient({ url, logger }), logger });
  const blocks = await source.getBlocks(from, to);
  const created = new Map<string, NeoCreatedOutput>();
  for (const block of blocks) {
    for (const tx of block.transactions) {
      for (const output of tx.outputs)
        created.set(outputKey({ txid: tx.txid, n: output.n }), { ...output, txid: tx.txid });
    }
  }
  const older = await source.resolveOutputs(externalInputs(blocks));
  const lookup = (ref: { txid: string; n: number }) =>
    created.get(outputKey(ref)) ?? older.get(outputKey(ref));

  const assetTransfers = new Map<string, AssetTransfer[]>();
  const balances = new Map<string, Map<string, bigint>>();
  const add = (asset: string, address: string, value: bigint) => {
    let perAsset = balances.get(asset);
    if (perAsset === undefined) {
      perAsset = new Map();
      balances.set(asset, perAsset);
    }
    const after = (perAsset.get(address) ?? 0n) + value;
    if (after === 0n) perAsset.delete(address);
    else perAsset.set(address, after);
  };
  for (const block of blocks) {
    for (const transfer of deriveAssetTransfers(block, lookup, () => 8)) {
      const list = assetTransfers.get(transfer.token) ?? [];
      list.push(transfer);
      assetTransfers.set(transfer.token, list);
    }
    for (const tx of block.transactions) {
      for (const output of tx.outputs) add(output.asset, output.address, output.value);
      for (const input of tx.inputs) {
        const spent = lookup(input);
        if (spent === undefined) throw new Error(`input ${input.txid}:${input.n} unresolved`);
        add(spent.asset, spent.address, -spent.value);
      }
    }
  }

  const listed = loadExpectedNep5Transfers()[RPX_DEPLOY_TXID.slice(2)] ?? [];
  const rpxMints = listed
    .filter((t) => t.counted)
    .map((t) => ({
      token: t.contract,
      txHash: RPX_DEPLOY_TXID,
      from: t.from_address ?? '',
      to: t.to_address ?? '',
      value: BigInt(t.amount_raw),
    }));
  return { blocks, assetTransfers, balances, rpxMints, deployments: blocks.flatMap((b) => b.deployments) };
}

/** Addresses with a positive window balance of `asset`: its holders when the window is the whole history. */
export function holdersOf(truth: NeoWindowTruth, asset: string): number {
  return [...(truth.balances.get(asset)?.values() ?? [])].filter((v) => v > 0n).length;
}

/**
 * The store equals the truth of the window: every asset's transfers, holders and balances, RPX's
 * mints, deployments, and the address and holder views (`assertAddressViewsMatchTruth`).
 */
export async function assertStoreMatchesTruth(store: Store, truth: NeoWindowTruth): Promise<void> {
  for (const [asset, transfers] of truth.assetTransfers) {
    const token = await store.neo.getNeoToken('neo', asset);
    assert.ok(token, `asset ${asset} missing`);
    assert.equal(token.transferCount, transfers.length, `transfer count of ${asset}`);
    const stored = await store.reader.listTransfers('neo', asset, 0, 1000);
    const key = (t: {
      blockNumber: number;
      txIndex: number;
      txHash: string;
      from: string;
      to: string;
      value: bigint;
    }) => `${t.blockNumber}/${t.txIndex}/${t.txHash}/${t.from}/${t.to}/${t.value}`;
    assert.deepEqual(stored.map(key).sort(), transfers.map(key).sort(), `transfers of ${asset}`);
    assert.equal(token.holderCount, holdersOf(truth, asset), `holders of ${asset}`);
    for (const [address, balance] of truth.balances.get(asset) ?? []) {
      assert.equal(await store.reader.getBalance('neo', asset, address), balance, `${address} in ${asset}`);
    }
  }
  const rpx = await store.neo.getNeoToken('neo', RPX_HASH);
  assert.ok(rpx, 'RPX missing');
  assert.equal(rpx.transferCount, truth.rpxMints.length);
  assert.equal(rpx.holderCount, new Set(truth.rpxMints.map((m) => m.to)).size);
  const mints = await store.reader.listTransfers('neo', RPX_HASH, 0, 10);
  assert.deepEqual(
    mints
      .map((t) => ({ token: t.token, txHash: t.txHash, from: t.from, to: t.to, value: t.value }))
      .reverse(),
    truth.rpxMints,
  );
  for (const mint of truth.rpxMints) {
    assert.equal(await store.reader.getBalance('neo', RPX_HASH, mint.to), mint.value);
  }
  assert.deepEqual(
    (await store.neo.listNeoContracts('neo', 0, 50)).map((c) => [
      c.hash,
      c.time,
      c.name,
      c.author,
      c.ownerAddress,
    ]),
    truth.deployments.map((d) => [d.hash, d.time, d.name, d.author, d.ownerAddress]).reverse(),
  );
  await assertAddressViewsMatchTruth(store, truth);
}

/**
 * The window's truth as the address views must show it: each global asset with its balances from
 * the outputs (created minus spent) and its asset transfers; each NEP-5 token with the balances
 * its transfers give and those transfers (RPX's equal to the fixture file's mints: checked here).
 */
export function neoExpectedViews(truth: NeoWindowTruth): Map<string, ExpectedToken> {
  const expected = new Map<string, ExpectedToken>();
  for (const [asset, transfers] of truth.assetTransfers)
    expected.set(asset, { balances: truth.balances.get(asset) ?? new Map(), transfers });
  const nep5 = new Map<string, ViewTransfer[]>();
  for (const block of truth.blocks) {
    for (const t of block.nep5Transfers) {
      const list = nep5.get(t.token) ?? [];
      list.push(t);
      nep5.set(t.token, list);
    }
  }
  const rpx = (nep5.get(RPX_HASH) ?? []).map((t) => ({
    token: t.token,
    txHash: t.txHash,
    from: t.from,
    to: t.to,
    value: t.value,
  }));
  assert.deepEqual(rpx, truth.rpxMints, "the blocks' RPX transfers are the fixture file's mints");
  for (const [token, transfers] of nep5) {
    const balances = new Map<string, bigint>();
    for (const t of transfers) {
      if (t.from === t.to) continue;
      balances.set(t.from, (balances.get(t.from) ?? 0n) - t.value);
      balances.set(t.to, (balances.get(t.to) ?? 0n) + t.value);
    }
    expected.set(token, { balances, transfers });
  }
  return expected;
}

/**
 * The store's address and holder views equal the truth of the window: every token's holders,
 * every address's holdings, balance entries (NEO ones too) and transfer lists.
 */
export async function assertAddressViewsMatchTruth(store: Store, truth: NeoWindowTruth): Promise<void> {
  assert.deepEqual(
    await diffAddressViews(store.reader, 'neo', neoExpectedViews(truth), { neo: store.neo, max: 40 }),
    [],
    'address and holder views of the NEO window',
  );
}
