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
  /**
   * The answer `verify` would give, when it is known without waiting: a malformed value, or a
   * settled lookup still inside its TTL. `undefined` otherwise (then call `verify`). Lets the
   * request hook skip a promise round trip on the hot path.
   */
  cached(apikey: unknown): boolean | undefined;
  /** Cached lookups right now (for tests and metrics). */
  readonly size: number;
}

/** Longer values are refused without a lookup: generated keys are 46 characters. */
const MAX_KEY_LENGTH = 256;

interface CacheEntry {
  expiresAt: number;
  /** A promise, so that concurrent requests with one key share a single store read. */
  valid: Promise<boolean>;
  /** The promise's value once it has resolved. */
  settled?: boolean;
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
    valid.then(
      (value) => {
        entry.settled = value;
      },
      // A failed read must not be remembered: the next request asks the store again.
      () => {
        if (cache.get(key) === entry) cache.delete(key);
      },
    );
    while (cache.size >= maxEntries) {
      const oldest = cache.keys().next();
      if (oldest.done) break;
      cache.delete(oldest.value);
    }
    cache.set(key, entry);
    return valid;
  }

  /** Only a single, non-empty string counts (`?apikey=a&apikey=b` arrives as an array). */
  const wellFormed = (apikey: unknown): apikey is string =>
    typeof apikey === 'string' && apikey.length > 0 && apikey.length <= MAX_KEY_LENGTH;

  return {
    verify(apikey) {
      return wellFormed(apikey) ? lookup(apikey) : Promise.resolve(false);
    },
    cached(apikey) {
      if (!wellFormed(apikey)) return false;
      const entry = cache.get(apikey);
      return entry !== undefined && entry.expiresAt > now() ? entry.settled : undefined;
    },
    get size() {
      return cache.size;
    },
  };
}
