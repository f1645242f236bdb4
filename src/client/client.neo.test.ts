/**
 * The typed client's NEO operations against a running tokenquery: the real CLI (`tokenquery
 * start`) indexing the fake NEO node's window around mainnet block 1444843 (the RPX `deploy`
 * call, see src/indexer/testing/neo-window.ts), with a key made by `tokenquery keys create`.
 * Expected values come from the recordings and the window's truth (neo-truth.ts), never from
 * the server; src/cli/neo.e2e.test.ts checks the same data over raw HTTP.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type FakeNeoNode,
  type FakeNeoNodeOptions,
  startFakeNeoNode,
} from '../chains/neo/testing/fake-neo-node.js';
import { loadNeoscanRecordings } from '../chains/neo/testing/recordings.js';
import { RPX_DEPLOY_BLOCK, RPX_HASH } from '../chains/neo/testing/synthetic.js';
import { GAS_ASSET_ID, NEO_ASSET_ID } from '../chains/neo/utxo.js';
import {
  apiUrl,
  type CliProcess,
  eventually,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from '../cli/testing/cli-process.js';
import {
  holdersOf,
  type NeoWindowTruth,
  neoWindowTruth,
  RPX_DEPLOY_TXID,
} from '../indexer/testing/neo-truth.js';
import { EXTRAS_BLOCK, neoIndexerWindow, PUBLISH_TXID } from '../indexer/testing/neo-window.js';
import {
  createTokenqueryClient,
  InvalidApiKeyError,
  InvalidParameterError,
  type NeoTokenInfo,
  NoDataError,
  type TokenqueryClient,
  UnsupportedCoinError,
} from './index.js';
import { rejectsWithApiError } from './testing/expect.js';

/** The smallest window the NEO indexer's own tests use: block 1444843 and the synthetic block after it. */
const FROM = RPX_DEPLOY_BLOCK - 3;
const TO = EXTRAS_BLOCK + 2;

let nodeOptions: FakeNeoNodeOptions;
let node: FakeNeoNode;
let truth: NeoWindowTruth;
let server: CliProcess;
let client: TokenqueryClient;
let key: string;

before(async () => {
  nodeOptions = neoIndexerWindow(FROM, TO);
  node = await startFakeNeoNode(nodeOptions);
  truth = await neoWindowTruth(node.url, FROM, TO);
  const db = join(tempDir('tq-client-neo-'), 'neo.sqlite');
  server = spawnCli([
    'start',
    ...['--rpc', `neo=${node.url}`, '--from-block', `neo=${FROM}`, '--db', db, '--port', '0'],
    ...['--poll-interval', '50'],
  ]);
  const baseUrl = await apiUrl(server, 'tokenquery started');
  const created = await runCli(['keys', 'create', '--label', 'client', '--db', db]);
  assert.equal(created.code, 0, created.stderr);
  key = lines(created.stdout).at(-1)!;
  client = createTokenqueryClient({ baseUrl, apiKey: key });
  // The tokenquery-only helper says when the window is indexed.
  await eventually(
    async () => ((await client.tokenquery.status()).chains.neo?.indexed === TO ? true : undefined),
    20_000,
    'neo indexed to the head',
  );
});

after(async () => {
  await server?.stop('SIGTERM');
  await node?.close();
  removeTempDirs();
});

/** `getassetstate` of an asset as the fake node serves it. */
function assetState(id: string): { available: string; amount: string } {
  const state = nodeOptions.assets?.find((a) => a.id === id) as
    | { available: string; amount: string }
    | undefined;
  assert.ok(state, `no asset state for ${id}`);
  return state;
}

const transfersOf = (id: string) => truth.assetTransfers.get(id) ?? [];

/** The NEO token info object of a token whose metadata the window does not hold (RPX). */
const RPX_INFO: NeoTokenInfo = {
  appendixData: null,
  pending: null,
  h: RPX_HASH,
  p: null,
  f: '',
  s: '',
  d: '0',
  t: null,
  c: 'NEP5',
  i: null,
  o: null,
  l: null,
};

describe('typed client, NEO family, against a running tokenquery', () => {
  test('Token Info: RPX exact, in any spelling of its hash; the NEO asset', async () => {
    const holders = new Set(truth.rpxMints.map((m) => m.to)).size;
    for (const hash of [RPX_HASH, RPX_HASH.slice(2), RPX_HASH.toUpperCase()]) {
      assert.deepEqual(await client.neo.tokenInfo({ hash }), {
        appendixData: null,
        pending: null,
        network: 'NEO',
        tokenHash: RPX_HASH,
        transferCnt: truth.rpxMints.length,
        holderCnt: holders,
        contract: null,
        circulationSupply: null,
        tokenInfo: RPX_INFO,
      });
    }
    assert.equal(truth.rpxMints.length, 3);
    const neo = await client.neo.tokenInfo({ hash: NEO_ASSET_ID });
    assert.deepEqual(
      [neo.transferCnt, neo.holderCnt, neo.tokenInfo.c, neo.tokenInfo.f, neo.tokenInfo.t],
      [transfersOf(NEO_ASSET_ID).length, holdersOf(truth, NEO_ASSET_ID), 'GoverningToken', 'NEO', null],
    );
  });

  test('Total and Max Supply: the assets as exact text; NoDataError when the supply is unknown', async () => {
    for (const id of [NEO_ASSET_ID, GAS_ASSET_ID]) {
      const state = assetState(id);
      assert.equal(await client.neo.totalSupply({ hash: id }), state.available, id);
      assert.equal(await client.neo.maxSupply({ hash: id }), state.amount, id);
    }
    const noData = { code: 404, httpStatus: 200, message: '无数据' };
    await rejectsWithApiError(client.neo.totalSupply({ hash: RPX_HASH }), NoDataError, noData);
    await rejectsWithApiError(client.neo.maxSupply({ hash: RPX_HASH }), NoDataError, noData);
  });

  test('Token Transaction List: RPX mints newest first; the NEO asset; paging', async () => {
    const rpx = await client.neo.transfers({ hash: RPX_HASH });
    const block = truth.blocks.find((b) => b.index === RPX_DEPLOY_BLOCK)!;
    const invocation = block.transactions.find((tx) => tx.txid === RPX_DEPLOY_TXID)!;
    assert.deepEqual(
      rpx,
      [...truth.rpxMints].reverse().map((mint) => ({
        index: invocation.index,
        block_no: RPX_DEPLOY_BLOCK,
        token: null,
        asset: null,
        tokenAddr: RPX_HASH,
        tokenSymbol: '',
        tokenDecimals: '0',
        time: block.time,
        txid: RPX_DEPLOY_TXID,
        tokenInfo: RPX_INFO,
        confirmations: TO - RPX_DEPLOY_BLOCK + 1,
        type: null,
        from: '',
        to: mint.to,
        fromAlias: null,
        toAlias: null,
        value: mint.value.toString(),
        valueIsNft: null,
        fromIsContract: null,
        toIsContract: null,
        amount: null,
      })),
    );
    assert.deepEqual(await client.neo.transfers({ hash: RPX_HASH, page: 2, size: 2 }), [rpx[2]]);
    assert.deepEqual(await client.neo.transfers({ hash: RPX_HASH, page: 2, size: 50 }), []);

    const neo = await client.neo.transfers({ hash: NEO_ASSET_ID, size: 50 });
    assert.deepEqual(
      neo.map((r) => [r.block_no, r.index, r.txid, r.from, r.to, BigInt(r.value), r.confirmations]),
      [...transfersOf(NEO_ASSET_ID)]
        .reverse()
        .map((t) => [t.blockNumber, t.txIndex, t.txHash, t.from, t.to, t.value, TO - t.blockNumber + 1]),
    );
    assert.ok(neo.length > 0);
  });

  test('Assets (Token) Info: the NEO asset with its supply, RPX with t null', async () => {
    assert.deepEqual(await client.neo.assetInfo({ hash: NEO_ASSET_ID }), {
      network: 'NEO',
      tokenHash: NEO_ASSET_ID,
      transferCnt: transfersOf(NEO_ASSET_ID).length,
      holderCnt: holdersOf(truth, NEO_ASSET_ID),
      tokenInfo: {
        h: NEO_ASSET_ID,
        f: 'NEO',
        s: 'NEO',
        d: '0',
        t: assetState(NEO_ASSET_ID).available,
        c: 'GoverningToken',
        i: null,
        o: null,
      },
    });
    const { appendixData: _a, pending: _p, p: _chain, l: _l, ...rpxAsset } = RPX_INFO;
    assert.deepEqual((await client.neo.assetInfo({ hash: RPX_HASH.slice(2) })).tokenInfo, rpxAsset);
  });

  test('Assets (Token) List On Chain: assets and NEP-5 tokens ranked, supplies as text, paging', async () => {
    const holders = new Map([...truth.assetTransfers.keys()].map((id) => [id, holdersOf(truth, id)]));
    const transfers = new Map([...truth.assetTransfers].map(([id, list]) => [id, list.length]));
    holders.set(RPX_HASH, new Set(truth.rpxMints.map((m) => m.to)).size);
    transfers.set(RPX_HASH, truth.rpxMints.length);
    const ranked = [...holders.keys()].sort(
      (a, b) =>
        holders.get(b)! - holders.get(a)! || transfers.get(b)! - transfers.get(a)! || (a < b ? -1 : 1),
    );
    const page = await client.neo.assets();
    assert.deepEqual(
      [page.page, page.size, page.total, page.appendixData, page.pending, page.note],
      [1, 50, ranked.length, null, null, null],
    );
    assert.deepEqual(
      page.data.map((e) => [e.tokenInfo.h, e.holderCnt, e.circulationSupply]),
      ranked.map((id) => [id, holders.get(id), id === RPX_HASH ? null : assetState(id).available]),
    );
    for (const entry of page.data) {
      assert.equal(entry.circulationSupply, entry.tokenInfo.t);
      assert.deepEqual([entry.network, entry.tokenHash, entry.transferCnt], [null, null, null]);
    }
    assert.ok(ranked.length >= 3, 'NEO, GAS and RPX');
    const last = await client.neo.assets({ page: 2, size: 2 });
    assert.deepEqual(last.data, page.data.slice(2, 4));
    assert.deepEqual((await client.neo.assets({ page: 50, size: 50 })).data, []);
  });

  test('Contracts List On Chain: the deployment inside the window', async () => {
    const recorded = loadNeoscanRecordings().transactions.find((tx) => tx.txid === PUBLISH_TXID)!;
    const contract = recorded.contract as { name: string; author: string; code: { hash: string } };
    const block = truth.blocks.find((b) => b.index === EXTRAS_BLOCK)!;
    assert.deepEqual(await client.neo.contracts({ page: 1, size: 10 }), [
      {
        createTime: block.time,
        author: contract.author,
        name: contract.name,
        contractAddress: contract.code.hash,
        ownerAddress: (recorded.vout as { address: string }[])[0]!.address,
      },
    ]);
    assert.deepEqual(await client.neo.contracts({ page: 2, size: 10 }), []);
  });

  test('errors: bad key, unknown hash, malformed hash, bad page, EVM on a NEO-only server', async () => {
    const wrong = createTokenqueryClient({ baseUrl: client.baseUrl, apiKey: 'not-a-key' });
    const invalidKey = { code: 50003, httpStatus: 401, message: 'invalid apikey' };
    await rejectsWithApiError(wrong.neo.tokenInfo({ hash: RPX_HASH }), InvalidApiKeyError, invalidKey);
    await rejectsWithApiError(wrong.neo.totalSupply({ hash: NEO_ASSET_ID }), InvalidApiKeyError, invalidKey);

    const unknown = `0x${'12'.repeat(20)}`;
    const noData = { code: 404, httpStatus: 200, message: '无数据' };
    await rejectsWithApiError(client.neo.tokenInfo({ hash: unknown }), NoDataError, noData, [key]);
    await rejectsWithApiError(client.neo.assetInfo({ hash: `0x${'34'.repeat(32)}` }), NoDataError, noData);
    await rejectsWithApiError(client.neo.transfers({ hash: unknown }), NoDataError, noData);

    const badHash = {
      code: 10001,
      httpStatus: 200,
      message: /^invalid parameter: address must be a NEO script hash/,
    };
    await rejectsWithApiError(client.neo.tokenInfo({ hash: '0x12' }), InvalidParameterError, badHash);
    await rejectsWithApiError(client.neo.maxSupply({ hash: 'not a hash' }), InvalidParameterError, badHash);

    const badPage = { code: 10001, httpStatus: 200, message: /^invalid parameter: (page|size) must be/ };
    await rejectsWithApiError(client.neo.assets({ page: 0 }), InvalidParameterError, badPage);
    await rejectsWithApiError(client.neo.contracts({ size: 51 }), InvalidParameterError, badPage);
    // The parameters are checked before the token.
    await rejectsWithApiError(
      client.neo.transfers({ hash: unknown, page: 51 }),
      InvalidParameterError,
      badPage,
    );

    const unsupported = { code: 50001, httpStatus: 200, message: 'unsupport coin' };
    await rejectsWithApiError(
      client.evm.tokenInfo({ chain: 'eth', address: `0x${'ab'.repeat(20)}` }),
      UnsupportedCoinError,
      unsupported,
    );
    await rejectsWithApiError(client.evm.tokens({ chain: 'bsc' }), UnsupportedCoinError, unsupported);
  });

  test('status reports the neo chain; healthz is true', async () => {
    const status = await client.tokenquery.status();
    assert.deepEqual([status.chains.neo?.head, status.chains.neo?.indexed], [TO, TO]);
    assert.equal(await client.tokenquery.healthz(), true);
  });
});
