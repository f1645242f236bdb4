import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateApiKey } from '../internal/api-keys.js';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createTestApiKey } from '../store/testing/api-key.js';
import type { Store } from '../store/types.js';
import { createApiKeyVerifier } from './auth.js';
import { type ApiFixture, startApiFixture, USDC } from './testing/fixture.js';
import { call } from './testing/http.js';

let fx: ApiFixture;
/** A second handle on the same SQLite file: what a `keys` command in another process does. */
let other: Store;
before(async () => {
  fx = await startApiFixture();
  other = await openSqliteStore({ path: fx.dbPath, logger: silentLogger() });
});
after(async () => {
  await other.close();
  await fx.close();
});

const tokenInfo = (key: string) => call(fx.url, `/vipapi/eth/token/${USDC}?apikey=${key}`);

/** Polls until `status` answers, returning the milliseconds it took (or Infinity after `limitMs`). */
async function msUntil(key: string, status: number, limitMs = 3000): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    if ((await tokenInfo(key)).status === status) return performance.now() - start;
    await sleep(20);
  }
  return Number.POSITIVE_INFINITY;
}

function createKey(store: Store): Promise<{ key: string; id: string; hash: string }> {
  return createTestApiKey(store, 't', Date.now());
}

describe('api key revocation', () => {
  test('a key revoked by another process is refused within one second', async () => {
    const { key, id } = await createKey(other);
    assert.ok((await msUntil(key, 200)) < 1000);
    // Warm: the server has the key cached as valid right now.
    assert.equal((await tokenInfo(key)).status, 200);
    assert.ok(await other.keys.revokeApiKey(id, Date.now()));
    const ms = await msUntil(key, 401);
    assert.ok(ms < 1000, `refused after ${ms} ms`);
  });

  test('a key created by another process is accepted within one second', async () => {
    const generated = generateApiKey();
    // Refused first, so the refusal is cached.
    assert.equal((await tokenInfo(generated.key)).status, 401);
    await other.keys.createApiKey({
      id: generated.id,
      hash: generated.hash,
      label: 'late',
      createdAt: Date.now(),
      revokedAt: null,
    });
    const ms = await msUntil(generated.key, 200);
    assert.ok(ms < 1000, `accepted after ${ms} ms`);
  });

  test('revoking by hash works like revoking by id', async () => {
    const { key, hash } = await createKey(other);
    assert.ok((await msUntil(key, 200)) < 1000);
    assert.ok(await other.keys.revokeApiKey(hash, Date.now()));
    assert.ok((await msUntil(key, 401)) < 1000);
  });
});

describe('api key cache', () => {
  /** The real store, counting key lookups and able to fail the next one. */
  function counting(store: Store) {
    const state = { reads: 0, failNext: false };
    const keys = Object.create(store.keys) as Store['keys'];
    keys.findApiKeyByHash = async (hash) => {
      state.reads++;
      if (state.failNext) {
        state.failNext = false;
        throw new Error('store down');
      }
      return store.keys.findApiKeyByHash(hash);
    };
    const wrapped: Store = { ...store, keys };
    return { store: wrapped, state };
  }

  test('a lookup is trusted for the TTL, then asked again', async () => {
    const { store, state } = counting(fx.store);
    let now = 1_000;
    const verifier = createApiKeyVerifier({ store, ttlMs: 500, now: () => now });
    const { key, id } = await createKey(fx.store);
    assert.equal((await verifier.verify(key))?.id, id);
    await fx.store.keys.revokeApiKey(id, Date.now());
    now += 499;
    assert.equal((await verifier.verify(key))?.id, id, 'still cached');
    assert.equal(state.reads, 1);
    now += 1;
    assert.equal(await verifier.verify(key), null, 'expired, read again');
    assert.equal(state.reads, 2);
  });

  test('concurrent requests with one key share one store read', async () => {
    const { store, state } = counting(fx.store);
    const verifier = createApiKeyVerifier({ store });
    const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(fx.key)));
    assert.equal(new Set(results).size, 1, 'one shared grant');
    assert.ok(results[0]);
    assert.equal(state.reads, 1);
  });

  test('random keys cannot grow the cache beyond its bound', async () => {
    const verifier = createApiKeyVerifier({ store: fx.store, maxEntries: 100 });
    for (let i = 0; i < 1000; i++) assert.equal(await verifier.verify(generateApiKey().key), null);
    assert.equal(verifier.size, 100);
    // The valid key still works after the churn.
    assert.ok(await verifier.verify(fx.key));
  });

  test('values that cannot be keys are refused without a lookup', async () => {
    const { store, state } = counting(fx.store);
    const verifier = createApiKeyVerifier({ store });
    for (const value of [undefined, null, '', ['a', 'b'], 42, 'x'.repeat(257)]) {
      assert.equal(await verifier.verify(value), null);
    }
    assert.equal(state.reads, 0);
  });

  test('values that are not shaped like a generated key make no store call', async () => {
    const { store, state } = counting(fx.store);
    const verifier = createApiKeyVerifier({ store });
    const real = fx.key;
    const values = [
      'nope',
      'x'.repeat(46),
      real.slice(0, -1),
      `${real}A`,
      `TQ_${real.slice(3)}`,
      `${real.slice(0, -1)}=`,
      `${real.slice(0, -1)}/`,
      `${real.slice(0, -1)}+`,
      ` ${real.slice(1)}`,
      `${real.slice(0, -1)}\n`,
      `tq_${'é'.repeat(43)}`,
    ];
    for (const value of values) {
      assert.equal(await verifier.verify(value), null, value);
      assert.equal(verifier.cached(value), null, value);
    }
    assert.equal(state.reads, 0);
  });

  test('10 000 random well-formed keys do not evict a real key', async () => {
    const { store, state } = counting(fx.store);
    // A frozen clock: the real key's lookup stays fresh however long the flood takes.
    const verifier = createApiKeyVerifier({ store, now: () => 1_000 });
    assert.ok(await verifier.verify(fx.key));
    assert.equal(state.reads, 1);
    for (let i = 0; i < 10_000; i++) assert.equal(await verifier.verify(generateApiKey().key), null);
    assert.equal(state.reads, 10_001);
    assert.ok(verifier.cached(fx.key), 'the real key is still cached');
    assert.ok(await verifier.verify(fx.key));
    assert.equal(state.reads, 10_001, 'no store call for the real key');
  });

  test('a failed store read is not remembered', async () => {
    const { store, state } = counting(fx.store);
    const verifier = createApiKeyVerifier({ store });
    state.failNext = true;
    await assert.rejects(verifier.verify(fx.key), /store down/);
    assert.ok(await verifier.verify(fx.key));
    assert.equal(state.reads, 2);
  });
});
