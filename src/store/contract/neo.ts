/**
 * The NEO part of the store contract suite (see `suite.ts`, which runs it unless a backend
 * opts out while its NEO tables are not written yet).
 *
 * Choices pinned down here:
 * - A global asset is a token whose address is its asset id; its transfers are counted but
 *   move no balance. Its balances are the sums of unspent outputs (Fixed8 units), so a holder
 *   is an address with unspent outputs. Spending an output the table never held (created
 *   before the index began) still takes its value from the owner's balance.
 * - Spent outputs leave the output table; an output created and spent in one batch never shows.
 * - `category` is `NEP5` for 20-byte hashes, else the stored asset type. `createdAt`/`creator`
 *   come from the deployment (NEP-5) or the registration (asset) when it lies inside the index.
 * - The first deployment of a hash and the first registration of an asset win; a later asset
 *   type replaces an earlier one.
 * - `rollback` refuses a chain holding NEO data.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { indexBatch, neoPart, tokenMetadata, transferRecord, hash32 as txid } from '../testing/batches.js';
import type {
  IndexBatch,
  NeoBatchPart,
  NeoContractRecord,
  NeoOutputRow,
  Store,
  TokenMetadata,
  TransferRecord,
} from '../types.js';
import type { ContractContext } from './fixtures.js';

export const CHAIN = 'neo';
export const NEO = '0xc56f33fc6ecfcd0c225c4ab356fee59390af8560be0e930faebe74a6daff7c9b';
export const GAS = '0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7';
export const RPX = '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9';
export const NEP5_B = '0x3a4acd3647086e7c44398aac0349802e6a171129';
/** Base58 addresses as NEO writes them (the store keeps them as text). */
export const A1 = 'AQVh2pG732YvtNaxEGkQUei3YA4cvo7d2i';
export const A2 = 'Abf2qMs1pzQb8kYk9RuxtUb9jtRKJVuBJt';
export const A3 = 'AWKECj9RD8rS8RPcpCgYVjk1DeYyHwxZm3';
export const A4 = 'AS23ifAE5YRQ95HweVnzRmjTtDYPSYjoDC';
export const ONE = 100_000_000n;

export const time = (block: number): number => 1_500_000_000 + block * 15;

export const NEO_META = tokenMetadata(NEO, { name: 'NEO', symbol: 'NEO', decimals: 0 });
export const GAS_META = tokenMetadata(GAS, { name: 'GAS', symbol: 'GAS', decimals: 8 });

export function output(tx: number, n: number, asset: string, address: string, value: bigint, block: number) {
  return { txid: txid(tx), n, asset, address, value, blockNumber: block };
}

export function assetTransfer(
  asset: string,
  block: number,
  logIndex: number,
  from: string,
  to: string,
  value: bigint,
  tx = 1000 + block,
): TransferRecord {
  return transferRecord({
    token: asset,
    blockNumber: block,
    logIndex,
    txIndex: logIndex,
    txHash: txid(tx),
    from,
    to,
    value,
    time: time(block),
  });
}

export function nep5Transfer(
  token: string,
  block: number,
  logIndex: number,
  from: string,
  to: string,
  value: bigint,
): TransferRecord {
  return transferRecord({
    token,
    blockNumber: block,
    logIndex,
    txIndex: 0,
    txHash: txid(5000 + block),
    from,
    to,
    value,
    time: time(block),
  });
}

function deployment(
  hash: string,
  block: number,
  txIndex: number,
  name: string,
  owner: string | null,
): NeoContractRecord {
  return {
    hash,
    blockNumber: block,
    txIndex,
    txHash: txid(7000 + block * 10 + txIndex),
    time: time(block),
    kind: 'Contract.Create',
    name,
    author: `author of ${name}`,
    ownerAddress: owner,
  };
}

export function neoBatch(
  from: number,
  to: number,
  parts: Partial<NeoBatchPart> & { transfers?: TransferRecord[]; tokens?: TokenMetadata[] },
): IndexBatch {
  const { transfers = [], tokens = [], ...neo } = parts;
  return indexBatch({
    chain: CHAIN,
    fromBlock: from,
    toBlock: to,
    toBlockHash: txid(0xb10c00 + to),
    transfers,
    tokens,
    pruneBlocksBelow: to + 1,
    neo: neoPart(neo),
  });
}

const row = (o: ReturnType<typeof output>): NeoOutputRow => ({
  txid: o.txid,
  n: o.n,
  asset: o.asset,
  address: o.address,
  value: o.value,
});

/** Genesis-like history: NEO and GAS registered in block 1, NEO issued to A1 and A2 in block 2. */
export const issue1 = output(2, 0, NEO, A1, 100n * ONE, 2);
export const issue2 = output(2, 1, NEO, A2, 50n * ONE, 2);
export function genesis(): IndexBatch {
  return neoBatch(1, 2, {
    tokens: [NEO_META],
    assets: [
      { asset: NEO, type: 'GoverningToken', registration: { blockNumber: 1, time: time(1), registrar: A2 } },
      { asset: GAS, type: 'UtilityToken', registration: { blockNumber: 1, time: time(1), registrar: null } },
    ],
    outputsCreated: [issue1, issue2],
    assetTransfers: [assetTransfer(NEO, 2, 0, '', A1, 100n, 2), assetTransfer(NEO, 2, 1, '', A2, 50n, 2)],
  });
}

export function runNeoCases({ withStore }: ContractContext): void {
  describe('NEO', () => {
    test('a global asset: transfers are counted, outputs make balances and holders', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(genesis());
        const neo = await store.neo.getNeoToken(CHAIN, NEO);
        assert.deepEqual(neo, {
          chain: CHAIN,
          address: NEO,
          name: 'NEO',
          symbol: 'NEO',
          decimals: 0,
          totalSupply: null,
          cap: null,
          burnedBalance: null,
          holderCount: 2,
          transferCount: 2,
          firstBlock: 2,
          icon: '',
          category: 'GoverningToken',
          createdAt: time(1),
          creator: A2,
        });
        assert.equal(await store.reader.getBalance(CHAIN, NEO, A1), 100n * ONE);
        assert.equal(await store.reader.getBalance(CHAIN, NEO, ''), 0n, 'a mint moves no balance from ""');
        // GAS was registered but has no output yet: it is no token of the index.
        assert.equal(await store.neo.getNeoToken(CHAIN, GAS), null);
        assert.deepEqual(
          await store.writer.getNeoOutputs(CHAIN, [issue1, issue2].map(row)),
          [issue1, issue2].map(row),
        );

        // Block 3: A1 sends 60 NEO to A3 (40 change) and pays a GAS fee with an output from
        // before the index; A4 receives GAS in an output that A4 spends in the same batch.
        const pre = output(900, 3, GAS, A4, 7n * ONE, 3);
        const send60 = output(3, 0, NEO, A3, 60n * ONE, 3);
        const change = output(3, 1, NEO, A1, 40n * ONE, 3);
        const gasIn = output(4, 0, GAS, A4, 2n * ONE, 3);
        const gasOut = output(5, 0, GAS, A3, 2n * ONE, 3);
        await store.writer.applyBatch(
          neoBatch(3, 3, {
            tokens: [GAS_META],
            outputsCreated: [send60, change, gasIn, gasOut],
            outputsSpent: [issue1, pre, gasIn].map((o) => ({ ...o, blockNumber: 3 })),
            assetTransfers: [
              assetTransfer(NEO, 3, 0, A1, A3, 60n, 3),
              assetTransfer(GAS, 3, 1, A4, A3, 2n * ONE, 5),
            ],
          }),
        );
        const after = await store.neo.getNeoToken(CHAIN, NEO);
        assert.equal(after?.holderCount, 3);
        assert.equal(after?.transferCount, 3);
        assert.equal(await store.reader.getBalance(CHAIN, NEO, A1), 40n * ONE);
        assert.equal(await store.reader.getBalance(CHAIN, NEO, A3), 60n * ONE);
        const gas = await store.neo.getNeoToken(CHAIN, GAS);
        assert.equal(gas?.category, 'UtilityToken');
        assert.equal(gas?.createdAt, time(1));
        assert.equal(gas?.creator, null);
        assert.equal(gas?.holderCount, 1, 'A3 holds GAS; A4 spent more than the index saw it receive');
        assert.equal(gas?.transferCount, 1);
        assert.equal(await store.reader.getBalance(CHAIN, GAS, A4), -7n * ONE);
        assert.deepEqual(
          await store.writer.getNeoOutputs(
            CHAIN,
            [issue1, issue2, pre, send60, change, gasIn, gasOut].map(row),
          ),
          [issue2, send60, change, gasOut].map(row),
        );
        assert.deepEqual(await store.writer.getCheckpoint(CHAIN), { block: 3, hash: txid(0xb10c03) });
      }));

    test('asset transfers are listed like any transfers, newest first', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(genesis());
        const list = await store.reader.listTransfers(CHAIN, NEO, 0, 10);
        assert.deepEqual(
          list.map((t) => [t.blockNumber, t.logIndex, t.from, t.to, t.value]),
          [
            [2, 1, '', A2, 50n],
            [2, 0, '', A1, 100n],
          ],
        );
      }));

    test('NEP-5 tokens: category NEP5, creation fields from a deployment inside the index', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          neoBatch(10, 12, {
            transfers: [
              nep5Transfer(RPX, 11, 0, '', A1, 5n),
              nep5Transfer(RPX, 12, 0, A1, A2, 2n),
              nep5Transfer(NEP5_B, 12, 1, '', A3, 9n),
            ],
            tokens: [
              { address: RPX, name: 'Red Pulse Token', symbol: 'RPX', decimals: 8 },
              { address: NEP5_B, name: '', symbol: '', decimals: 0 },
            ],
            deployments: [deployment(RPX, 10, 1, 'RPX', A4)],
          }),
        );
        const rpx = await store.neo.getNeoToken(CHAIN, RPX);
        assert.equal(rpx?.category, 'NEP5');
        assert.equal(rpx?.createdAt, time(10));
        assert.equal(rpx?.creator, A4);
        assert.equal(rpx?.holderCount, 2);
        assert.equal(rpx?.transferCount, 2);
        const other = await store.neo.getNeoToken(CHAIN, NEP5_B);
        assert.equal(other?.category, 'NEP5');
        assert.equal(other?.createdAt, null, 'deployed before the index began');
        assert.equal(other?.creator, null);
        // The common read agrees on the common fields.
        const { category: _c, createdAt: _t, creator: _o, ...common } = rpx!;
        assert.deepEqual(await store.reader.getToken(CHAIN, RPX), common);
      }));

    test('the contract list is newest first, keeps the first deployment of a hash, and pages', () =>
      withStore(async (store) => {
        const a = deployment(RPX, 20, 3, 'first', A1);
        const b = deployment(NEP5_B, 21, 0, 'b', null);
        const c = { ...deployment(`0x${'cd'.repeat(20)}`, 21, 4, 'c', A2), kind: 'PublishTransaction' };
        await store.writer.applyBatch(neoBatch(20, 20, { deployments: [a] }));
        await store.writer.applyBatch(
          neoBatch(21, 21, { deployments: [b, c, { ...deployment(RPX, 21, 5, 'again', A3) }] }),
        );
        assert.deepEqual(await store.neo.listNeoContracts(CHAIN, 0, 10), [c, b, a]);
        assert.deepEqual(await store.neo.listNeoContracts(CHAIN, 1, 1), [b]);
        assert.deepEqual(await store.neo.listNeoContracts(CHAIN, 3, 10), []);
        assert.deepEqual(await store.neo.listNeoContracts('other', 0, 10), []);
      }));

    test('the NEO token list holds assets and NEP-5 tokens, ordered like the token list', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(genesis());
        await store.writer.applyBatch(
          neoBatch(3, 3, {
            transfers: [
              nep5Transfer(RPX, 3, 0, '', A1, 1n),
              nep5Transfer(RPX, 3, 1, '', A2, 1n),
              nep5Transfer(RPX, 3, 2, '', A3, 1n),
              nep5Transfer(NEP5_B, 3, 3, '', A1, 1n),
            ],
            tokens: [
              { address: RPX, name: 'R', symbol: 'R', decimals: 8 },
              { address: NEP5_B, name: 'B', symbol: 'B', decimals: 8 },
            ],
          }),
        );
        const page = await store.neo.listNeoTokens(CHAIN, 0, 10);
        assert.equal(page.total, 3);
        // RPX: 3 holders; NEO: 2 holders, 2 transfers; NEP5_B: 1 holder.
        assert.deepEqual(
          page.tokens.map((t) => [t.address, t.category, t.holderCount]),
          [
            [RPX, 'NEP5', 3],
            [NEO, 'GoverningToken', 2],
            [NEP5_B, 'NEP5', 1],
          ],
        );
        assert.deepEqual(page.tokens[1], await store.neo.getNeoToken(CHAIN, NEO));
        assert.deepEqual(
          (await store.neo.listNeoTokens(CHAIN, 2, 5)).tokens.map((t) => t.address),
          [NEP5_B],
        );
        assert.deepEqual(await store.neo.listNeoTokens(CHAIN, 5, 5), { total: 3, tokens: [] });
        assert.deepEqual(
          (await store.reader.listTokens(CHAIN, 0, 10)).tokens.map((t) => t.address),
          page.tokens.map((t) => t.address),
        );
      }));

    test('asset facts: a later type replaces an earlier one, the first registration stays', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(
          neoBatch(1, 1, {
            tokens: [GAS_META],
            outputsCreated: [output(1, 0, GAS, A1, ONE, 1)],
            assets: [
              { asset: GAS, type: null, registration: { blockNumber: 1, time: time(1), registrar: A1 } },
            ],
          }),
        );
        assert.equal((await store.neo.getNeoToken(CHAIN, GAS))?.category, 'Token', 'no type recorded yet');
        await store.writer.applyBatch(
          neoBatch(2, 2, {
            assets: [
              {
                asset: GAS,
                type: 'UtilityToken',
                registration: { blockNumber: 2, time: time(2), registrar: A2 },
              },
            ],
          }),
        );
        const gas = await store.neo.getNeoToken(CHAIN, GAS);
        assert.equal(gas?.category, 'UtilityToken');
        assert.equal(gas?.createdAt, time(1));
        assert.equal(gas?.creator, A1);
      }));

    test('a NEO batch that does not fit is rejected and changes nothing', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(genesis());
        const before = {
          token: await store.neo.getNeoToken(CHAIN, NEO),
          checkpoint: await store.writer.getCheckpoint(CHAIN),
          contracts: await store.neo.listNeoContracts(CHAIN, 0, 10),
        };
        const spend = { ...issue1, blockNumber: 3 };
        const bad: [string, IndexBatch][] = [
          [
            'an output outside the range',
            neoBatch(3, 3, { outputsSpent: [spend], outputsCreated: [output(3, 0, NEO, A3, ONE, 4)] }),
          ],
          [
            'an asset without metadata',
            neoBatch(3, 3, {
              outputsSpent: [spend],
              outputsCreated: [output(3, 0, GAS, A3, ONE, 3)],
              deployments: [deployment(RPX, 3, 0, 'x', A1)],
            }),
          ],
          [
            'a deployment outside the range',
            neoBatch(3, 3, { deployments: [deployment(RPX, 2, 0, 'x', A1)] }),
          ],
          ['a gap before the batch', neoBatch(4, 4, { outputsSpent: [{ ...spend, blockNumber: 4 }] })],
        ];
        for (const [what, batch] of bad) {
          await assert.rejects(store.writer.applyBatch(batch), what);
          assert.deepEqual(
            {
              token: await store.neo.getNeoToken(CHAIN, NEO),
              checkpoint: await store.writer.getCheckpoint(CHAIN),
              contracts: await store.neo.listNeoContracts(CHAIN, 0, 10),
            },
            before,
            what,
          );
          assert.deepEqual(await store.writer.getNeoOutputs(CHAIN, [row(issue1)]), [row(issue1)], what);
        }
      }));

    test('a chain holding NEO data is never rolled back', () =>
      withStore(async (store) => {
        await store.writer.applyBatch(genesis());
        await store.writer.applyBatch(neoBatch(3, 4, {}));
        await assert.rejects(store.writer.rollback(CHAIN, 2, null));
        assert.equal((await store.writer.getCheckpoint(CHAIN))?.block, 4);
        assert.equal((await store.neo.getNeoToken(CHAIN, NEO))?.transferCount, 2);
      }));

    test('NEO data survives close and reopen', () =>
      withStore(async (store, context) => {
        if (context.reopen === undefined) return;
        await store.writer.applyBatch(genesis());
        await store.writer.applyBatch(neoBatch(3, 3, { deployments: [deployment(RPX, 3, 0, 'r', A1)] }));
        const read = async (s: Store) => ({
          token: await s.neo.getNeoToken(CHAIN, NEO),
          list: await s.neo.listNeoTokens(CHAIN, 0, 10),
          contracts: await s.neo.listNeoContracts(CHAIN, 0, 10),
          outputs: await s.writer.getNeoOutputs(CHAIN, [issue1, issue2].map(row)),
        });
        const before = await read(store);
        await store.close();
        assert.deepEqual(await read(await context.reopen()), before);
      }));
  });
}
