/**
 * The typed client's address operations and Token Holders, both families, against a running
 * tokenquery: the API test fixture (eth) with the NEO seed of src/api/testing/address-seed.ts.
 * Expected values come from the seeds' documented figures, never from the server; the records
 * of the address transfer lists must equal those of the Token Transaction List. Also: the
 * strict decoding refuses answers that break the contract (a number for a string, a missing
 * key, an Address Token Balance with two entries).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GAS_ID, N1, N2, N3, N4, NEO_ID, RPX, seedNeoAddresses } from '../api/testing/address-seed.js';
import {
  ALICE,
  type ApiFixture,
  BOB,
  CAROL,
  startApiFixture,
  UNKNOWN,
  USDC,
} from '../api/testing/fixture.js';
import { DEAD_ADDRESS } from '../internal/chains.js';
import {
  createTokenqueryClient,
  InvalidParameterError,
  NoDataError,
  type TokenqueryClient,
  TokenqueryResponseError,
} from './index.js';
import { rejectsWithApiError } from './testing/expect.js';

let fx: ApiFixture;
let client: TokenqueryClient;

before(async () => {
  fx = await startApiFixture({ chains: ['eth', 'neo'] });
  await seedNeoAddresses(fx.store);
  client = createTokenqueryClient({ baseUrl: fx.url, apiKey: fx.key });
});
after(async () => {
  await fx.close();
});

const noData = { code: 404, httpStatus: 200, message: '无数据' };
const USDC_INFO = { h: USDC, f: 'USD Coin', s: 'USDC', d: '6' };

describe('typed client: address operations and Token Holders, EVM', () => {
  test('Address Token Balance(s): USDC of the fixture (1 000 000 minted to alice, who sent 350 000)', async () => {
    const entry = await client.evm.addressBalance({ chain: 'eth', address: ALICE, token: USDC });
    assert.deepEqual(entry, {
      network: 'ETH',
      hash: USDC,
      tokenInfo: USDC_INFO,
      transferCnt: 3,
      balance: '650000',
    });
    const all = await client.evm.addressBalances({ chain: 'eth', address: ALICE });
    assert.deepEqual(all[0], entry);
    assert.deepEqual(await client.evm.addressBalances({ chain: 'eth', address: UNKNOWN }), []);
    assert.equal(
      (await client.evm.addressBalance({ chain: 'eth', address: UNKNOWN, token: USDC })).balance,
      '0',
    );
  });

  test('Address (Token) Transfers: the records of the Token Transaction List', async () => {
    const list = await client.evm.transfers({ chain: 'eth', address: USDC });
    const mine = await client.evm.addressTokenTransfers({ chain: 'eth', address: CAROL, token: USDC });
    assert.deepEqual(
      mine,
      list.filter((t) => t.from === CAROL || t.to === CAROL),
    );
    assert.equal(mine.length, 2);
    const all = await client.evm.addressTransfers({ chain: 'eth', address: CAROL, page: 1, size: 2 });
    assert.equal(all.length, 2);
    assert.deepEqual(
      await client.evm.addressTransfers({ chain: 'eth', address: CAROL, page: 50, size: 50 }),
      [],
    );
  });

  test('Token Holders: ranked, exact flag, percentages', async () => {
    assert.deepEqual(await client.evm.holders({ chain: 'eth', address: USDC, size: 2 }), {
      page: 1,
      size: 2,
      total: 4,
      exact: true,
      data: [
        { rank: 1, address: ALICE, balance: '650000', percentage: '43.333333' },
        { rank: 2, address: BOB, balance: '299999', percentage: '19.999933' },
      ],
    });
    const last = await client.evm.holders({ chain: 'eth', address: USDC, page: 4, size: 1 });
    assert.deepEqual(last.data, [{ rank: 4, address: DEAD_ADDRESS, balance: '1', percentage: '0.000066' }]);
  });

  test('errors are typed: unknown token 404, bad address 10001', async () => {
    await rejectsWithApiError(
      client.evm.addressBalance({ chain: 'eth', address: ALICE, token: UNKNOWN }),
      NoDataError,
      noData,
    );
    await rejectsWithApiError(client.evm.holders({ chain: 'eth', address: UNKNOWN }), NoDataError, noData);
    await rejectsWithApiError(
      client.evm.addressBalances({ chain: 'eth', address: ALICE.toUpperCase().replace('0X', '0x') }),
      InvalidParameterError,
      { code: 10001, httpStatus: 200, message: 'invalid parameter: address must be lower case' },
    );
  });
});

describe('typed client: address operations and Token Holders, NEO', () => {
  const NEO_INFO = { h: NEO_ID, f: 'NEO', s: 'NEO', d: '0', c: 'GoverningToken' };

  test('balances: global assets in their own unit, NEP-5 raw', async () => {
    assert.deepEqual(await client.neo.addressBalances({ address: N2 }), [
      { network: 'NEO', hash: NEO_ID, tokenInfo: NEO_INFO, transferCnt: 2, balance: '80' },
      {
        network: 'NEO',
        hash: GAS_ID,
        tokenInfo: { h: GAS_ID, f: 'GAS', s: 'GAS', d: '8', c: 'UtilityToken' },
        transferCnt: 1,
        balance: '500000000',
      },
    ]);
    assert.deepEqual(await client.neo.addressBalance({ address: N1, hash: NEO_ID.slice(2) }), {
      network: 'NEO',
      hash: NEO_ID,
      tokenInfo: NEO_INFO,
      transferCnt: 2,
      balance: '70',
    });
    assert.deepEqual(await client.neo.addressBalances({ address: N4 }), []);
  });

  test('transfers: the records of the NEO Token Transaction List', async () => {
    const list = await client.neo.transfers({ hash: RPX });
    assert.deepEqual(
      await client.neo.addressTokenTransfers({ address: N3, hash: RPX }),
      list.filter((t) => t.from === N3 || t.to === N3),
    );
    const all = await client.neo.addressTransfers({ address: N1 });
    assert.deepEqual(
      all.map((t) => [t.tokenAddr, t.block_no, t.value]),
      [
        [RPX, 7, '400000000'],
        [RPX, 5, '1000000000'],
        [NEO_ID, 3, '30'],
        [NEO_ID, 2, '100'],
      ],
    );
  });

  test('holders and errors', async () => {
    assert.deepEqual(await client.neo.holders({ hash: NEO_ID }), {
      page: 1,
      size: 50,
      total: 2,
      exact: true,
      data: [
        { rank: 1, address: N2, balance: '80', percentage: '53.333333' },
        { rank: 2, address: N1, balance: '70', percentage: '46.666666' },
      ],
    });
    await rejectsWithApiError(client.neo.holders({ hash: `0x${'9'.repeat(40)}` }), NoDataError, noData);
    await rejectsWithApiError(client.neo.addressBalances({ address: N1.slice(1) }), InvalidParameterError, {
      code: 10001,
      httpStatus: 200,
      message: /^invalid parameter: address must be a NEO address/,
    });
  });
});

describe('typed client: strict decoding of the new shapes', () => {
  /** A client whose server answers `data` with this body, whatever the path. */
  const answering = (data: unknown) =>
    createTokenqueryClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'test-key-not-in-any-answer',
      fetch: async () =>
        new Response(JSON.stringify({ code: 1, msg: '成功', data }), {
          status: 200,
          headers: { 'content-type': 'application/json; charset=utf-8' },
        }),
    });
  const entry = { network: 'ETH', hash: USDC, tokenInfo: USDC_INFO, transferCnt: 1, balance: '5' };
  const page = {
    page: 1,
    size: 1,
    total: 1,
    exact: true,
    data: [{ rank: 1, address: ALICE, balance: '5', percentage: '5' }],
  };

  test('well-formed answers pass', async () => {
    assert.deepEqual(
      await answering([entry]).evm.addressBalance({ chain: 'eth', address: ALICE, token: USDC }),
      entry,
    );
    assert.deepEqual(await answering(page).evm.holders({ chain: 'eth', address: USDC }), page);
    const nullPercentage = { ...page, data: [{ ...page.data[0], percentage: null }] };
    assert.deepEqual(
      await answering(nullPercentage).evm.holders({ chain: 'eth', address: USDC }),
      nullPercentage,
    );
  });

  test('numbers for strings, strings for numbers, a missing key, two entries: each refused', async () => {
    const broken: [string, unknown, (c: TokenqueryClient) => Promise<unknown>, RegExp][] = [
      [
        'balance as a number',
        [{ ...entry, balance: 5 }],
        (c) => c.evm.addressBalances({ chain: 'eth', address: ALICE }),
        /data\[0\]\.balance/,
      ],
      [
        'transferCnt as text',
        [{ ...entry, transferCnt: '1' }],
        (c) => c.evm.addressBalances({ chain: 'eth', address: ALICE }),
        /transferCnt/,
      ],
      [
        'no tokenInfo.c on NEO',
        [entry],
        (c) => c.neo.addressBalances({ address: N1 }),
        /tokenInfo\.c is missing/,
      ],
      [
        'two entries',
        [entry, entry],
        (c) => c.evm.addressBalance({ chain: 'eth', address: ALICE, token: USDC }),
        /exactly 1/,
      ],
      [
        'exact as text',
        { ...page, exact: 'true' },
        (c) => c.evm.holders({ chain: 'eth', address: USDC }),
        /exact/,
      ],
      [
        'rank as text',
        { ...page, data: [{ ...page.data[0], rank: '1' }] },
        (c) => c.evm.holders({ chain: 'eth', address: USDC }),
        /rank/,
      ],
      [
        'percentage as a number',
        { ...page, data: [{ ...page.data[0], percentage: 5 }] },
        (c) => c.evm.holders({ chain: 'eth', address: USDC }),
        /percentage/,
      ],
      [
        'percentage with an exponent',
        { ...page, data: [{ ...page.data[0], percentage: '1e-7' }] },
        (c) => c.evm.holders({ chain: 'eth', address: USDC }),
        /percentage/,
      ],
    ];
    for (const [label, data, run, where] of broken) {
      await assert.rejects(run(answering(data)), (error: unknown) => {
        assert.ok(error instanceof TokenqueryResponseError, label);
        assert.match(String(error.details ?? error.message), where, label);
        return true;
      });
    }
  });
});
