/**
 * API-key checks. Keys are looked up by hash in the store and the answer is cached briefly:
 * short enough that a revocation (or a change of limits) made by another process on the same
 * store applies within a second, long enough that a busy key costs one store read per TTL, not
 * per request. A lookup gives the key's grant: its public id, the rate limit that applies and
 * its compiled IP allow-list, so the per-request checks cost no parsing.
 */
import { hashApiKey } from '../internal/api-keys.js';
import { createIpAllowList, type IpAllowList } from '../internal/ip-allow-list.js';
import { type RateLimit, replenishRateText } from '../internal/rate-limit.js';
import type { ApiKeyRecord, ApiKeyStore } from '../store/types.js';

/** What an active key may do, as the request checks need it. */
export interface KeyGrant {
  /** The key's public id: names its rate-limit bucket (never the key or its hash). */
  id: string;
  /** The limit that applies (the key's own, else the server default), or null: unlimited. */
  limit: RateLimit | null;
  /** `X-RateLimit-Burst-Capacity` and `X-RateLimit-Replenish-Rate` of `limit`, formatted once. */
  burstHeader: string;
  rateHeader: string;
  /** Addresses the key may be used from, or null: any. */
  allowList: IpAllowList | null;
}

export interface ApiKeyVerifierOptions {
  store: { keys: ApiKeyStore };
  /** How long a lookup (positive or negative) is trusted. Default 500 ms; at most 500 ms. */
  ttlMs?: number;
  /** Most cached lookups; the oldest is dropped beyond it, so random keys cannot grow memory. Default 10 000. */
  maxEntries?: number;
  /** The limit of keys without their own; absent or null: unlimited. */
  defaultRateLimit?: RateLimit | null;
  /** Clock, for tests. Default `Date.now`. */
  now?: () => number;
}

export interface ApiKeyVerifier {
  /** The grant of `apikey` (the raw query value), or null when it is no active key. Rejects only when the store fails. */
  verify(apikey: unknown): Promise<KeyGrant | null>;
  /**
   * The answer `verify` would give, when it is known without waiting: a malformed value, or a
   * settled lookup still inside its TTL. `undefined` otherwise (then call `verify`). Lets the
   * request hook skip a promise round trip on the hot path.
   */
  cached(apikey: unknown): KeyGrant | null | undefined;
  /** Cached lookups right now (for tests and metrics). */
  readonly size: number;
}

/** Longer values are refused without a lookup: generated keys are 46 characters. */
const MAX_KEY_LENGTH = 256;

/** The revocation promise ("refused within one second") needs a TTL of at most this. */
export const MAX_KEY_CACHE_TTL_MS = 500;

interface CacheEntry {
  expiresAt: number;
  /** A promise, so that concurrent requests with one key share a single store read. */
  grant: Promise<KeyGrant | null>;
  /** The promise's value once it has resolved; undefined before. */
  settled: KeyGrant | null | undefined;
}

/** The grant of an active key record. */
export function grantOf(record: ApiKeyRecord, defaultRateLimit: RateLimit | null): KeyGrant {
  const own = record.rateLimit;
  const limit = own === 'unlimited' ? null : (own ?? defaultRateLimit);
  return {
    id: record.id,
    limit,
    burstHeader: limit === null ? '' : String(limit.burst),
    rateHeader: limit === null ? '' : replenishRateText(limit.perSecond),
    allowList: record.allowIps === undefined ? null : createIpAllowList(record.allowIps),
  };
}

export function createApiKeyVerifier(options: ApiKeyVerifierOptions): ApiKeyVerifier {
  const { store } = options;
  const ttlMs = Math.min(options.ttlMs ?? MAX_KEY_CACHE_TTL_MS, MAX_KEY_CACHE_TTL_MS);
  const maxEntries = Math.max(1, options.maxEntries ?? 10_000);
  const defaultRateLimit = options.defaultRateLimit ?? null;
  const now = options.now ?? Date.now;
  // Insertion-ordered: the first entry is the oldest, which is the one evicted.
  const cache = new Map<string, CacheEntry>();

  function lookup(key: string): Promise<KeyGrant | null> {
    const t = now();
    const cached = cache.get(key);
    if (cached !== undefined && cached.expiresAt > t) return cached.grant;
    if (cached !== undefined) cache.delete(key);

    const grant = store.keys
      .findApiKeyByHash(hashApiKey(key))
      .then((record) =>
        record !== null && record.revokedAt === null ? grantOf(record, defaultRateLimit) : null,
      );
    const entry: CacheEntry = { expiresAt: t + ttlMs, grant, settled: undefined };
    grant.then(
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
    return grant;
  }

  /** Only a single, non-empty string counts (`?apikey=a&apikey=b` arrives as an array). */
  const wellFormed = (apikey: unknown): apikey is string =>
    typeof apikey === 'string' && apikey.length > 0 && apikey.length <= MAX_KEY_LENGTH;

  return {
    verify(apikey) {
      return wellFormed(apikey) ? lookup(apikey) : Promise.resolve(null);
    },
    cached(apikey) {
      if (!wellFormed(apikey)) return null;
      const entry = cache.get(apikey);
      return entry !== undefined && entry.expiresAt > now() ? entry.settled : undefined;
    },
    get size() {
      return cache.size;
    },
  };
}
