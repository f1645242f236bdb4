/**
 * API-key checks. Keys are looked up by hash in the store and the answer is cached briefly:
 * short enough that a revocation made by another process on the same store is refused
 * within a second, long enough that a busy key costs one store read per TTL, not per request.
 */
import { hashApiKey } from '../internal/api-keys.js';
import type { Store } from '../store/types.js';

export interface ApiKeyVerifierOptions {
  store: Store;
  /** How long a lookup (positive or negative) is trusted. Default 500 ms. */
  ttlMs?: number;
  /** Most cached lookups; the oldest is dropped beyond it, so random keys cannot grow memory. Default 10 000. */
  maxEntries?: number;
  /** Clock, for tests. Default `Date.now`. */
  now?: () => number;
}

export interface ApiKeyVerifier {
  /** True when `apikey` (the raw query value) is an active key. Rejects only when the store fails. */
  verify(apikey: unknown): Promise<boolean>;
  /** Cached lookups right now (for tests and metrics). */
  readonly size: number;
}

/** Longer values are refused without a lookup: generated keys are 46 characters. */
const MAX_KEY_LENGTH = 256;

interface CacheEntry {
  expiresAt: number;
  /** A promise, so that concurrent requests with one key share a single store read. */
  valid: Promise<boolean>;
}

export function createApiKeyVerifier(options: ApiKeyVerifierOptions): ApiKeyVerifier {
  const { store } = options;
  const ttlMs = options.ttlMs ?? 500;
  const maxEntries = Math.max(1, options.maxEntries ?? 10_000);
  const now = options.now ?? Date.now;
  // Insertion-ordered: the first entry is the oldest, which is the one evicted.
  const cache = new Map<string, CacheEntry>();

  function lookup(key: string): Promise<boolean> {
    const t = now();
    const cached = cache.get(key);
    if (cached !== undefined && cached.expiresAt > t) return cached.valid;
    if (cached !== undefined) cache.delete(key);

    const valid = store
      .findApiKeyByHash(hashApiKey(key))
      .then((record) => record !== null && record.revokedAt === null);
    const entry: CacheEntry = { expiresAt: t + ttlMs, valid };
    // A failed read must not be remembered: the next request asks the store again.
    valid.catch(() => {
      if (cache.get(key) === entry) cache.delete(key);
    });
    while (cache.size >= maxEntries) {
      const oldest = cache.keys().next();
      if (oldest.done) break;
      cache.delete(oldest.value);
    }
    cache.set(key, entry);
    return valid;
  }

  return {
    verify(apikey) {
      // Only a single, non-empty string counts (`?apikey=a&apikey=b` arrives as an array).
      if (typeof apikey !== 'string' || apikey.length === 0 || apikey.length > MAX_KEY_LENGTH) {
        return Promise.resolve(false);
      }
      return lookup(apikey);
    },
    get size() {
      return cache.size;
    },
  };
}
