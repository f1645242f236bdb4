/**
 * The store contract suite, API keys: create, find, revoke, and their limits.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiKeyRecord } from '../types.js';
import type { ContractContext } from './fixtures.js';

export function runApiKeyCases({ withStore }: ContractContext): void {
  describe('api keys', () => {
    const first = {
      id: 'k1abc',
      hash: 'a'.repeat(64),
      label: 'first',
      createdAt: 1_700_000_000_000,
      revokedAt: null,
    };
    const second = {
      id: 'k2def',
      hash: 'b'.repeat(64),
      label: '',
      createdAt: 1_700_000_000_500,
      revokedAt: null,
    };

    test('create, list, find and revoke by id or hash', () =>
      withStore(async (store) => {
        await store.keys.createApiKey(second);
        await store.keys.createApiKey(first);
        assert.deepEqual(await store.keys.listApiKeys(), [first, second]);
        assert.deepEqual(await store.keys.findApiKeyByHash(first.hash), first);
        assert.equal(await store.keys.findApiKeyByHash('c'.repeat(64)), null);

        assert.equal(await store.keys.revokeApiKey(first.id, 1_700_000_001_000), true);
        assert.deepEqual(await store.keys.findApiKeyByHash(first.hash), {
          ...first,
          revokedAt: 1_700_000_001_000,
        });
        assert.equal(await store.keys.revokeApiKey(first.id, 1_700_000_002_000), false);
        assert.equal(await store.keys.revokeApiKey(first.hash, 1_700_000_002_000), false);
        assert.equal((await store.keys.findApiKeyByHash(first.hash))?.revokedAt, 1_700_000_001_000);

        assert.equal(await store.keys.revokeApiKey(second.hash, 1_700_000_003_000), true);
        assert.equal(await store.keys.revokeApiKey('nope', 1_700_000_003_000), false);
        assert.deepEqual(await store.keys.listApiKeys(), [
          { ...first, revokedAt: 1_700_000_001_000 },
          { ...second, revokedAt: 1_700_000_003_000 },
        ]);
      }));

    test('a duplicate id or hash is refused', () =>
      withStore(async (store) => {
        await store.keys.createApiKey(first);
        await assert.rejects(store.keys.createApiKey({ ...second, id: first.id }));
        await assert.rejects(store.keys.createApiKey({ ...second, hash: first.hash }));
        assert.deepEqual(await store.keys.listApiKeys(), [first]);
      }));

    test('rate limits and allow-lists round-trip exactly, and absent fields stay absent', () =>
      withStore(async (store) => {
        const limited: ApiKeyRecord = {
          ...first,
          // 1/min: a rate that is no short decimal must come back bit for bit.
          rateLimit: { perSecond: 1 / 60, burst: 7 },
          allowIps: ['203.0.113.0/24', '2001:db8::/32', '192.0.2.7/32'],
        };
        const unlimited: ApiKeyRecord = { ...second, rateLimit: 'unlimited' };
        await store.keys.createApiKey(limited);
        await store.keys.createApiKey(unlimited);
        assert.deepEqual(await store.keys.listApiKeys(), [limited, unlimited]);
        assert.deepEqual(await store.keys.findApiKeyByHash(limited.hash), limited);
        assert.deepEqual(await store.keys.findApiKeyByHash(unlimited.hash), unlimited);

        // Set by id, then by hash; each call replaces both fields.
        assert.equal(
          await store.keys.setApiKeyLimits(limited.id, { rateLimit: { perSecond: 2.5, burst: 1 } }),
          true,
        );
        assert.deepEqual(await store.keys.findApiKeyByHash(limited.hash), {
          ...first,
          rateLimit: { perSecond: 2.5, burst: 1 },
        });
        assert.equal(await store.keys.setApiKeyLimits(unlimited.hash, { allowIps: ['::1/128'] }), true);
        assert.deepEqual(await store.keys.findApiKeyByHash(unlimited.hash), {
          ...second,
          allowIps: ['::1/128'],
        });
        // An empty list is "any address", given back absent.
        assert.equal(await store.keys.setApiKeyLimits(unlimited.id, { allowIps: [] }), true);
        assert.deepEqual(await store.keys.findApiKeyByHash(unlimited.hash), second);

        // Unknown and revoked keys are not changed.
        assert.equal(await store.keys.setApiKeyLimits('nope', { rateLimit: 'unlimited' }), false);
        assert.equal(await store.keys.revokeApiKey(limited.id, 1_700_000_001_000), true);
        assert.equal(await store.keys.setApiKeyLimits(limited.id, { rateLimit: 'unlimited' }), false);
        assert.deepEqual((await store.keys.findApiKeyByHash(limited.hash))?.rateLimit, {
          perSecond: 2.5,
          burst: 1,
        });
      }));

    test('limits no parser produces are refused before they are stored', () =>
      withStore(async (store) => {
        await store.keys.createApiKey(first);
        for (const rateLimit of [
          { perSecond: 0, burst: 1 },
          { perSecond: Number.NaN, burst: 1 },
          { perSecond: 1, burst: 0 },
          { perSecond: 1, burst: 1.5 },
        ]) {
          await assert.rejects(store.keys.setApiKeyLimits(first.id, { rateLimit }));
        }
        for (const allowIps of [
          ['10.0.0.1/8'],
          ['10.0.0.0/8,11.0.0.0/8'],
          ['not an ip'],
          ['2001:DB8::/32'],
        ]) {
          await assert.rejects(store.keys.setApiKeyLimits(first.id, { allowIps }));
          await assert.rejects(store.keys.createApiKey({ ...second, allowIps }));
        }
        assert.deepEqual(await store.keys.listApiKeys(), [first]);
      }));
  });
}
