/**
 * The rate limiter that API replicas share: each key's token bucket is one Redis hash, updated
 * by one Lua script (sent as EVALSHA) so that reading, refilling and taking a token is atomic
 * across every replica. The script reads the time from Redis itself, so replicas whose clocks
 * disagree still share one timeline.
 *
 * When Redis cannot answer (down, unreachable, slower than `timeoutMs`), a request is decided by
 * an in-process bucket instead: limits then hold per replica (N replicas allow up to N times the
 * limit) until Redis is back. Neither failing open (no limit at all) nor failing closed (every
 * keyed request refused, so Redis would be a hard dependency of the whole API) is better: this
 * keeps abusive keys bounded and honest keys served. It is logged at most once per
 * `warnIntervalMs`, with how many requests were decided locally meanwhile.
 *
 * `ioredis` is imported only here, and this module only when `--redis` is given.
 */
import { createHash } from 'node:crypto';
import { errorMessage, redactUrls } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { RateLimit } from '../internal/rate-limit.js';
import {
  createLocalRateLimiter,
  type LocalRateLimiter,
  type RateDecision,
  type RateLimiter,
} from './rate-limiter.js';

/**
 * KEYS[1]: the bucket. ARGV[1]: tokens per second. ARGV[2]: burst.
 * Returns { allowed (0|1), whole tokens left, microseconds until the next token when refused }.
 * The hash expires once the bucket would be full again, so idle keys cost Redis nothing.
 * Numbers are handed to redis.call as numbers: Redis writes them with full precision.
 */
export const TOKEN_BUCKET_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
elseif now > at then
  tokens = tokens + (now - at) * rate / 1000000
  at = now
end
if tokens > burst then tokens = burst end
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', at)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return { allowed, math.floor(tokens), wait }
`;

const SCRIPT_SHA = createHash('sha1').update(TOKEN_BUCKET_SCRIPT).digest('hex');

export interface RedisRateLimiterOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). May hold a password: never logged. */
  url: string;
  logger: Logger;
  /** Prepended to every bucket's Redis key. Default `tokenquery:ratelimit:`. */
  prefix?: string;
  /** Longest wait for Redis on a request before it is decided locally. Default 250 ms. */
  timeoutMs?: number;
  /** Longest wait for the first connection at start-up. Default 2000 ms. */
  connectTimeoutMs?: number;
  /** Least time between two "Redis unreachable" warnings. Default 30 000 ms. */
  warnIntervalMs?: number;
  /** Decides while Redis cannot. Default: a fresh in-process limiter. */
  fallback?: LocalRateLimiter;
}

export interface RedisRateLimiter extends RateLimiter {
  take(bucket: string, limit: RateLimit): Promise<RateDecision>;
  /** Requests decided by the in-process fallback so far. */
  readonly fallbacks: number;
}

/** Minimal view of the ioredis client this module uses. */
interface RedisClient {
  evalsha(sha: string, numKeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  on(event: 'error' | 'ready', listener: (error?: Error) => void): unknown;
  once(event: 'ready', listener: () => void): unknown;
  removeListener(event: 'ready', listener: () => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
  readonly status: string;
}

/**
 * Connects to Redis and returns the limiter. Does not fail when Redis is unreachable at
 * start-up: it warns, decides locally, and keeps reconnecting in the background.
 */
export async function createRedisRateLimiter(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
  const prefix = options.prefix ?? 'tokenquery:ratelimit:';
  const timeoutMs = options.timeoutMs ?? 250;
  const warnIntervalMs = options.warnIntervalMs ?? 30_000;
  const fallback = options.fallback ?? createLocalRateLimiter();
  const log = options.logger.child({ component: 'rate-limit' });
  const where = redactUrls(options.url);

  const { Redis } = await import('ioredis');
  const client = new Redis(options.url, {
    // A command must fail fast when the connection is down, never wait in a queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    // Reconnect for ever, at most every 2 s.
    retryStrategy: (times: number) => Math.min(times * 100, 2000),
    lazyConnect: false,
  }) as unknown as RedisClient;

  let fallbacks = 0;
  let downSince: number | null = null;
  let lastWarn = Number.NEGATIVE_INFINITY;
  let localSinceWarn = 0;

  /** Logs that Redis failed, at most once per interval. */
  const failed = (error: unknown) => {
    const t = Date.now();
    if (downSince === null) downSince = t;
    if (t - lastWarn < warnIntervalMs) return;
    log.warn(
      { redis: where, err: redactUrls(errorMessage(error)), decidedLocally: localSinceWarn },
      'Redis rate-limit store unreachable: limits are kept per process until it is back',
    );
    lastWarn = t;
    localSinceWarn = 0;
  };
  client.on('error', (error) => failed(error));
  client.on('ready', () => {
    if (downSince === null) return;
    log.info(
      { redis: where, downMs: Date.now() - downSince },
      'Redis rate-limit store reachable again: limits are shared',
    );
    downSince = null;
    lastWarn = Number.NEGATIVE_INFINITY;
  });

  await new Promise<void>((resolve) => {
    if (client.status === 'ready') return resolve();
    const timer = setTimeout(() => {
      client.removeListener('ready', onReady);
      failed(new Error(`no connection within ${options.connectTimeoutMs ?? 2000} ms`));
      resolve();
    }, options.connectTimeoutMs ?? 2000);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
  if (client.status === 'ready') log.info({ redis: where }, 'rate-limit buckets are shared through Redis');

  async function run(key: string, limit: RateLimit): Promise<unknown> {
    const args = [key, String(limit.perSecond), String(limit.burst)];
    try {
      return await client.evalsha(SCRIPT_SHA, 1, ...args);
    } catch (error) {
      // Redis forgets scripts on restart or SCRIPT FLUSH; EVAL loads it again.
      if (!errorMessage(error).startsWith('NOSCRIPT')) throw error;
      return client.eval(TOKEN_BUCKET_SCRIPT, 1, ...args);
    }
  }

  return {
    async take(bucket, limit) {
      try {
        const reply = await run(prefix + bucket, limit);
        if (!Array.isArray(reply) || reply.length !== 3 || !reply.every((n) => typeof n === 'number')) {
          throw new Error('unexpected reply from the rate-limit script');
        }
        const [allowed, remaining, waitUs] = reply as [number, number, number];
        if (downSince !== null && client.status === 'ready') downSince = null;
        return {
          allowed: allowed === 1,
          remaining: Math.max(0, remaining),
          retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(waitUs / 1_000_000)),
        };
      } catch (error) {
        fallbacks++;
        localSinceWarn++;
        failed(error);
        return fallback.take(bucket, limit);
      }
    },
    async close() {
      await fallback.close();
      // QUIT waits for Redis's answer, which a hung Redis never sends: wait a moment, then cut.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        client.quit().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      client.disconnect();
    },
    get fallbacks() {
      return fallbacks;
    },
  };
}
