import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { ALICE, type ApiFixture, NOSUPPLY, startApiFixture, UNKNOWN, USDC } from './testing/fixture.js';
import { assertError, call, JSON_TYPE, okData } from './testing/http.js';

let fx: ApiFixture;
before(async () => {
  fx = await startApiFixture();
});
after(async () => {
  await fx.close();
});

/** A key-shaped value no store knows. */
const BAD_KEY = `tq_${'Z'.repeat(43)}`;
const withKey = (path: string, key: string) => `${path}${path.includes('?') ? '&' : '?'}apikey=${key}`;
const get = (path: string, init?: RequestInit) => call(fx.url, withKey(path, fx.key), init);
const secrets = () => [fx.key, BAD_KEY];

const NOT_FOUND = { http: 404, code: 404, msg: 'not found' };
const INVALID_KEY = { http: 401, code: 50003, msg: 'invalid apikey' };
const UNSUPPORTED = { http: 200, code: 50001, msg: 'unsupport coin' };
const NO_DATA = { http: 200, code: 404, msg: '无数据' };
const METHOD = { http: 405, code: 10001, msg: 'invalid parameter: method not allowed' };
const invalid = (what: RegExp) => ({ http: 200, code: 10001, msg: what });

/** One path per operation, with valid parameters and a known token. */
const OPERATIONS = [
  `/vipapi/eth/token/${USDC}`,
  `/vipapi/token/totalsupply/eth/${USDC}`,
  `/vipapi/token/maxsupply/eth/${USDC}`,
  `/vipapi/token/circulatingsupply/eth/${USDC}`,
  `/vipapi/eth/token/tokentrans/${USDC}/1/10`,
  '/vipapi/eth/tokens/1/10',
];

describe('api key', () => {
  test('every operation refuses a missing, unknown or empty key with 401', async () => {
    for (const path of OPERATIONS) {
      assertError(await call(fx.url, path), INVALID_KEY);
      assertError(await call(fx.url, withKey(path, BAD_KEY)), INVALID_KEY, secrets());
      assertError(await call(fx.url, withKey(path, '')), INVALID_KEY);
    }
  });

  test('every operation accepts a valid key', async () => {
    for (const path of OPERATIONS) assert.equal((await get(path)).status, 200);
  });

  test('only the query parameter counts, not a header', async () => {
    const path = OPERATIONS[0]!;
    assertError(
      await call(fx.url, path, { headers: { apikey: fx.key, authorization: `Bearer ${fx.key}` } }),
      INVALID_KEY,
      secrets(),
    );
  });

  test('a repeated apikey parameter is refused', async () => {
    assertError(
      await call(fx.url, `${withKey(OPERATIONS[0]!, fx.key)}&apikey=${fx.key}`),
      INVALID_KEY,
      secrets(),
    );
  });

  test('an overlong key is refused', async () => {
    assertError(await call(fx.url, withKey(OPERATIONS[0]!, 'k'.repeat(5000))), INVALID_KEY);
  });

  test('a revoked key is refused', async () => {
    const { key, id } = await fx.addKey('to revoke');
    assert.ok(await fx.store.keys.revokeApiKey(id, Date.now()));
    assertError(await call(fx.url, withKey(OPERATIONS[0]!, key)), INVALID_KEY, [key]);
  });
});

describe('check order', () => {
  test('an unknown path answers 404 before the key is checked', async () => {
    for (const path of [
      '/index.html',
      '/vipapi',
      '/vipapi/eth',
      `/vipapi/eth/token/${USDC}/extra`,
      '/vipapi/eth/tokens/1',
      '/api/v1/x',
    ]) {
      assertError(await call(fx.url, withKey(path, BAD_KEY)), NOT_FOUND, secrets());
      assertError(await get(path), NOT_FOUND, secrets());
    }
  });

  test('a bad key with a bad chain answers 401', async () => {
    assertError(await call(fx.url, withKey(`/vipapi/btc/token/${USDC}`, BAD_KEY)), INVALID_KEY, secrets());
  });

  test('a bad chain with a bad address answers 50001', async () => {
    assertError(await get('/vipapi/btc/token/0xNOPE'), UNSUPPORTED, secrets());
    assertError(await get('/vipapi/btc/tokens/0/0'), UNSUPPORTED, secrets());
  });

  test('a bad address with an unknown token answers 10001', async () => {
    // ALICE is no token: the address check answers first.
    assertError(
      await get(`/vipapi/eth/token/0x${ALICE.slice(2).toUpperCase()}`),
      invalid(/lower case/),
      secrets(),
    );
  });

  test('a bad address with a bad page answers with the address', async () => {
    assertError(
      await get('/vipapi/eth/token/tokentrans/0x12/0/0'),
      invalid(/^invalid parameter: address/),
      secrets(),
    );
  });

  test('the method is checked before the key', async () => {
    const answer = await call(fx.url, withKey(OPERATIONS[0]!, BAD_KEY), { method: 'POST' });
    assertError(answer, METHOD, secrets());
  });
});

describe('unserved chains', () => {
  test('chains that do not exist, are not configured, or are upper case answer 50001', async () => {
    for (const chain of ['btc', 'kcs', 'neo', 'ETH', 'Eth', 'eth2']) {
      assertError(await get(`/vipapi/${chain}/token/${USDC}`), UNSUPPORTED, secrets());
      assertError(await get(`/vipapi/token/totalsupply/${chain}/${USDC}`), UNSUPPORTED, secrets());
      assertError(await get(`/vipapi/${chain}/token/tokentrans/${USDC}/1/10`), UNSUPPORTED, secrets());
      assertError(await get(`/vipapi/${chain}/tokens/1/10`), UNSUPPORTED, secrets());
    }
  });

  test('NEO-only operations are routed and answer 50001 while NEO is not served', async () => {
    for (const path of [
      `/vipapi/neo/asset/0x${'a'.repeat(64)}`,
      '/vipapi/tokens/neo/1/10',
      '/vipapi/contracts/neo/1/10',
      `/vipapi/token/neo/${USDC}`,
    ]) {
      assertError(await get(path), UNSUPPORTED, secrets());
      assertError(await call(fx.url, path), INVALID_KEY);
    }
  });
});

describe('parameters', () => {
  test('an upper-case address answers 10001 saying it must be lower case', async () => {
    const upper = `0x${ALICE.slice(2).toUpperCase()}`;
    const mixed = `0x${'aB'.repeat(20)}`;
    for (const address of [upper, mixed, `0X${ALICE.slice(2)}`, `0X${USDC.slice(2)}`]) {
      assertError(
        await get(`/vipapi/eth/token/${address}`),
        invalid(/^invalid parameter: address must be lower case$/),
        secrets(),
      );
      assertError(await get(`/vipapi/token/maxsupply/eth/${address}`), invalid(/lower case/), secrets());
      assertError(await get(`/vipapi/eth/token/tokentrans/${address}/1/1`), invalid(/lower case/), secrets());
    }
  });

  test('a malformed address answers 10001', async () => {
    for (const address of [
      '0x12',
      USDC.slice(2),
      `${USDC}0`,
      `0x${'g'.repeat(40)}`,
      `${USDC.slice(0, 41)} `,
      `0x${'a'.repeat(400)}`,
    ]) {
      assertError(
        await get(`/vipapi/eth/token/${encodeURIComponent(address)}`),
        invalid(/^invalid parameter: address must be 0x followed by 40 hex digits$/),
        secrets(),
      );
    }
  });

  test('page and size outside ^[0-9]+$ or 1..50 answer 10001', async () => {
    for (const bad of [
      '0',
      '51',
      '00',
      '1.0',
      '+1',
      '-1',
      '1e1',
      'abc',
      '%201',
      '1%20',
      '0x1',
      '99999999999999999999',
    ]) {
      assertError(
        await get(`/vipapi/eth/tokens/${bad}/10`),
        invalid(/^invalid parameter: page must be an integer from 1 to 50$/),
        secrets(),
      );
      assertError(
        await get(`/vipapi/eth/tokens/1/${bad}`),
        invalid(/^invalid parameter: size must be an integer from 1 to 50$/),
        secrets(),
      );
      assertError(await get(`/vipapi/eth/token/tokentrans/${USDC}/${bad}/10`), invalid(/page/), secrets());
      assertError(await get(`/vipapi/eth/token/tokentrans/${USDC}/1/${bad}`), invalid(/size/), secrets());
    }
  });

  test('page and size accept 1, 50 and leading zeros', async () => {
    for (const good of ['1', '50', '01', '050']) {
      okData(await get(`/vipapi/eth/tokens/${good}/${good}`));
      okData(await get(`/vipapi/eth/token/tokentrans/${USDC}/${good}/${good}`));
    }
  });
});

describe('unknown tokens', () => {
  test('every token operation answers 404 无数据 with HTTP 200', async () => {
    for (const path of [
      `/vipapi/eth/token/${UNKNOWN}`,
      `/vipapi/token/totalsupply/eth/${UNKNOWN}`,
      `/vipapi/token/maxsupply/eth/${UNKNOWN}`,
      `/vipapi/token/circulatingsupply/eth/${UNKNOWN}`,
      `/vipapi/eth/token/tokentrans/${UNKNOWN}/1/10`,
      `/vipapi/eth/token/tokentrans/${UNKNOWN}/50/50`,
      // Known on eth only.
      `/vipapi/bsc/token/${NOSUPPLY}`,
    ]) {
      assertError(await get(path), NO_DATA, secrets());
    }
  });
});

describe('methods', () => {
  test('methods other than GET and HEAD answer 405 with Allow', async () => {
    for (const path of [...OPERATIONS, '/healthz', '/status', '/vipapi/tokens/neo/1/1']) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const answer = await get(path, { method });
        assertError(answer, METHOD, secrets());
        assert.equal(answer.headers.get('allow'), 'GET, HEAD');
      }
    }
  });

  test('a request body does not change the 405', async () => {
    const answer = await get(OPERATIONS[0]!, {
      method: 'POST',
      body: '{"x":',
      headers: { 'content-type': 'application/json' },
    });
    assertError(answer, METHOD, secrets());
    const other = await get(OPERATIONS[0]!, {
      method: 'PUT',
      body: 'x',
      headers: { 'content-type': 'application/x-unknown' },
    });
    assertError(other, METHOD, secrets());
  });

  test('methods fastify does not know by default answer 405 too', async () => {
    for (const method of ['PROPFIND', 'TRACE', 'LOCK', 'PURGE']) {
      const answer = await rawRequest(
        `${method} ${withKey(OPERATIONS[0]!, fx.key)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 405 /);
      assert.match(answer, /\r\nallow: GET, HEAD\r\n/i);
      assert.ok(answer.endsWith('{"code":10001,"msg":"invalid parameter: method not allowed","data":null}'));
    }
  });

  test('HEAD of an error answers its status without a body', async () => {
    const answer = await call(fx.url, OPERATIONS[0]!, { method: 'HEAD' });
    assert.equal(answer.status, 401);
    assert.equal(answer.text, '');
  });
});

describe('malformed requests', () => {
  test('bad percent-encoding answers an envelope in check order', async () => {
    const path = '/vipapi/eth/token/%zz';
    assertError(await get(path), invalid(/percent-encoding/), secrets());
    assertError(await call(fx.url, withKey(path, BAD_KEY)), INVALID_KEY, secrets());
    assertError(await get('/nothing/%zz'), NOT_FOUND, secrets());
  });

  test('a long address is a bad parameter, not an unknown path', async () => {
    assertError(await get(`/vipapi/eth/token/0x${'a'.repeat(2000)}`), invalid(/address/), secrets());
  });

  test('a path segment beyond 8 KiB answers 414 as an envelope', async () => {
    assertError(
      await get(`/vipapi/eth/token/0x${'a'.repeat(9000)}`),
      { http: 414, code: 10001, msg: /too long/ },
      secrets(),
    );
  });

  test('a URL beyond the header limit answers 414 or 431 as an envelope', async () => {
    const answer = await rawRequest(
      `GET /vipapi/eth/tokens/1/1?apikey=${fx.key}&pad=${'p'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    assert.match(answer, /^HTTP\/1\.1 (414|431) /);
    assert.match(answer, /\{"code":10001,"msg":"invalid parameter: [^"]+","data":null\}$/);
    assert.ok(!answer.includes(fx.key));
  });

  test('a request that is not HTTP answers 400 as an envelope', async () => {
    const answer = await rawRequest('HELLO THERE\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /content-type: application\/json; charset=utf-8/i);
    assert.ok(answer.endsWith('{"code":10001,"msg":"invalid parameter: malformed request","data":null}'));
  });
});

describe('server faults', () => {
  test('a store failure answers 500 40001, logs the fault, and leaks nothing', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    // A long key cache: the key stays valid after the store closes, so the fault is the route's read.
    const local = await startApiFixture({ logger, keyCacheTtlMs: 60_000 });
    try {
      const path = withKey(`/vipapi/eth/token/${USDC}`, local.key);
      okData(await call(local.url, path));
      await local.store.close();
      const answer = await call(local.url, path);
      assertError(answer, { http: 500, code: 40001, msg: 'server is busy' }, [local.key]);
      assert.doesNotMatch(answer.text, /sqlite|database|select|\/tmp|at |Error/i);
      assert.equal(answer.text, '{"code":40001,"msg":"server is busy","data":null}');

      const health = await call(local.url, '/healthz');
      assert.equal(health.status, 503);
      assert.equal(health.headers.get('content-type'), JSON_TYPE);

      const log = lines.join('');
      assert.match(log, /request failed/);
      assert.match(log, /"path":"\/vipapi\/eth\/token\//);
      assert.ok(!log.includes(local.key), 'the log holds the apikey');
    } finally {
      await local.close().catch(() => {});
    }
  });
});

/** Sends raw bytes and returns everything the server writes until it closes or 2 s pass. */
function rawRequest(payload: string): Promise<string> {
  const { hostname, port } = new URL(fx.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), 2000);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // Responses with a body of known length are complete once the body is in.
      const text = Buffer.concat(chunks).toString();
      const m = /content-length: (\d+)\r\n/i.exec(text);
      const split = text.indexOf('\r\n\r\n');
      if (m && split !== -1 && Buffer.byteLength(text.slice(split + 4)) >= Number(m[1])) socket.end();
    });
    socket.on('error', (error) => {
      if (chunks.length === 0) reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString());
    });
    socket.write(payload);
  });
}
