/**
 * The API's key-limit options (`serve`, `start`): the default rate limit, the Redis that shares
 * rate-limit state between replicas, the proxies whose `X-Forwarded-For` is believed, and the
 * per-address limit of requests without a valid key.
 * Flags win over environment variables. Errors name the flag or variable and never echo a URL.
 */
import { UserError } from '../internal/errors.js';
import { canonicalCidr } from '../internal/ip-allow-list.js';
import { defaultBurst, parseBurst, parseRate, type RateLimit } from '../internal/rate-limit.js';
import type { ConfigFile } from './file.js';
import type { ApiLimitsConfig } from './types.js';

/** Raw values as the CLI parsed them. */
export interface ApiLimitOptions {
  rateLimit?: string;
  rateBurst?: string;
  redis?: string;
  trustProxy?: string;
  anonymousRateLimit?: string;
}

export const API_LIMIT_ENV = {
  rateLimit: 'TOKENQUERY_RATE_LIMIT',
  rateBurst: 'TOKENQUERY_RATE_BURST',
  redis: 'TOKENQUERY_REDIS',
  trustProxy: 'TOKENQUERY_TRUST_PROXY',
  anonymousRateLimit: 'TOKENQUERY_ANONYMOUS_RATE_LIMIT',
} as const;

const FLAGS: Record<keyof typeof API_LIMIT_ENV, string> = {
  rateLimit: '--rate-limit',
  rateBurst: '--rate-burst',
  redis: '--redis',
  trustProxy: '--trust-proxy',
  anonymousRateLimit: '--anonymous-rate-limit',
};

/** proxy-addr's names for reserved ranges, accepted by `--trust-proxy` beside addresses and CIDRs. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The flag, else the variable, else the config file's field of the same name (file.ts). */
function value(
  option: keyof typeof API_LIMIT_ENV,
  raw: ApiLimitOptions,
  env: NodeJS.ProcessEnv,
  file?: ConfigFile,
): { text: string; from: string } | undefined {
  const flag = raw[option];
  if (flag !== undefined) return { text: flag, from: FLAGS[option] };
  const text = env[API_LIMIT_ENV[option]];
  if (text !== undefined && text !== '') return { text, from: API_LIMIT_ENV[option] };
  const inFile = file?.[option];
  return inFile === undefined ? undefined : { text: String(inFile), from: `${file!.label}: ${option}` };
}

export function loadApiLimits(
  raw: ApiLimitOptions,
  env: NodeJS.ProcessEnv = process.env,
  file?: ConfigFile,
): ApiLimitsConfig {
  const config: ApiLimitsConfig = {};

  const rate = value('rateLimit', raw, env, file);
  const burst = value('rateBurst', raw, env, file);
  const perSecond = rate === undefined ? 'unlimited' : parseRate(rate.text, rate.from);
  if (perSecond === 'unlimited') {
    if (burst !== undefined) throw new UserError(`${burst.from} needs a --rate-limit to go with it`);
  } else {
    config.defaultRateLimit = Object.freeze({
      perSecond,
      burst: burst === undefined ? defaultBurst(perSecond) : parseBurst(burst.text, burst.from),
    });
  }

  const redis = value('redis', raw, env, file);
  if (redis !== undefined) {
    if (!/^rediss?:\/\/[^\s]+$/i.test(redis.text)) {
      throw new UserError(`${redis.from} must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379`);
    }
    config.redis = redis.text;
  }

  const proxy = value('trustProxy', raw, env, file);
  if (proxy !== undefined) {
    const text = proxy.text.trim();
    // A hop count would believe whoever connects directly (fastify refuses it for that reason).
    if (/^[0-9]+$/.test(text)) {
      throw new UserError(
        `${proxy.from} takes the proxies' addresses or CIDRs (e.g. 10.0.0.0/8), not a hop count`,
      );
    }
    const entries = text.split(/[\s,]+/).filter(Boolean);
    if (entries.length === 0) throw new UserError(`${proxy.from} must not be empty`);
    config.trustProxy = Object.freeze(
      entries.map((entry) => {
        if (NAMED_RANGES.has(entry.toLowerCase())) return entry.toLowerCase();
        try {
          return canonicalCidr(entry);
        } catch (error) {
          throw new UserError(`${proxy.from}: ${(error as UserError).shortMessage}`);
        }
      }),
    );
  }

  const anonymous = value('anonymousRateLimit', raw, env, file);
  if (anonymous !== undefined)
    config.anonymousRateLimit = parseAnonymousRateLimit(anonymous.text, anonymous.from);
  return Object.freeze(config);
}

/** `--anonymous-rate-limit`: a rate (burst: one second's worth), or `off` (`unlimited` too). */
export function parseAnonymousRateLimit(text: string, from: string): RateLimit | null {
  if (text.trim().toLowerCase() === 'off') return null;
  let perSecond: number | 'unlimited';
  try {
    perSecond = parseRate(text, from);
  } catch (error) {
    if (error instanceof UserError)
      throw new UserError(error.shortMessage.replace(/ or unlimited,/, ' or off,'));
    throw error;
  }
  return perSecond === 'unlimited' ? null : Object.freeze({ perSecond, burst: defaultBurst(perSecond) });
}
