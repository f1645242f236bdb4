/**
 * API key material. The key itself is shown once (by `keys create`) and never stored:
 * the store keeps only its SHA-256 hash and a short public id.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Every generated key starts with this, so a key can be told from an id at a glance (`keys revoke <key-or-id>`). */
export const API_KEY_PREFIX = 'tq_';

export interface GeneratedApiKey {
  /** The secret: `tq_` + 43 base64url characters (256 random bits). Shown once. */
  key: string;
  /** Short public identifier (12 hex characters, 48 random bits), unrelated to the key. */
  id: string;
  /** SHA-256 hex of `key`, as stored. */
  hash: string;
}

/** A fresh key with 256 bits of randomness, URL-safe characters only (`A-Z a-z 0-9 - _`). */
export function generateApiKey(): GeneratedApiKey {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const id = randomBytes(6).toString('hex');
  return { key, id, hash: hashApiKey(key) };
}

/** SHA-256 hex of a key: what the store holds and what auth looks up. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Length of every generated key: the prefix and 43 base64url characters. */
export const API_KEY_LENGTH = API_KEY_PREFIX.length + 43;

const KEY_SHAPE = /^tq_[A-Za-z0-9_-]{43}$/;

/** True when the text has the shape of a generated key (as opposed to an id, a hash or junk). */
export function looksLikeApiKey(text: string): boolean {
  return KEY_SHAPE.test(text);
}
