/**
 * The typed client against servers that are not tokenquery: a Tokenview-compatible server that
 * uses the freedoms Tokenview's documentation leaves (extra keys, `p` as text, a null `tokenInfo.h`), servers
 * that answer each error code of docs/api.md#errors, wrong servers (an HTML page, mistyped fields,
 * floats, redirects, huge bodies), and the transport (timeouts, aborts, refused connections).
 * Each is a small real HTTP server on 127.0.0.1; the requests it records show what the client
 * sends: exactly the contract's paths, `apikey` in the query and nowhere else.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../cli/testing/cli-process.js';
import {
  createTokenqueryClient,
  InvalidApiKeyError,
  InvalidParameterError,
  NoDataError,
  NotFoundError,
  ServerBusyError,
  TokenqueryApiError,
  TokenqueryClientError,
  TokenqueryNetworkError,
  TokenqueryResponseError,
  TokenqueryTimeoutError,
  TooManyRequestsError,
  UnsupportedCoinError,
} from './index.js';
import { rejectsWithApiError } from './testing/expect.js';

const KEY = 'tq_compat-key/with+odd=chars';
const EVM = `0x${'ab'.repeat(20)}`;
const NEP5 = `0x${'cd'.repeat(20)}`;

interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

interface Stub {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

const stubs: Stub[] = [];
after(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});

/** A real HTTP server on a random port whose answers `handle` writes; it records every request. */
async function startStub(
  handle: (req: IncomingMessage, res: ServerResponse, path: string) => void,
): Promise<Stub> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handle(req, res, (req.url ?? '').split('?')[0]!);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stub: Stub = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  stubs.push(stub);
  return stub;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
    .end(JSON.stringify(body));
const ok = (res: ServerResponse, data: unknown) => json(res, 200, { code: 1, msg: '成功', data });
const text = (res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8') =>
  res.writeHead(status, { 'content-type': type }).end(body);

// ---- contract samples, written from Tokenview's documented shapes ----

const evmTokenInfo = { h: EVM, p: 'ETH', f: 'Tether USD', s: 'USDT', d: '6', t: '39823315877.775738' };
const neoTokenInfo = {
  appendixData: null,
  pending: null,
  h: NEP5,
  // Tokenview's documentation types `p` as "string or null"; tokenquery sends null, another server may not.
  p: 'NEO',
  f: 'Red Pulse Token',
  s: 'RPX',
  d: '8',
  t: null,
  c: 'NEP5',
  i: '1507812903',
  o: 'AKDVzYGLczmykdtRaejgvWeZrvdkVEvQ1X',
  l: null,
};
const neoTransfer = {
  index: 3,
  block_no: 1444843,
  token: null,
  asset: null,
  tokenAddr: NEP5,
  tokenSymbol: 'RPX',
  tokenDecimals: '8',
  time: 1507812903,
  txid: `0x${'ef'.repeat(32)}`,
  tokenInfo: neoTokenInfo,
  confirmations: 4,
  type: null,
  from: '',
  to: 'AKDVzYGLczmykdtRaejgvWeZrvdkVEvQ1X',
  fromAlias: null,
  toAlias: null,
  value: '1000000000000000000000000000000',
  valueIsNft: null,
  fromIsContract: null,
  toIsContract: null,
  amount: null,
};

/** Path → answer of a compatible server, for the arguments the test passes. */
const COMPATIBLE: Record<string, (res: ServerResponse) => void> = {
  [`/vipapi/eth/token/${EVM}`]: (res) =>
    ok(res, {
      network: 'ETH',
      tokenHash: EVM,
      transferCnt: 12,
      holderCnt: 5,
      tokenInfo: evmTokenInfo,
      // A key the contract does not have: passed through, not an error.
      extra: 'kept',
    }),
  [`/vipapi/token/totalsupply/eth/${EVM}`]: (res) => text(res, 200, '39823315877.775738'),
  [`/vipapi/token/maxsupply/eth/${EVM}`]: (res) => text(res, 200, '100000000000'),
  // A trailing line break from a server that adds one is tolerated.
  [`/vipapi/token/circulatingsupply/eth/${EVM}`]: (res) => text(res, 200, '39823315877.5\n'),
  [`/vipapi/eth/token/tokentrans/${EVM}/2/3`]: (res) =>
    ok(res, [
      {
        index: 0,
        block_no: 17000000,
        token: EVM,
        tokenAddr: EVM,
        tokenSymbol: 'USDT',
        tokenDecimals: '6',
        time: 1680911891,
        txid: `0x${'12'.repeat(32)}`,
        tokenInfo: { h: EVM, f: 'Tether USD', s: 'USDT', d: '6' },
        from: `0x${'01'.repeat(20)}`,
        to: `0x${'02'.repeat(20)}`,
        value: '18446744073709551617',
        conformations: 7,
      },
    ]),
  '/vipapi/bsc/tokens/1/50': (res) =>
    ok(res, { page: 1, size: 50, total: 1, data: [{ ...evmTokenInfo, p: 'BSC', t: null, ic: 'usdt.png' }] }),
  [`/vipapi/neo/token/${NEP5}`]: (res) =>
    ok(res, {
      appendixData: null,
      pending: null,
      network: 'NEO',
      tokenHash: NEP5,
      transferCnt: 3,
      holderCnt: 3,
      contract: null,
      circulationSupply: null,
      tokenInfo: neoTokenInfo,
    }),
  [`/vipapi/token/totalsupply/neo/${NEP5}`]: (res) => text(res, 200, '1358371250'),
  [`/vipapi/token/maxsupply/neo/${NEP5}`]: (res) => text(res, 200, '1358371250'),
  [`/vipapi/neo/token/tokentrans/${NEP5}/1/50`]: (res) => ok(res, [neoTransfer]),
  [`/vipapi/neo/asset/${NEP5}`]: (res) => {
    const { appendixData: _a, pending: _p, p: _c, l: _l, ...tokenInfo } = neoTokenInfo;
    ok(res, {
      network: 'NEO',
      tokenHash: NEP5,
      transferCnt: 3,
      holderCnt: 3,
      tokenInfo: { ...tokenInfo, t: '1358371250' },
    });
  },
  '/vipapi/tokens/neo/1/20': (res) =>
    ok(res, {
      page: 1,
      size: 20,
      total: 1,
      data: [
        {
          appendixData: null,
          pending: null,
          network: null,
          tokenHash: null,
          transferCnt: null,
          holderCnt: 3,
          contract: null,
          circulationSupply: '1358371250',
          // Tokenview's documentation: "for some entries tokenInfo.h is null".
          tokenInfo: { ...neoTokenInfo, h: null, t: '1358371250' },
        },
      ],
      appendixData: null,
      pending: null,
      note: null,
    }),
  '/vipapi/contracts/neo/3/10': (res) =>
    ok(res, [
      {
        createTime: 1507812903,
        author: 'Red Pulse',
        name: 'RPX Sale',
        contractAddress: NEP5,
        ownerAddress: 'AKDVzYGLczmykdtRaejgvWeZrvdkVEvQ1X',
      },
    ]),
};

describe('typed client against a Tokenview-compatible server that is not tokenquery', () => {
  test('all 13 operations: exactly the contract paths, apikey in the query only, answers typed', async () => {
    const stub = await startStub((_req, res, path) => {
      const answer = COMPATIBLE[path];
      if (answer) answer(res);
      else json(res, 404, { code: 404, msg: 'not found', data: null });
    });
    const client = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY });
    const results = {
      tokenInfo: await client.evm.tokenInfo({ chain: 'eth', address: EVM }),
      totalSupply: await client.evm.totalSupply({ chain: 'eth', address: EVM }),
      maxSupply: await client.evm.maxSupply({ chain: 'eth', address: EVM }),
      circulatingSupply: await client.evm.circulatingSupply({ chain: 'eth', address: EVM }),
      transfers: await client.evm.transfers({ chain: 'eth', address: EVM, page: 2, size: 3 }),
      tokens: await client.evm.tokens({ chain: 'bsc' }),
      neoTokenInfo: await client.neo.tokenInfo({ hash: NEP5 }),
      neoTotalSupply: await client.neo.totalSupply({ hash: NEP5 }),
      neoMaxSupply: await client.neo.maxSupply({ hash: NEP5 }),
      neoTransfers: await client.neo.transfers({ hash: NEP5 }),
      assetInfo: await client.neo.assetInfo({ hash: NEP5 }),
      assets: await client.neo.assets({ size: 20 }),
      contracts: await client.neo.contracts({ page: 3, size: 10 }),
    };
    assert.equal(Object.keys(results).length, 13);
    assert.deepEqual(
      stub.requests.map((r) => r.url.split('?')[0]),
      Object.keys(COMPATIBLE),
      'one request per operation, on the contract path',
    );
    for (const request of stub.requests) {
      assert.equal(request.method, 'GET');
      const query = new URLSearchParams(request.url.split('?')[1]);
      assert.deepEqual([...query], [['apikey', KEY]], 'the key, encoded, as the only query parameter');
      for (const header of ['authorization', 'x-api-key', 'apikey', 'cookie'])
        assert.equal(request.headers[header], undefined, header);
    }
    assert.equal(results.tokenInfo.tokenInfo.t, '39823315877.775738');
    assert.equal((results.tokenInfo as unknown as { extra: string }).extra, 'kept');
    assert.deepEqual(
      [results.totalSupply, results.maxSupply, results.circulatingSupply],
      ['39823315877.775738', '100000000000', '39823315877.5'],
    );
    assert.equal(BigInt(results.transfers[0]!.value), 2n ** 64n + 1n);
    assert.equal(results.tokens.data[0]!.ic, 'usdt.png');
    assert.equal(results.neoTokenInfo.tokenInfo.p, 'NEO');
    assert.equal(BigInt(results.neoTransfers[0]!.value), 10n ** 30n);
    assert.equal(results.assets.data[0]!.tokenInfo.h, null);
    assert.equal(results.contracts[0]!.name, 'RPX Sale');
  });

  test('a base URL with a path prefix keeps it', async () => {
    const stub = await startStub((_req, res) => text(res, 200, '7'));
    const client = createTokenqueryClient({ baseUrl: `${stub.url}/gateway/tokenview/`, apiKey: KEY });
    assert.equal(await client.neo.totalSupply({ hash: NEP5 }), '7');
    assert.equal(
      stub.requests[0]!.url.split('?')[0],
      `/gateway/tokenview/vipapi/token/totalsupply/neo/${NEP5}`,
    );
  });

  test('a custom fetch is used for every request', async () => {
    const stub = await startStub((_req, res) => text(res, 200, '1'));
    const seen: string[] = [];
    const client = createTokenqueryClient({
      baseUrl: stub.url,
      apiKey: KEY,
      fetch: (input, init) => {
        seen.push(new URL(input).pathname);
        return fetch(input, init);
      },
    });
    await client.evm.maxSupply({ chain: 'movr', address: EVM });
    assert.deepEqual(seen, [`/vipapi/token/maxsupply/movr/${EVM}`]);
  });
});

describe('Tokenview error codes become typed errors', () => {
  test('each code of docs/api.md#errors, on envelope and supply operations alike', async () => {
    const cases: [string, number, number, string, Record<string, string>?][] = [
      ['invalid-key', 401, 50003, 'invalid apikey'],
      ['rate', 429, 429, 'too many requests', { 'retry-after': '7', 'x-ratelimit-limit': '10' }],
      ['coin', 200, 50001, 'unsupport coin'],
      ['param', 200, 10001, 'invalid parameter: page must be an integer from 1 to 50'],
      ['nodata', 200, 404, '无数据'],
      ['notfound', 404, 404, 'not found'],
      ['busy', 500, 40001, 'server is busy'],
      ['other', 200, 10002, 'a code docs/api.md does not list'],
    ];
    const stub = await startStub((_req, res, path) => {
      const c = cases.find(([name]) => path.includes(name))!;
      json(res, c[1], { code: c[2], msg: c[3], data: null }, c[4]);
    });
    const client = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY });
    const types = [
      InvalidApiKeyError,
      TooManyRequestsError,
      UnsupportedCoinError,
      InvalidParameterError,
      NoDataError,
      NotFoundError,
      ServerBusyError,
      TokenqueryApiError,
    ];
    for (const [i, [name, httpStatus, code, message]] of cases.entries()) {
      const expected = { code, httpStatus, message };
      await rejectsWithApiError(client.neo.assetInfo({ hash: name }), types[i]!, expected, [KEY]);
      await rejectsWithApiError(
        client.evm.circulatingSupply({ chain: 'eth', address: name }),
        types[i]!,
        expected,
      );
    }
    const limited = await client.neo.tokenInfo({ hash: 'rate' }).catch((e: unknown) => e);
    assert.ok(limited instanceof TooManyRequestsError);
    assert.equal(limited.retryAfterSeconds, 7);
    const other = await client.neo.tokenInfo({ hash: 'other' }).catch((e: unknown) => e);
    assert.ok(other instanceof TokenqueryApiError && other.constructor === TokenqueryApiError);
    assert.ok(other instanceof TokenqueryClientError);
    assert.equal(other.operation, 'neo.tokenInfo');
    assert.equal(other.path, '/vipapi/neo/token/other');
  });

  test('a message that echoes the key is redacted', async () => {
    const stub = await startStub((req, res) =>
      json(res, 401, {
        code: 50003,
        msg: `invalid apikey ${new URL(req.url!, 'http://x').searchParams.get('apikey')}`,
      }),
    );
    const client = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY });
    await rejectsWithApiError(
      client.evm.tokens({ chain: 'eth' }),
      InvalidApiKeyError,
      { code: 50003, httpStatus: 401, message: 'invalid apikey <apikey>' },
      [KEY],
    );
  });
});

/** Rejects with a TokenqueryResponseError whose message (and details) match, without the key. */
async function rejectsAsWrongServer(
  promise: Promise<unknown>,
  expected: { message: RegExp; httpStatus: number; details?: RegExp },
): Promise<TokenqueryResponseError> {
  let caught: TokenqueryResponseError | undefined;
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(
      error instanceof TokenqueryResponseError,
      `expected a TokenqueryResponseError, got ${String(error)}`,
    );
    assert.match(error.shortMessage, expected.message);
    assert.equal(error.httpStatus, expected.httpStatus);
    if (expected.details) assert.match(error.details ?? '', expected.details);
    assert.ok(!`${error.stack}${error.bodyExcerpt}`.includes(KEY), 'the error holds the key');
    caught = error;
    return true;
  });
  return caught!;
}

describe('a wrong server gives a clear error, not undefined fields', () => {
  const summary = {
    network: 'ETH',
    tokenHash: EVM,
    transferCnt: 1,
    holderCnt: 1,
    tokenInfo: evmTokenInfo,
  };
  const answers: Record<string, (res: ServerResponse, req: IncomingMessage) => void> = {
    html: (res, req) =>
      text(res, 200, `<!doctype html><title>Sign in</title><a href="${req.url}">retry</a>`, 'text/html'),
    'd-number': (res) => ok(res, { ...summary, tokenInfo: { ...evmTokenInfo, d: 18 } }),
    't-missing': (res) => {
      const { t: _t, ...rest } = evmTokenInfo;
      ok(res, { ...summary, tokenInfo: rest });
    },
    't-float': (res) => ok(res, { ...summary, tokenInfo: { ...evmTokenInfo, t: 1e27 } }),
    't-exponent': (res) => ok(res, { ...summary, tokenInfo: { ...evmTokenInfo, t: '1e+27' } }),
    'count-float': (res) => ok(res, { ...summary, transferCnt: 1.5 }),
    // A raw amount is an integer in the smallest unit: a decimal point means the server got it wrong.
    'value-decimal': (res) => {
      const { tokenInfo: _info, ...rest } = neoTransfer;
      ok(res, [{ ...rest, tokenInfo: neoTokenInfo, value: '1.5' }]);
    },
    'value-number': (res) => ok(res, [{ ...neoTransfer, value: 2 ** 64 }]),
    'data-null': (res) => ok(res, null),
    'not-envelope': (res) => json(res, 200, [summary]),
    'ok-500': (res) => json(res, 500, { code: 1, msg: '成功', data: summary }),
    'supply-exponent': (res) => text(res, 200, '1e+27'),
    'supply-negative': (res) => text(res, 200, '-5'),
    'supply-502': (res) => text(res, 502, 'Bad Gateway'),
    'supply-json': (res) => ok(res, '5'),
    redirect: (res, req) => res.writeHead(302, { location: `https://elsewhere.example${req.url}` }).end(),
    huge: (res) => text(res, 200, `{"code":1,"msg":"","data":"${'x'.repeat(64 * 1024)}"}`),
  };
  let client: ReturnType<typeof createTokenqueryClient>;
  let stub: Stub;
  const evmInfo = (name: string) => client.evm.tokenInfo({ chain: 'eth', address: name });
  const supply = (name: string) => client.evm.totalSupply({ chain: 'eth', address: name });

  before(async () => {
    stub = await startStub((req, res, path) => {
      const name = Object.keys(answers).find((n) => path.split('/').includes(n));
      if (name) answers[name]!(res, req);
      else text(res, 404, 'no such page', 'text/html');
    });
    client = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY, maxResponseBytes: 32 * 1024 });
  });

  test('not JSON: the HTTP status, content type and the start of the body, key redacted', async () => {
    const error = await rejectsAsWrongServer(evmInfo('html'), {
      message: /^evm\.tokenInfo: GET \/vipapi\/eth\/token\/html: HTTP 200 \(text\/html\) is not JSON$/,
      httpStatus: 200,
    });
    assert.match(error.bodyExcerpt, /^<!doctype html><title>Sign in<\/title>.*apikey=<apikey>/);
  });

  test('a mistyped or missing field is named with its path', async () => {
    await rejectsAsWrongServer(evmInfo('d-number'), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data\.tokenInfo\.d is the number 18, expected integer text/,
    });
    await rejectsAsWrongServer(evmInfo('t-missing'), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data\.tokenInfo\.t is missing$/,
    });
    // Amounts as JSON numbers or in exponent form are not exact: refused, not rounded.
    await rejectsAsWrongServer(evmInfo('t-float'), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data\.tokenInfo\.t is the number 1e\+27, expected exact decimal text/,
    });
    await rejectsAsWrongServer(evmInfo('t-exponent'), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data\.tokenInfo\.t is the string "1e\+27", expected exact decimal text/,
    });
    await rejectsAsWrongServer(evmInfo('count-float'), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data\.transferCnt is the number 1\.5, expected an integer/,
    });
    await rejectsAsWrongServer(client.neo.transfers({ hash: 'value-decimal' }), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data\[0\]\.value is the string "1\.5", expected integer text/,
    });
    await rejectsAsWrongServer(client.neo.transfers({ hash: 'value-number' }), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data\[0\]\.value is the number 18446744073709552000, expected integer text/,
    });
    await rejectsAsWrongServer(evmInfo('data-null'), {
      message: /does not follow the contract/,
      httpStatus: 200,
      details: /^data is null, expected an object/,
    });
    await rejectsAsWrongServer(evmInfo('not-envelope'), {
      message: /not a Tokenview envelope/,
      httpStatus: 200,
    });
    await rejectsAsWrongServer(evmInfo('ok-500'), {
      message: /success envelope with HTTP 500/,
      httpStatus: 500,
    });
  });

  test('supply bodies must be exact decimal text', async () => {
    for (const name of ['supply-exponent', 'supply-negative', 'supply-json']) {
      await rejectsAsWrongServer(supply(name), {
        message: /is not an exact decimal number/,
        httpStatus: 200,
      });
    }
    await rejectsAsWrongServer(supply('supply-502'), {
      message: /HTTP 502 without a Tokenview error envelope/,
      httpStatus: 502,
    });
  });

  test('a redirect is not followed (the key is in the URL)', async () => {
    const before = stub.requests.length;
    const error = await rejectsAsWrongServer(client.neo.transfers({ hash: 'redirect' }), {
      message:
        /the server redirects to https:\/\/elsewhere\.example\/.*apikey=<apikey>; use the final address/,
      httpStatus: 302,
    });
    assert.equal(stub.requests.length, before + 1);
    assert.ok(!error.message.includes(KEY));
  });

  test('an answer beyond maxResponseBytes is refused', async () => {
    await rejectsAsWrongServer(evmInfo('huge'), { message: /larger than 32768 bytes/, httpStatus: 200 });
  });

  test('tokenquery-only helpers on a server without them', async () => {
    await rejectsAsWrongServer(client.tokenquery.status(), {
      message: /^tokenquery\.status: GET \/status: HTTP 404/,
      httpStatus: 404,
    });
    await rejectsAsWrongServer(client.tokenquery.healthz(), { message: /HTTP 404/, httpStatus: 404 });
    const down = await startStub((_req, res) => json(res, 503, { status: 'unavailable' }));
    const downClient = createTokenqueryClient({ baseUrl: down.url, apiKey: KEY });
    assert.equal(await downClient.tokenquery.healthz(), false);
    assert.equal(down.requests[0]!.url, '/healthz', 'no key sent to the keyless endpoints');
  });
});

describe('transport', () => {
  test('no answer within timeoutMs is TokenqueryTimeoutError, headers or body alike', async () => {
    const stub = await startStub((_req, res, path) => {
      // Never answers, or sends headers and half a body, then stalls.
      if (path.endsWith('/half'))
        res.writeHead(200, { 'content-type': 'application/json' }).write('{"code":1,');
    });
    const client = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY, timeoutMs: 150 });
    for (const hash of ['silent', 'half']) {
      const started = Date.now();
      await assert.rejects(client.neo.assetInfo({ hash }), (error: unknown) => {
        assert.ok(error instanceof TokenqueryTimeoutError, String(error));
        assert.ok(error instanceof TokenqueryNetworkError);
        assert.equal(error.timeoutMs, 150);
        assert.match(
          error.message,
          new RegExp(`^neo\\.assetInfo: no answer within 150 ms \\(GET /vipapi/neo/asset/${hash}\\)$`),
        );
        return true;
      });
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 140 && elapsed < 2000, `${elapsed} ms`);
    }
  });

  test("a caller's abort rejects with the signal's reason; the client signal aborts every call", async () => {
    const stub = await startStub(() => {});
    const client = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY, timeoutMs: 0 });
    const controller = new AbortController();
    const pending = client.evm.tokens({ chain: 'eth', signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await assert.rejects(pending, (error: unknown) => error instanceof Error && error.name === 'AbortError');

    const shutdown = new AbortController();
    const owned = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY, signal: shutdown.signal });
    const reason = new Error('shutting down');
    const calls = [owned.neo.contracts(), owned.evm.maxSupply({ chain: 'eth', address: EVM })];
    setTimeout(() => shutdown.abort(reason), 30);
    for (const call of calls) await assert.rejects(call, (error: unknown) => error === reason);
    // Already aborted: no request at all.
    const sent = stub.requests.length;
    await assert.rejects(owned.neo.assets(), (error: unknown) => error === reason);
    assert.equal(stub.requests.length, sent);
  });

  test('a refused connection is TokenqueryNetworkError with its cause', async () => {
    const port = await freePort();
    const client = createTokenqueryClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY });
    await assert.rejects(client.evm.tokenInfo({ chain: 'eth', address: EVM }), (error: unknown) => {
      assert.ok(error instanceof TokenqueryNetworkError && !(error instanceof TokenqueryTimeoutError));
      assert.match(
        error.message,
        /^evm\.tokenInfo: GET \/vipapi\/eth\/token\/0x[0-9a-f]{40} failed: .*ECONNREFUSED/,
      );
      assert.ok(error.cause !== undefined);
      assert.ok(!String(error.stack).includes(KEY));
      return true;
    });
  });
});

describe('options and arguments', () => {
  test('bad options are a TypeError at creation', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ baseUrl: '127.0.0.1:8080' }, /not an absolute URL/],
      // Parses as a URL whose scheme is `localhost:`.
      [{ baseUrl: 'localhost:8080' }, /http or https, not localhost:/],
      [{ baseUrl: 'ftp://127.0.0.1' }, /http or https/],
      [{ baseUrl: 'http://127.0.0.1/?apikey=x' }, /query string/],
      [{ baseUrl: 'http://u:p@127.0.0.1/' }, /user name or password/],
      [{ apiKey: '' }, /apiKey must be a non-empty string/],
      [{ timeoutMs: -1 }, /timeoutMs/],
    ];
    for (const [override, message] of bad) {
      const options = { baseUrl: 'http://127.0.0.1:1', apiKey: KEY, ...override } as Parameters<
        typeof createTokenqueryClient
      >[0];
      assert.throws(
        () => createTokenqueryClient(options),
        (error: unknown) => {
          assert.ok(error instanceof TypeError);
          assert.match(error.message, message);
          return true;
        },
      );
    }
  });

  test('an argument that would climb out of its path segment is refused before any request', async () => {
    const stub = await startStub((_req, res) => text(res, 200, '1'));
    const client = createTokenqueryClient({ baseUrl: stub.url, apiKey: KEY });
    for (const hash of ['.', '..']) {
      await assert.rejects(client.neo.totalSupply({ hash }), /cannot be a path segment/);
    }
    assert.equal(stub.requests.length, 0);
  });
});
