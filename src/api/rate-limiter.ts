/**
 * Per-key rate limiting: a token bucket per API key. Each bucket holds at most `burst` tokens,
 * gains `perSecond` tokens a second, and each request takes one. This is the in-process
 * limiter (one process's view); `redis-rate-limiter.ts` keeps the buckets in Redis, so that
 * every replica draws from the same bucket.
 */
import type { RateLimit } from '../internal/rate-limit.js';

/** What one request gets from its bucket. */
export interface RateDecision {
  /** False: refuse with 429. */
  allowed: boolean;
  /** Whole tokens left after this request (`X-RateLimit-Remaining`). */
  remaining: number;
  /** When refused: whole seconds until a token is there (`Retry-After`, at least 1); else 0. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Takes one token from the bucket named `bucket` (a key's public id) under `limit`. The
   * in-process limiter answers at once; a shared one answers with a promise. Never rejects:
   * a shared limiter that cannot reach its backend decides locally instead.
   */
  take(bucket: string, limit: RateLimit): RateDecision | Promise<RateDecision>;
  /**
   * True when `take` always answers at once and a refused take changes nothing (it only brings
   * the refill up to date), so a refused request may ask again: the fast path (fast-path.ts)
   * relies on it. Absent on the shared limiter.
   */
  readonly synchronous?: boolean;
  /** Releases connections and timers. */
  close(): Promise<void>;
}

export interface LocalRateLimiterOptions {
  /** Monotonic milliseconds; default `performance.now`. Tests pass a fake clock. */
  now?: () => number;
  /**
   * Buckets kept before full ones are swept (a full bucket is the same as no bucket). Only
   * authenticated keys get buckets, so this is a guard, not a working limit. Default 100 000.
   */
  maxBuckets?: number;
}

export interface LocalRateLimiter extends RateLimiter {
  take(bucket: string, limit: RateLimit): RateDecision;
  readonly synchronous: true;
  /** Gives back the token a request took (it turned out not to count), up to the burst. */
  refund(bucket: string, limit: RateLimit): void;
  /** Buckets held right now. */
  readonly size: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date. */
  at: number;
  /** The limit of the last request, which the sweep refills by. */
  limit: RateLimit;
}

export function createLocalRateLimiter(options: LocalRateLimiterOptions = {}): LocalRateLimiter {
  const now = options.now ?? (() => performance.now());
  const maxBuckets = Math.max(1, options.maxBuckets ?? 100_000);
  // Insertion-ordered: the first bucket is the oldest.
  const buckets = new Map<string, Bucket>();

  /** Makes room for one bucket: drops the full ones (a new bucket starts full anyway), else the oldest. */
  const makeRoom = (t: number) => {
    for (const [name, { tokens, at, limit }] of buckets) {
      if (tokens + ((t - at) * limit.perSecond) / 1000 >= limit.burst) buckets.delete(name);
    }
    // Only busy buckets left: dropping the oldest can only forgive a request, never refuse one.
    if (buckets.size >= maxBuckets) buckets.delete(buckets.keys().next().value as string);
  };

  return {
    synchronous: true,
    take(name, limit) {
      const t = now();
      let bucket = buckets.get(name);
      if (bucket === undefined) {
        if (buckets.size >= maxBuckets) makeRoom(t);
        bucket = { tokens: limit.burst, at: t, limit };
        buckets.set(name, bucket);
      } else {
        if (t > bucket.at) {
          bucket.tokens += ((t - bucket.at) * limit.perSecond) / 1000;
          bucket.at = t;
        }
        // Also caps a bucket whose limit was lowered since its last request.
        if (bucket.tokens > limit.burst) bucket.tokens = limit.burst;
        bucket.limit = limit;
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true, remaining: Math.floor(bucket.tokens), retryAfterSeconds: 0 };
      }
      const waitMs = ((1 - bucket.tokens) * 1000) / limit.perSecond;
      return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    },
    refund(name, limit) {
      const bucket = buckets.get(name);
      if (bucket !== undefined) bucket.tokens = Math.min(limit.burst, bucket.tokens + 1);
    },
    async close() {
      buckets.clear();
    },
    get size() {
      return buckets.size;
    },
  };
}
