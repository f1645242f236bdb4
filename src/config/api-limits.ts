/**
 * The API's key-limit options (`serve`, `start`): the default rate limit, the Redis that shares
 * rate-limit state between replicas, and the proxies whose `X-Forwarded-For` is believed; and
 * where the operator views (`/metrics`, dashboard, docs) are served.
 * Flags win over environment variables. Errors name the flag or variable and never echo a URL.
 */
import { UserError } from '../internal/errors.js';
import { canonicalCidr } from '../internal/ip-allow-list.js';
import { defaultBurst, parseBurst, parseRate } from '../internal/rate-limit.js';
import type { ConfigFile } from './file.js';
import type { ApiLimitsConfig } from './types.js';

/** Raw values as the CLI parsed them. */
export interface ApiLimitOptions {
  rateLimit?: string;
  rateBurst?: string;
  redis?: string;
  trustProxy?: string;
  operatorListen?: string;
}

export const API_LIMIT_ENV = {
  rateLimit: 'TOKENQUERY_RATE_LIMIT',
  rateBurst: 'TOKENQUERY_RATE_BURST',
  redis: 'TOKENQUERY_REDIS',
  trustProxy: 'TOKENQUERY_TRUST_PROXY',
  operatorListen: 'TOKENQUERY_OPERATOR_LISTEN',
} as const;

const FLAGS: Record<keyof typeof API_LIMIT_ENV, string> = {
  rateLimit: '--rate-limit',
  rateBurst: '--rate-burst',
  redis: '--redis',
  trustProxy: '--trust-proxy',
  operatorListen: '--operator-listen',
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
  const operator = value('operatorListen', raw, env, file);
  if (operator !== undefined) config.operatorListen = parseOperatorListen(operator.text, operator.from);
  return Object.freeze(config);
}

/** `same`, `off`, or `host:port` (`[::1]:9090` for an IPv6 address). */
export function parseOperatorListen(
  text: string,
  from: string,
): 'same' | 'off' | { host: string; port: number } {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === 'same' || trimmed === 'off') return trimmed;
  const match = /^(?:\[([0-9a-f:.]+)\]|([^\s:[\]]+)):([0-9]{1,5})$/i.exec(text.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    throw new UserError(`${from} must be same, off or host:port (e.g. 127.0.0.1:9090), not "${text}"`);
  }
  return Object.freeze({ host: match[1] ?? match[2]!, port });
}
