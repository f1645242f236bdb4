/**
 * API-key checks. Values not shaped like a generated key are refused without a lookup. Keys
 * are looked up by hash in the store and the answer is cached briefly:
 * short enough that a revocation (or a change of limits) made by another process on the same
 * store applies within a second, long enough that a busy key costs one store read per TTL, not
 * per request. A lookup gives the key's grant: its public id, the rate limit that applies and
 * its compiled IP allow-list, so the per-request checks cost no parsing. Active keys and unknown
 * ones are cached apart, each with its own bound, so unknown keys cannot push active ones out.
 */
import { API_KEY_LENGTH, hashApiKey, looksLikeApiKey } from '../internal/api-keys.js';
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
  /**
   * Most keys remembered as active, and, apart, most remembered as unknown: beyond either bound
   * the oldest of that kind is dropped. Kept apart so that a flood of random keys, each a miss,
   * can never push an active key out. Default 10 000 each.
   */
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
   * The answer `verify` would give, when it is known without a store read: a value that is not
   * shaped like a key, or a settled lookup still inside its TTL. `undefined` otherwise (then call
   * `verify`). Lets the request hook skip a promise round trip on the hot path.
   */
  cached(apikey: unknown): KeyGrant | null | undefined;
  /**
   * True when `apikey` was an active key at its last lookup, however long ago (within the
   * bound of remembered keys). Only real keys get here, so the per-address limit lets their
   * lookups through even from an address that has used up its failures.
   */
  known(apikey: unknown): boolean;
  /** Remembered lookups right now, active and unknown keys together (for tests and metrics). */
  readonly size: number;
}

/** The revocation promise ("refused within one second") needs a TTL of at most this. */
export const MAX_KEY_CACHE_TTL_MS = 500;

/** A key that was active at its last lookup. */
interface Hit {
  grant: KeyGrant;
  /** Until when `grant` is trusted without asking the store again. */
  expiresAt: number;
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

/** Sets `key` as the newest entry of an insertion-ordered map, dropping the oldest beyond `max`. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  while (map.size >= max) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
  map.set(key, value);
}

export function createApiKeyVerifier(options: ApiKeyVerifierOptions): ApiKeyVerifier {
  const { store } = options;
  const ttlMs = Math.min(options.ttlMs ?? MAX_KEY_CACHE_TTL_MS, MAX_KEY_CACHE_TTL_MS);
  const maxEntries = Math.max(1, options.maxEntries ?? 10_000);
  const defaultRateLimit = options.defaultRateLimit ?? null;
  const now = options.now ?? Date.now;
  // Insertion-ordered: the first entry of each is the oldest, which is the one dropped.
  const hits = new Map<string, Hit>();
  /** Unknown or revoked keys: until when that answer is trusted. */
  const misses = new Map<string, number>();
  /** Lookups in flight, so that concurrent requests with one key share a single store read. */
  const pending = new Map<string, Promise<KeyGrant | null>>();

  function lookup(key: string): Promise<KeyGrant | null> {
    const t = now();
    const hit = hits.get(key);
    if (hit !== undefined && hit.expiresAt > t) return Promise.resolve(hit.grant);
    const miss = misses.get(key);
    if (miss !== undefined && miss > t) return Promise.resolve(null);
    const inFlight = pending.get(key);
    if (inFlight !== undefined) return inFlight;

    // Trusted from when the read starts, so a change made meanwhile is seen within one TTL.
    const expiresAt = t + ttlMs;
    const grant = store.keys
      .findApiKeyByHash(hashApiKey(key))
      .then((record) =>
        record !== null && record.revokedAt === null ? grantOf(record, defaultRateLimit) : null,
      );
    pending.set(key, grant);
    grant.then(
      (value) => {
        pending.delete(key);
        if (value === null) {
          hits.delete(key);
          remember(misses, key, expiresAt, maxEntries);
        } else {
          misses.delete(key);
          remember(hits, key, { grant: value, expiresAt }, maxEntries);
        }
      },
      // A failed read must not be remembered: the next request asks the store again.
      () => {
        pending.delete(key);
      },
    );
    return grant;
  }

  return {
    verify(apikey) {
      return isKeyShaped(apikey) ? lookup(apikey) : Promise.resolve(null);
    },
    cached(apikey) {
      if (!isKeyShaped(apikey)) return null;
      const t = now();
      const hit = hits.get(apikey);
      if (hit !== undefined && hit.expiresAt > t) return hit.grant;
      const miss = misses.get(apikey);
      return miss !== undefined && miss > t ? null : undefined;
    },
    known(apikey) {
      return typeof apikey === 'string' && hits.has(apikey);
    },
    get size() {
      return hits.size + misses.size;
    },
  };
}

/**
 * Only what `keys create` generates can be a key: one string (`?apikey=a&apikey=b` arrives as an
 * array), `tq_` and 43 base64url characters. Anything else is refused without hashing or a store
 * read, so junk values cost nothing and never reach the caches.
 */
function isKeyShaped(apikey: unknown): apikey is string {
  return typeof apikey === 'string' && apikey.length === API_KEY_LENGTH && looksLikeApiKey(apikey);
}
