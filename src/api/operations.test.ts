import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../internal/chains.js';
import { indexBatch } from '../store/testing/batches.js';
import { STATUS_MAX_AGE_MS } from './routes/health.js';
import {
  ALICE,
  type ApiFixture,
  BIG,
  BOB,
  BSC_ERROR,
  BSC_HEAD,
  BSC_INDEXED,
  CAROL,
  ETH_HEAD,
  ETH_INDEXED,
  ETH_TRANSFERS,
  HUGE_VALUE,
  NOSUPPLY,
  ODD_VALUE,
  OVERBURNED,
  startApiFixture,
  USDC,
} from './testing/fixture.js';
import { assertError, assertShape, call, JSON_TYPE, okData, TEXT_TYPE } from './testing/http.js';

let fx: ApiFixture;
before(async () => {
  fx = await startApiFixture();
});
after(async () => {
  await fx.close();
});

const get = (path: string, init?: RequestInit) =>
  call(fx.url, `${path}${path.includes('?') ? '&' : '?'}apikey=${fx.key}`, init);

const TOKEN_INFO_SHAPE = {
  h: 'string',
  p: 'string',
  f: 'string',
  s: 'string',
  d: 'string',
  t: 'string|null',
} as const;

describe('token info', () => {
  test('answers the summary with exact keys and JSON types', async () => {
    const data = okData(await get(`/vipapi/eth/token/${USDC}`)) as Record<string, unknown>;
    assertShape(data, {
      network: 'string',
      tokenHash: 'string',
      transferCnt: 'number',
      holderCnt: 'number',
      tokenInfo: 'object',
    });
    assertShape(data.tokenInfo, TOKEN_INFO_SHAPE);
    // 5 transfers; holders alice, bob, carol and 0x…dead (the zero address never counts).
    assert.deepEqual(data, {
      network: 'ETH',
      tokenHash: USDC,
      transferCnt: 5,
      holderCnt: 4,
      tokenInfo: { h: USDC, p: 'ETH', f: 'USD Coin', s: 'USDC', d: '6', t: '1.5' },
    });
  });

  test('t is the decimal-adjusted total supply, integral without a point', async () => {
    const data = okData(await get(`/vipapi/eth/token/${BIG}`)) as { tokenInfo: { t: unknown; d: unknown } };
    assert.equal(data.tokenInfo.t, '1000000000');
    assert.equal(data.tokenInfo.d, '18');
  });

  test('t is null and d is "0" for a token whose supply cannot be read', async () => {
    const data = okData(await get(`/vipapi/eth/token/${NOSUPPLY}`)) as Record<string, unknown>;
    assertShape(data.tokenInfo, TOKEN_INFO_SHAPE);
    assert.deepEqual(data.tokenInfo, { h: NOSUPPLY, p: 'ETH', f: '', s: '', d: '0', t: null });
  });

  test('the same address on another chain is another token', async () => {
    const data = okData(await get(`/vipapi/bsc/token/${USDC}`)) as Record<string, unknown>;
    assert.equal(data.network, 'BSC');
    assert.deepEqual(data.tokenInfo, {
      h: USDC,
      p: 'BSC',
      f: 'Binance USD Coin',
      s: 'bUSDC',
      d: '18',
      t: '0.000000000000000007',
    });
  });

  test('HEAD answers like GET without a body', async () => {
    const path = `/vipapi/eth/token/${USDC}`;
    const [got, head] = await Promise.all([get(path), get(path, { method: 'HEAD' })]);
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), JSON_TYPE);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(got.text)));
    assert.equal(head.text, '');
  });
});

describe('supply operations', () => {
  const supply = (kind: string, token: string, chain = 'eth') =>
    get(`/vipapi/token/${kind}/${chain}/${token}`);

  async function bare(kind: string, token: string): Promise<string> {
    const answer = await supply(kind, token);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('content-type'), TEXT_TYPE);
    return answer.text;
  }

  test('total supply is the bare decimal-adjusted number with no trailing newline', async () => {
    assert.equal(await bare('totalsupply', USDC), '1.5');
    assert.equal(await bare('totalsupply', BIG), '1000000000');
  });

  test('max supply is the cap when there is one, else the total supply', async () => {
    assert.equal(await bare('maxsupply', BIG), '2000000000');
    assert.equal(await bare('maxsupply', USDC), '1.5');
  });

  test('circulating supply is the total minus the burned balance, never below zero', async () => {
    assert.equal(await bare('circulatingsupply', BIG), '900000000');
    assert.equal(await bare('circulatingsupply', USDC), '1.5');
    assert.equal(await bare('circulatingsupply', OVERBURNED), '0');
  });

  test('a token whose supply cannot be read answers 404 as an envelope', async () => {
    for (const kind of ['totalsupply', 'maxsupply', 'circulatingsupply']) {
      assertError(await supply(kind, NOSUPPLY), { http: 200, code: 404, msg: '无数据' }, [fx.key]);
    }
  });

  test('HEAD answers with the length of the number and no body', async () => {
    const head = await get(`/vipapi/token/totalsupply/eth/${BIG}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), TEXT_TYPE);
    assert.equal(head.headers.get('content-length'), String('1000000000'.length));
    assert.equal(head.text, '');
  });
});

describe('transfer list', () => {
  const list = (token: string, page: number | string, size: number | string, chain = 'eth') =>
    get(`/vipapi/${chain}/token/tokentrans/${token}/${page}/${size}`);

  const RECORD_SHAPE = {
    index: 'number',
    block_no: 'number',
    token: 'string',
    tokenAddr: 'string',
    tokenSymbol: 'string',
    tokenDecimals: 'string',
    time: 'number',
    txid: 'string',
    tokenInfo: 'object',
    from: 'string',
    to: 'string',
    value: 'string',
    conformations: 'number',
  } as const;

  test('records have exact keys and JSON types, newest first', async () => {
    const data = okData(await list(USDC, 1, 50)) as Record<string, unknown>[];
    assert.ok(Array.isArray(data));
    assert.equal(data.length, 5);
    for (const record of data) {
      assertShape(record, RECORD_SHAPE);
      assertShape(record.tokenInfo, { h: 'string', f: 'string', s: 'string', d: 'string' });
    }
    const expected = ETH_TRANSFERS.filter((t) => t.token === USDC).reverse();
    assert.deepEqual(
      data.map((r) => [r.block_no, r.from, r.to, r.value]),
      expected.map((t) => [t.blockNumber, t.from, t.to, t.value.toString()]),
    );
  });

  test('a record carries the transaction, the token and the confirmations', async () => {
    const [newest] = okData(await list(USDC, 1, 1)) as Record<string, unknown>[];
    const source = ETH_TRANSFERS.filter((t) => t.token === USDC).at(-1)!;
    assert.deepEqual(newest, {
      index: source.txIndex,
      block_no: 110,
      token: USDC,
      tokenAddr: USDC,
      tokenSymbol: 'USDC',
      tokenDecimals: '6',
      time: source.time,
      txid: source.txHash,
      tokenInfo: { h: USDC, f: 'USD Coin', s: 'USDC', d: '6' },
      from: BOB,
      to: DEAD_ADDRESS,
      value: '1',
      // head 120, block 110
      conformations: ETH_HEAD - 110 + 1,
    });
  });

  test('transfers of one transaction share its index', async () => {
    const data = okData(await list(USDC, 1, 50)) as Record<string, unknown>[];
    const inBlock105 = data.filter((r) => r.block_no === 105);
    assert.equal(inBlock105.length, 2);
    assert.deepEqual(
      inBlock105.map((r) => [r.index, r.txid, r.from, r.to]),
      [
        [2, `0x${'f'.repeat(64)}`, CAROL, BOB],
        [2, `0x${'f'.repeat(64)}`, ALICE, CAROL],
      ],
    );
  });

  test('pages are consecutive slices of size entries', async () => {
    const all = okData(await list(USDC, 1, 50)) as Record<string, unknown>[];
    const pages = [];
    for (let page = 1; page <= 3; page++) pages.push(...(okData(await list(USDC, page, 2)) as unknown[]));
    assert.deepEqual(pages, all);
  });

  test('page past the end returns an empty list', async () => {
    assert.deepEqual(okData(await list(USDC, 2, 5)), []);
    assert.deepEqual(okData(await list(USDC, 50, 50)), []);
  });

  test('values above 2^53 are exact integer text', async () => {
    const data = okData(await list(NOSUPPLY, 1, 10)) as Record<string, unknown>[];
    assert.deepEqual(
      data.map((r) => r.value),
      [ODD_VALUE.toString(), HUGE_VALUE.toString()],
    );
    assert.equal(data[1]!.from, ZERO_ADDRESS);
    assert.equal(data[0]!.tokenDecimals, '0');
  });

  test('confirmations never drop below 1 when the recorded head lags the data', async () => {
    const [record] = okData(await list(USDC, 1, 1, 'bsc')) as Record<string, unknown>[];
    assert.ok(BSC_HEAD < BSC_INDEXED);
    assert.equal(record!.block_no, BSC_INDEXED);
    assert.equal(record!.conformations, 1);
  });

  test('leading zeros in page and size are plain digits', async () => {
    const a = okData(await list(USDC, '01', '002'));
    const b = okData(await list(USDC, 1, 2));
    assert.deepEqual(a, b);
  });
});

describe('token list on chain', () => {
  const tokens = (page: number | string, size: number | string, chain = 'eth') =>
    get(`/vipapi/${chain}/tokens/${page}/${size}`);

  test('answers a page object with exact keys and JSON types', async () => {
    const data = okData(await tokens(1, 10)) as Record<string, unknown>;
    assertShape(data, { page: 'number', size: 'number', total: 'number', data: 'object' });
    assert.deepEqual([data.page, data.size, data.total], [1, 10, 4]);
    const entries = data.data as Record<string, unknown>[];
    assert.equal(entries.length, 4);
    for (const entry of entries) {
      assertShape(entry, {
        h: 'string',
        p: 'string',
        f: 'string',
        s: 'string',
        d: 'string',
        t: 'string|null',
        ic: 'string',
      });
      assert.equal(entry.p, 'ETH');
      assert.equal(entry.ic, '');
    }
    // holderCnt descending: USDC has 4 holders, the others fewer.
    assert.equal(entries[0]!.h, USDC);
    assert.deepEqual(entries[0], { h: USDC, p: 'ETH', f: 'USD Coin', s: 'USDC', d: '6', t: '1.5', ic: '' });
    assert.equal(entries.find((e) => e.h === NOSUPPLY)!.t, null);
    assert.equal(entries.find((e) => e.h === BIG)!.t, '1000000000');
  });

  test('pages slice the list and keep the total', async () => {
    const all = (okData(await tokens(1, 50)) as { data: unknown[] }).data;
    const first = okData(await tokens(1, 3)) as { total: number; data: unknown[] };
    const second = okData(await tokens(2, 3)) as { page: number; total: number; data: unknown[] };
    assert.equal(first.total, 4);
    assert.equal(second.page, 2);
    assert.deepEqual([...first.data, ...second.data], all);
  });

  test('page past the end returns a page object with an empty list', async () => {
    const data = okData(await tokens(3, 2));
    assert.deepEqual(data, { page: 3, size: 2, total: 4, data: [] });
  });

  test('a configured chain with nothing indexed answers an empty page', async () => {
    assert.deepEqual(okData(await tokens(1, 10, 'movr')), { page: 1, size: 10, total: 0, data: [] });
  });
});

describe('health and status', () => {
  test('/healthz answers 200 without a key', async () => {
    const answer = await call(fx.url, '/healthz');
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), { status: 'ok' });
  });

  test('/status reports each configured chain without a key', async () => {
    const answer = await call(fx.url, '/status');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), JSON_TYPE);
    const body = JSON.parse(answer.text) as { chains: Record<string, unknown> };
    assert.deepEqual(Object.keys(body), ['chains']);
    assert.deepEqual(body.chains, {
      eth: {
        head: ETH_HEAD,
        indexed: ETH_INDEXED,
        lag: ETH_HEAD - ETH_INDEXED,
        notExactTokens: 0,
        lastError: null,
      },
      // Without a key, the error's class only (operator.test.ts); with one, its text.
      bsc: { head: BSC_HEAD, indexed: BSC_INDEXED, lag: 0, notExactTokens: 0, lastError: 'rpc unreachable' },
      // Configured, nothing indexed yet.
      movr: { head: 0, indexed: 0, lag: 0, notExactTokens: 0, lastError: null },
    });
    const full = JSON.parse((await call(fx.url, `/status?apikey=${fx.key}`)).text) as {
      chains: Record<string, { lastError: string | null }>;
    };
    assert.equal(full.chains.bsc!.lastError, BSC_ERROR);
  });

  test('/status follows the store', async () => {
    await fx.store.writer.setChainStatus('movr', { head: 42 });
    await afterStatusMaxAge();
    const body = JSON.parse((await call(fx.url, '/status')).text) as { chains: Record<string, unknown> };
    assert.deepEqual(body.chains.movr, { head: 42, indexed: 0, lag: 42, notExactTokens: 0, lastError: null });
  });

  test('/status says when a late start could not seed holders, and only then', async () => {
    await fx.store.writer.applyBatch(
      indexBatch({
        chain: 'movr',
        fromBlock: 40,
        toBlock: 45,
        head: 50,
        seeds: { block: 39, balances: [], partial: true },
      }),
    );
    await afterStatusMaxAge();
    const body = JSON.parse((await call(fx.url, '/status')).text) as { chains: Record<string, unknown> };
    assert.deepEqual(body.chains.movr, {
      head: 50,
      indexed: 45,
      lag: 5,
      notExactTokens: 0,
      lastError: null,
      holdersPartial: true,
    });
    assert.equal((body.chains.eth as Record<string, unknown>).holdersPartial, undefined);
  });
});

describe('not-exact tokens (issue #18)', () => {
  test('a marked token answers Token Holders with "exact": false and is counted in /status; clearing undoes both', async () => {
    const holdersOf = async (token: string) =>
      okData(await call(fx.url, `/vipapi/eth/token/holders/${token}/1/10?apikey=${fx.key}`)) as {
        exact: boolean;
        data: unknown[];
      };
    const status = async () => {
      await afterStatusMaxAge();
      return (
        JSON.parse((await call(fx.url, '/status')).text) as {
          chains: Record<string, { notExactTokens: number }>;
        }
      ).chains;
    };
    const before = await holdersOf(USDC);
    assert.equal(before.exact, true);
    const mark = { atBlock: ETH_INDEXED, supplyDrift: -5n, sampled: 4, differing: 2 };
    await fx.store.writer.setExactness('eth', [
      { address: USDC, mark },
      { address: BIG, mark },
    ]);
    try {
      const marked = await holdersOf(USDC);
      assert.equal(marked.exact, false);
      // Only the flag changes: the page's holders are those stored.
      assert.deepEqual(marked.data, before.data);
      assert.equal((await holdersOf(NOSUPPLY)).exact, true);
      const chains = await status();
      assert.equal(chains.eth!.notExactTokens, 2);
      assert.equal(chains.bsc!.notExactTokens, 0);
      // The Tokenview shapes gain no key: Token Info reads as before.
      const info = okData(await call(fx.url, `/vipapi/eth/token/${USDC}?apikey=${fx.key}`)) as Record<
        string,
        unknown
      >;
      assert.ok(!Object.keys(info).some((key) => /exact/i.test(key)));
    } finally {
      await fx.store.writer.setExactness('eth', [
        { address: USDC, mark: null },
        { address: BIG, mark: null },
      ]);
    }
    assert.equal((await holdersOf(USDC)).exact, true);
    assert.equal((await status()).eth!.notExactTokens, 0);
  });
});

/** Past the age after which `/status` reads the store again (routes/health.ts). */
function afterStatusMaxAge(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, STATUS_MAX_AGE_MS + 50));
}
