/**
 * The per-address limit of requests without a key or with a failed key, over real HTTP: each
 * client address (as the server determines it, `--trust-proxy` included) has its own bucket,
 * refused requests answer Tokenview's 429 and cost no key lookup.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateApiKey } from '../internal/api-keys.js';
import { silentLogger } from '../internal/logger.js';
import type { Store } from '../store/types.js';
import { type ApiServer, type ApiServerOptions, startApiServer } from './server.js';
import { type ApiFixture, startApiFixture, USDC } from './testing/fixture.js';
import { type Answer, assertError, call } from './testing/http.js';

const TOO_MANY = { http: 429, code: 429, msg: 'too many requests' };
const INVALID_KEY = { http: 401, code: 50003, msg: 'invalid apikey' };
/** One token a minute: nothing refills while a test runs. */
const SLOW = 1 / 60;

let fx: ApiFixture;
const servers: ApiServer[] = [];
before(async () => {
  fx = await startApiFixture();
});
after(async () => {
  for (const server of servers) await server.close();
  await fx.close();
});

/** The fixture's store, counting key lookups. */
function counting(store: Store) {
  const state = { reads: 0 };
  const keys = Object.create(store.keys) as Store['keys'];
  keys.findApiKeyByHash = async (hash) => {
    state.reads++;
    return store.keys.findApiKeyByHash(hash);
  };
  return { store: { ...store, keys } as Store, state };
}

async function server(options: Partial<ApiServerOptions> = {}): Promise<ApiServer> {
  const started = await startApiServer({
    store: fx.store,
    logger: silentLogger(),
    chains: ['eth'],
    host: '127.0.0.1',
    port: 0,
    trustProxy: ['127.0.0.1/32'],
    ...options,
  });
  servers.push(started);
  return started;
}

/** Token Info from `client` (sent as X-Forwarded-For through the trusted loopback proxy). */
const tokenInfo = (base: string, client: string, key?: string, method = 'GET'): Promise<Answer> =>
  call(base, `/vipapi/eth/token/${USDC}${key === undefined ? '' : `?apikey=${encodeURIComponent(key)}`}`, {
    method,
    headers: { 'x-forwarded-for': client },
  });

const randomKey = () => generateApiKey().key;

describe('per-address limit of requests without a valid key', () => {
  test('an address is limited after its burst of failures; another address is not', async () => {
    const { store, state } = counting(fx.store);
    const api = await server({ store, anonymousRateLimit: { perSecond: SLOW, burst: 3 } });
    const A = '198.51.100.1';
    const B = '198.51.100.2';
    const unknown = randomKey();
    assertError(await tokenInfo(api.url, A), INVALID_KEY);
    assertError(await tokenInfo(api.url, A, 'not-a-key'), INVALID_KEY);
    assertError(await tokenInfo(api.url, A, unknown), INVALID_KEY, [unknown]);
    assert.equal(state.reads, 1, 'only the well-formed key was looked up');

    const another = randomKey();
    for (const key of [undefined, 'not-a-key', another]) {
      const refused = await tokenInfo(api.url, A, key);
      assertError(refused, TOO_MANY, [another]);
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal(refused.headers.get('x-ratelimit-burst-capacity'), null);
    }
    assert.equal(state.reads, 1, 'a refused address costs no lookup');
    const head = await tokenInfo(api.url, A, undefined, 'HEAD');
    assert.equal(head.status, 429);
    assert.equal(head.text, '');

    assertError(await tokenInfo(api.url, B), INVALID_KEY);
    assertError(await tokenInfo(api.url, B, randomKey()), INVALID_KEY);
  });

  test('a valid key is served from a limited address, and costs it nothing', async () => {
    const api = await server({ anonymousRateLimit: { perSecond: SLOW, burst: 2 } });
    const A = '198.51.100.3';
    const { key } = await fx.addKey();
    // A key not seen before costs a token while it is looked up, and gets it back when it is valid.
    for (let i = 0; i < 5; i++) assert.equal((await tokenInfo(api.url, A, key)).status, 200);
    assertError(await tokenInfo(api.url, A), INVALID_KEY);
    assertError(await tokenInfo(api.url, A), INVALID_KEY);
    assertError(await tokenInfo(api.url, A), TOO_MANY);
    assert.equal((await tokenInfo(api.url, A, key)).status, 200);
  });

  test('a key known to be valid is looked up again from a limited address once its lookup expires', async () => {
    const { store, state } = counting(fx.store);
    const api = await server({ store, keyCacheTtlMs: 1, anonymousRateLimit: { perSecond: SLOW, burst: 1 } });
    const A = '198.51.100.4';
    const { key } = await fx.addKey();
    assert.equal((await tokenInfo(api.url, '198.51.100.5', key)).status, 200);
    assertError(await tokenInfo(api.url, A), INVALID_KEY);
    assertError(await tokenInfo(api.url, A, randomKey()), TOO_MANY);
    const reads = state.reads;
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal((await tokenInfo(api.url, A, key)).status, 200);
    assert.equal(state.reads, reads + 1, 'looked up again, not refused');
  });

  test('a key used from outside its allow-list counts as a failure', async () => {
    const api = await server({ anonymousRateLimit: { perSecond: SLOW, burst: 1 } });
    const { key, id } = await fx.addKey();
    await fx.store.keys.setApiKeyLimits(id, { allowIps: ['203.0.113.0/24'] });
    const A = '198.51.100.6';
    assertError(await tokenInfo(api.url, A, key), INVALID_KEY);
    assertError(await tokenInfo(api.url, A, key), TOO_MANY);
    assert.equal((await tokenInfo(api.url, '203.0.113.1', key)).status, 200);
  });

  test('IPv6 clients share one bucket per /64', async () => {
    const api = await server({ anonymousRateLimit: { perSecond: SLOW, burst: 1 } });
    assertError(await tokenInfo(api.url, '2001:db8:1:2::1'), INVALID_KEY);
    assertError(await tokenInfo(api.url, '2001:db8:1:2:ffff::7'), TOO_MANY);
    assertError(await tokenInfo(api.url, '2001:db8:1:3::1'), INVALID_KEY);
  });

  test('off: failures are never limited', async () => {
    const api = await server({ anonymousRateLimit: null });
    for (let i = 0; i < 50; i++) assertError(await tokenInfo(api.url, '198.51.100.7'), INVALID_KEY);
  });

  test('on by default', async () => {
    const api = await server();
    const statuses = new Set<number>();
    for (let i = 0; i < 40; i++) statuses.add((await tokenInfo(api.url, '198.51.100.8')).status);
    assert.deepEqual([...statuses].sort(), [401, 429]);
  });
});
