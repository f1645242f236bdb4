import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './api-keys.js';

describe('api keys', () => {
  test('a generated key is URL-safe, carries at least 128 random bits, and differs every time', () => {
    const keys = Array.from({ length: 200 }, () => generateApiKey());
    for (const { key } of keys) {
      assert.match(key, /^tq_[A-Za-z0-9_-]+$/);
      assert.equal(encodeURIComponent(key), key);
      // base64url: 6 bits per character after the prefix.
      assert.ok((key.length - 3) * 6 >= 128);
    }
    assert.equal(new Set(keys.map((k) => k.key)).size, keys.length);
    assert.equal(new Set(keys.map((k) => k.id)).size, keys.length);
  });

  test('the id is short, public, and not part of the key', () => {
    const { key, id } = generateApiKey();
    assert.match(id, /^[0-9a-f]{12}$/);
    assert.ok(!key.includes(id));
    assert.equal(looksLikeApiKey(id), false);
    assert.equal(looksLikeApiKey(key), true);
  });

  test('the hash is the SHA-256 hex of the key', () => {
    const { key, hash } = generateApiKey();
    assert.equal(hash, createHash('sha256').update(key).digest('hex'));
    assert.equal(hashApiKey(key), hash);
    assert.equal(hashApiKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
