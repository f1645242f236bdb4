/**
 * The API's key-limit options (`serve`, `start`): the default rate limit, the Redis that shares
 * rate-limit state between replicas, and the proxies whose `X-Forwarded-For` is believed; and
 * where the operator views (`/metrics`, dashboard, docs) are served.
 * Flags win over environment variables. Errors name the flag or variable and never echo a URL.
 */
import { UserError } from '../internal/errors.js';
import { canonicalCidr, isWidePublicRange } from '../internal/ip-allow-list.js';
import { defaultBurst, parseBurst, parseRate, type RateLimit } from '../internal/rate-limit.js';
import type { ConfigFile } from './file.js';
import type { ApiLimitsConfig } from './types.js';

/** Raw values as the CLI parsed them. */
export interface ApiLimitOptions {
  rateLimit?: string;
  rateBurst?: string;
  redis?: string;
  trustProxy?: string;
  /** `--trust-proxy-any`: trust ranges that cover public address space too. */
  trustProxyAny?: boolean;
  operatorListen?: string;
  anonymousRateLimit?: string;
}

export const API_LIMIT_ENV = {
  rateLimit: 'TOKENQUERY_RATE_LIMIT',
  rateBurst: 'TOKENQUERY_RATE_BURST',
  redis: 'TOKENQUERY_REDIS',
  trustProxy: 'TOKENQUERY_TRUST_PROXY',
  trustProxyAny: 'TOKENQUERY_TRUST_PROXY_ANY',
  operatorListen: 'TOKENQUERY_OPERATOR_LISTEN',
  anonymousRateLimit: 'TOKENQUERY_ANONYMOUS_RATE_LIMIT',
} as const;

const FLAGS: Record<keyof typeof API_LIMIT_ENV, string> = {
  rateLimit: '--rate-limit',
  rateBurst: '--rate-burst',
  redis: '--redis',
  trustProxy: '--trust-proxy',
  trustProxyAny: '--trust-proxy-any',
  operatorListen: '--operator-listen',
  anonymousRateLimit: '--anonymous-rate-limit',
};

/** The options that take text (`trustProxyAny` is a switch). */
type TextOption = Exclude<keyof typeof API_LIMIT_ENV, 'trustProxyAny'>;

/** proxy-addr's names for reserved ranges, accepted by `--trust-proxy` beside addresses and CIDRs. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The flag, else the variable, else the config file's field of the same name (file.ts). */
function value(
  option: TextOption,
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

/**
 * `--trust-proxy-any` as the flag, else the variable (1/true/yes or 0/false/no), else the file sets
 * it; `force` is how the message for a wide range names it in the same place as the range.
 */
function trustProxyAny(
  raw: ApiLimitOptions,
  env: NodeJS.ProcessEnv,
  file?: ConfigFile,
): { on: boolean; from: string; force: string } | undefined {
  if (raw.trustProxyAny !== undefined) {
    return { on: raw.trustProxyAny, from: FLAGS.trustProxyAny, force: FLAGS.trustProxyAny };
  }
  const variable = API_LIMIT_ENV.trustProxyAny;
  const text = env[variable]?.trim().toLowerCase();
  if (text !== undefined && text !== '') {
    const on = ['1', 'true', 'yes'].includes(text);
    if (!on && !['0', 'false', 'no'].includes(text)) {
      throw new UserError(`${variable} must be 1 or 0 (true or false), got "${env[variable]!.slice(0, 40)}"`);
    }
    return { on, from: variable, force: `${variable}=1` };
  }
  if (file?.trustProxyAny === undefined) return undefined;
  return { on: file.trustProxyAny, from: `${file.label}: trustProxyAny`, force: 'trustProxyAny: true' };
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
  const any = trustProxyAny(raw, env, file);
  if (any?.on && proxy === undefined) {
    throw new UserError(`${any.from} needs a --trust-proxy to go with it`);
  }
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
        let cidr: string;
        try {
          cidr = canonicalCidr(entry);
        } catch (error) {
          throw new UserError(`${proxy.from}: ${(error as UserError).shortMessage}`);
        }
        // Whoever a trusted range holds can claim any client address, and so pass any allow-list.
        if (!any?.on && isWidePublicRange(cidr)) {
          const force = any?.force ?? forceFor(proxy.from, file);
          throw new UserError(
            `${proxy.from}: ${cidr} covers public addresses beyond a /8 (IPv6: /16): anyone there could forge X-Forwarded-For past key allow-lists; give your proxies' own ranges, or ${force} to trust it anyway`,
          );
        }
        return cidr;
      }),
    );
  }
  const operator = value('operatorListen', raw, env, file);
  if (operator !== undefined) config.operatorListen = parseOperatorListen(operator.text, operator.from);
  const anonymous = value('anonymousRateLimit', raw, env, file);
  if (anonymous !== undefined)
    config.anonymousRateLimit = parseAnonymousRateLimit(anonymous.text, anonymous.from);
  return Object.freeze(config);
}

/** How to force a wide range, named where the range was given. */
function forceFor(from: string, file?: ConfigFile): string {
  if (from === FLAGS.trustProxy) return FLAGS.trustProxyAny;
  if (from === API_LIMIT_ENV.trustProxy) return `${API_LIMIT_ENV.trustProxyAny}=1`;
  return file === undefined ? FLAGS.trustProxyAny : 'trustProxyAny: true';
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
