/**
 * Rate limits, IP allow-lists and revocation over real HTTP: servers on one SQLite file (each
 * with its own connection, as separate processes would have), and the real Redis for shared
 * limits.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { generateApiKey } from '../internal/api-keys.js';
import type { Logger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { ApiKeyLimits, Store } from '../store/types.js';
import { type ApiServer, type ApiServerOptions, startApiServer } from './server.js';
import { type ApiFixture, startApiFixture, USDC } from './testing/fixture.js';
import { type Answer, assertError, call, okData } from './testing/http.js';
import { REDIS_URL, randomPrefix, requireRedis } from './testing/redis.js';

const TOO_MANY = { http: 429, code: 429, msg: 'too many requests' };
const INVALID_KEY = { http: 401, code: 50003, msg: 'invalid apikey' };
/** One token a minute: nothing refills while a test runs. */
const SLOW = 1 / 60;

let fx: ApiFixture;
/** Every line any server of this file logs, checked for keys at the end. */
const logLines: string[] = [];
let logger: Logger;
const servers: ApiServer[] = [];
const handles: Store[] = [];
const keys: string[] = [];

before(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  logger = pino({ level: 'debug' }, sink);
  fx = await startApiFixture({ logger });
  keys.push(fx.key);
});
after(async () => {
  for (const server of servers) await server.close();
  for (const handle of handles) await handle.close();
  await fx.close();
});

/** Another connection to the fixture's SQLite file: what another process has. */
async function handle(): Promise<Store> {
  const store = await openSqliteStore({ path: fx.dbPath, logger });
  handles.push(store);
  return store;
}

async function server(options: Partial<ApiServerOptions> = {}): Promise<ApiServer> {
  const started = await startApiServer({
    store: options.store ?? (await handle()),
    logger,
    chains: ['eth', 'bsc', 'movr'],
    host: '127.0.0.1',
    port: 0,
    ...options,
  });
  servers.push(started);
  return started;
}

/** A new active key with these limits. */
async function keyWith(limits: ApiKeyLimits = {}): Promise<{ key: string; id: string }> {
  const { key, id, hash } = generateApiKey();
  await fx.store.keys.createApiKey({
    id,
    hash,
    label: 'limits',
    createdAt: Date.now(),
    revokedAt: null,
    ...limits,
  });
  keys.push(key);
  return { key, id };
}

const tokenInfo = (base: string, key: string, init?: RequestInit) =>
  call(base, `/vipapi/eth/token/${USDC}?apikey=${key}`, init);

function rateHeaders(answer: Answer) {
  return {
    remaining: answer.headers.get('x-ratelimit-remaining'),
    burst: answer.headers.get('x-ratelimit-burst-capacity'),
    rate: answer.headers.get('x-ratelimit-replenish-rate'),
  };
}

const NO_RATE_HEADERS = { remaining: null, burst: null, rate: null };

/** Polls `probe` until it is true, returning the milliseconds it took (Infinity after `limitMs`). */
async function msUntil(probe: () => Promise<boolean>, limitMs = 3000): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    if (await probe()) return performance.now() - start;
    await sleep(20);
  }
  return Number.POSITIVE_INFINITY;
}

describe('rate limits over HTTP', () => {
  test('a limited key gets the X-RateLimit headers on every answer, then 429 with Retry-After', async () => {
    const api = await server({ defaultRateLimit: { perSecond: SLOW, burst: 3 } });
    const { key } = await keyWith();
    // The response cache answers the third request: it must not skip the limiter.
    for (const remaining of ['2', '1', '0']) {
      const answer = await tokenInfo(api.url, key);
      okData(answer);
      assert.deepEqual(rateHeaders(answer), { remaining, burst: '3', rate: '0.0166667' });
      assert.equal(answer.headers.get('retry-after'), null);
    }
    const refused = await tokenInfo(api.url, key);
    assertError(refused, TOO_MANY, [key]);
    assert.deepEqual(rateHeaders(refused), { remaining: '0', burst: '3', rate: '0.0166667' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 59 && retryAfter <= 60,
      `Retry-After ${retryAfter}`,
    );

    // The bucket is the key's, whatever the operation, method or path shape.
    assertError(await call(api.url, `/vipapi/eth/tokens/1/10?apikey=${key}`), TOO_MANY);
    const head = await tokenInfo(api.url, key, { method: 'HEAD' });
    assert.equal(head.status, 429);
    assert.equal(head.headers.get('x-ratelimit-remaining'), '0');
    assertError(await call(api.url, `/vipapi/eth/token/%E0%A4%A?apikey=${key}`), TOO_MANY);

    // Other keys have buckets of their own.
    const other = await keyWith();
    okData(await tokenInfo(api.url, other.key));
  });

  test('keyed error answers carry the headers; answers to a refused key or no key do not', async () => {
    const api = await server({ defaultRateLimit: { perSecond: 100, burst: 100 } });
    const { key } = await keyWith();
    const badParameter = await call(api.url, `/vipapi/eth/token/0xABC?apikey=${key}`);
    assert.equal(JSON.parse(badParameter.text).code, 10001);
    assert.equal(rateHeaders(badParameter).burst, '100');
    const unknownToken = await call(api.url, `/vipapi/eth/token/0x${'5'.repeat(40)}?apikey=${key}`);
    assert.equal(JSON.parse(unknownToken.text).code, 404);
    assert.equal(rateHeaders(unknownToken).burst, '100');

    const badKey = await tokenInfo(api.url, generateApiKey().key);
    assertError(badKey, INVALID_KEY);
    assert.deepEqual(rateHeaders(badKey), NO_RATE_HEADERS);
    assert.deepEqual(rateHeaders(await call(api.url, '/healthz')), NO_RATE_HEADERS);
  });

  test("a key's own limit wins over the default, and `unlimited` turns the default off", async () => {
    const api = await server({ defaultRateLimit: { perSecond: SLOW, burst: 2 } });
    const strict = await keyWith({ rateLimit: { perSecond: SLOW, burst: 1 } });
    const generous = await keyWith({ rateLimit: { perSecond: 1000, burst: 50 } });
    const free = await keyWith({ rateLimit: 'unlimited' });

    assert.deepEqual(rateHeaders(await tokenInfo(api.url, strict.key)), {
      remaining: '0',
      burst: '1',
      rate: '0.0166667',
    });
    assertError(await tokenInfo(api.url, strict.key), TOO_MANY);
    for (let i = 0; i < 10; i++) {
      const answer = await tokenInfo(api.url, generous.key);
      okData(answer);
      assert.equal(rateHeaders(answer).rate, '1000');
    }
    for (let i = 0; i < 10; i++) {
      const answer = await tokenInfo(api.url, free.key);
      okData(answer);
      assert.deepEqual(rateHeaders(answer), NO_RATE_HEADERS);
    }
  });

  test('without a default, keys without their own limit are unlimited and get no headers', async () => {
    const api = await server();
    const { key } = await keyWith();
    for (let i = 0; i < 20; i++) {
      const answer = await tokenInfo(api.url, key);
      okData(answer);
      assert.deepEqual(rateHeaders(answer), NO_RATE_HEADERS);
    }
  });

  test('a limit set by another process applies within a second', async () => {
    const api = await server();
    const { key, id } = await keyWith();
    okData(await tokenInfo(api.url, key));
    const admin = await handle();
    assert.ok(await admin.keys.setApiKeyLimits(id, { rateLimit: { perSecond: SLOW, burst: 2 } }));
    const ms = await msUntil(async () => rateHeaders(await tokenInfo(api.url, key)).burst === '2');
    assert.ok(ms < 1000, `applied after ${ms} ms`);
    // The bucket is already spent by the request that saw the new limit.
    assert.equal(rateHeaders(await tokenInfo(api.url, key)).remaining, '0');
    assertError(await tokenInfo(api.url, key), TOO_MANY);
  });
});

describe('IP allow-lists', () => {
  test('a key used from outside its allow-list is refused like an unknown key', async () => {
    const api = await server();
    const elsewhere = await keyWith({ allowIps: ['10.0.0.0/8', '2001:db8::/32'] });
    const here = await keyWith({ allowIps: ['10.0.0.0/8', '127.0.0.1/32'] });
    const v6only = await keyWith({ allowIps: ['::1/128'] });
    assertError(await tokenInfo(api.url, elsewhere.key), INVALID_KEY, [elsewhere.key]);
    assertError(await tokenInfo(api.url, v6only.key), INVALID_KEY);
    okData(await tokenInfo(api.url, here.key));
    okData(await tokenInfo(api.url, here.key));
    // The response cache holds that answer now (kept when asked for twice); the refused key is still refused.
    assertError(await tokenInfo(api.url, elsewhere.key), INVALID_KEY);
  });

  test('X-Forwarded-For is ignored unless the proxy is trusted', async () => {
    const direct = await server();
    const behindProxy = await server({ trustProxy: ['127.0.0.1/32'] });
    const office = await keyWith({ allowIps: ['203.0.113.0/24'] });
    const local = await keyWith({ allowIps: ['127.0.0.1/32'] });
    const from = (xff: string) => ({ headers: { 'x-forwarded-for': xff } });

    // Not configured: the header is the caller's word, worth nothing.
    assertError(await tokenInfo(direct.url, office.key, from('203.0.113.9')), INVALID_KEY);
    okData(await tokenInfo(direct.url, local.key, from('198.51.100.1')));

    // Trusted proxy on 127.0.0.1: the client is the nearest untrusted hop.
    okData(await tokenInfo(behindProxy.url, office.key, from('203.0.113.9')));
    assertError(await tokenInfo(behindProxy.url, office.key), INVALID_KEY, [office.key]);
    // A client cannot claim an allowed address by prepending it: the proxy appends the real one.
    assertError(await tokenInfo(behindProxy.url, office.key, from('203.0.113.9, 198.51.100.1')), INVALID_KEY);
    assertError(await tokenInfo(behindProxy.url, office.key, from('not-an-address')), INVALID_KEY);
    assertError(await tokenInfo(behindProxy.url, local.key, from('198.51.100.1')), INVALID_KEY);

    // A chain of trusted proxies: the client is the nearest untrusted address.
    const chain = await server({ trustProxy: ['127.0.0.1/32', '10.0.0.0/8'] });
    okData(await tokenInfo(chain.url, office.key, from('198.51.100.1, 203.0.113.9, 10.1.2.3')));
    assertError(
      await tokenInfo(chain.url, office.key, from('203.0.113.9, 198.51.100.1, 10.1.2.3')),
      INVALID_KEY,
    );
  });

  test("calls refused by the allow-list do not spend the key owner's requests", async () => {
    const api = await server({
      trustProxy: ['127.0.0.1/32'],
      defaultRateLimit: { perSecond: SLOW, burst: 2 },
    });
    const { key } = await keyWith({ allowIps: ['203.0.113.0/24'] });
    for (let i = 0; i < 5; i++) {
      const refused = await tokenInfo(api.url, key, { headers: { 'x-forwarded-for': '198.51.100.7' } });
      assertError(refused, INVALID_KEY);
      assert.deepEqual(rateHeaders(refused), NO_RATE_HEADERS);
    }
    const owner = { headers: { 'x-forwarded-for': '203.0.113.9' } };
    assert.equal(rateHeaders(await tokenInfo(api.url, key, owner)).remaining, '1');
    assert.equal(rateHeaders(await tokenInfo(api.url, key, owner)).remaining, '0');
  });

  test('IPv6 clients are matched against IPv6 networks', async (t) => {
    if (!(await canListen('::1'))) {
      t.skip('no IPv6 loopback on this machine');
      return;
    }
    const api = await server({ host: '::1' });
    const v6 = await keyWith({ allowIps: ['::1/128'] });
    const v4 = await keyWith({ allowIps: ['127.0.0.1/32'] });
    okData(await tokenInfo(api.url, v6.key));
    assertError(await tokenInfo(api.url, v4.key), INVALID_KEY);
  });

  test('an allow-list set by another process applies within a second, and can be removed', async () => {
    const api = await server();
    const { key, id } = await keyWith();
    okData(await tokenInfo(api.url, key));
    const admin = await handle();
    assert.ok(await admin.keys.setApiKeyLimits(id, { allowIps: ['10.0.0.0/8'] }));
    const refusedMs = await msUntil(async () => (await tokenInfo(api.url, key)).status === 401);
    assert.ok(refusedMs < 1000, `refused after ${refusedMs} ms`);
    assert.ok(await admin.keys.setApiKeyLimits(id, {}));
    const acceptedMs = await msUntil(async () => (await tokenInfo(api.url, key)).status === 200);
    assert.ok(acceptedMs < 1000, `accepted after ${acceptedMs} ms`);
  });
});

describe('revocation across replicas', () => {
  test('two servers on one store both refuse a revoked key within a second', async () => {
    const [a, b] = [await server(), await server()];
    const { key, id } = await keyWith();
    // Both have the key cached as valid (and its answer, asked for twice, in their response caches).
    for (let i = 0; i < 2; i++) {
      okData(await tokenInfo(a.url, key));
      okData(await tokenInfo(b.url, key));
    }
    const admin = await handle();
    assert.ok(await admin.keys.revokeApiKey(id, Date.now()));
    const [msA, msB] = await Promise.all(
      [a, b].map((api) => msUntil(async () => (await tokenInfo(api.url, key)).status === 401)),
    );
    assert.ok(msA! < 1000 && msB! < 1000, `refused after ${msA} and ${msB} ms`);
    assertError(await tokenInfo(a.url, key), INVALID_KEY, [key]);
  });
});

describe('rate limits shared through Redis', () => {
  before(requireRedis);

  test('two servers draw from one bucket per key', async () => {
    const prefix = randomPrefix();
    const shared = {
      redis: REDIS_URL,
      redisKeyPrefix: prefix,
      defaultRateLimit: { perSecond: SLOW, burst: 4 },
    };
    const [a, b] = [await server(shared), await server(shared)];
    const { key } = await keyWith();
    const seen: string[] = [];
    for (const api of [a, b, a, b]) {
      const answer = await tokenInfo(api.url, key);
      okData(answer);
      seen.push(rateHeaders(answer).remaining!);
    }
    assert.deepEqual(seen, ['3', '2', '1', '0']);
    assertError(await tokenInfo(a.url, key), TOO_MANY);
    assertError(await tokenInfo(b.url, key), TOO_MANY);
    // Concurrent requests across both: none slips through.
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => tokenInfo((i % 2 === 0 ? a : b).url, key)),
    );
    assert.deepEqual(new Set(burst.map((answer) => answer.status)), new Set([429]));
  });

  test('without Redis each server limits on its own (per-replica buckets)', async () => {
    const local = { defaultRateLimit: { perSecond: SLOW, burst: 2 } };
    const [a, b] = [await server(local), await server(local)];
    const { key } = await keyWith();
    for (const api of [a, a, b, b]) okData(await tokenInfo(api.url, key));
    assertError(await tokenInfo(a.url, key), TOO_MANY);
    assertError(await tokenInfo(b.url, key), TOO_MANY);
  });
});

describe('logs', () => {
  test('no key appears in any log line of these servers', () => {
    assert.ok(logLines.length > 0, 'the servers logged nothing at debug level');
    const log = logLines.join('');
    for (const key of keys) assert.ok(!log.includes(key), 'a log line holds an apikey');
  });
});

async function canListen(host: string): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(0, host, () => probe.close(() => resolve(true)));
  });
}
