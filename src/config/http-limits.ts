/**
 * The API's slow-client limits (`serve`, `start`; docs/reliability.md): request, headers and idle
 * timeouts in milliseconds and the connection cap. Flags win over environment variables, which
 * win over the config file; absent ones take the defaults of internal/http-limits.ts.
 */
import { UserError } from '../internal/errors.js';
import { HTTP_LIMIT_DEFAULTS, HTTP_LIMIT_RANGES, type HttpLimits } from '../internal/http-limits.js';
import type { ConfigFile } from './file.js';

/** Raw values as the CLI parsed them. */
export interface HttpLimitOptions {
  requestTimeout?: string;
  headersTimeout?: string;
  idleTimeout?: string;
  maxConnections?: string;
}

export const HTTP_LIMIT_ENV = {
  requestTimeout: 'TOKENQUERY_REQUEST_TIMEOUT_MS',
  headersTimeout: 'TOKENQUERY_HEADERS_TIMEOUT_MS',
  idleTimeout: 'TOKENQUERY_IDLE_TIMEOUT_MS',
  maxConnections: 'TOKENQUERY_MAX_CONNECTIONS',
} as const;

/** Each option's flag and its key in the config file (and in `HttpLimits`). */
const OPTIONS: Record<keyof HttpLimitOptions, { flag: string; key: keyof HttpLimits }> = {
  requestTimeout: { flag: '--request-timeout', key: 'requestTimeoutMs' },
  headersTimeout: { flag: '--headers-timeout', key: 'headersTimeoutMs' },
  idleTimeout: { flag: '--idle-timeout', key: 'idleTimeoutMs' },
  maxConnections: { flag: '--max-connections', key: 'maxConnections' },
};

export function loadHttpLimits(
  raw: HttpLimitOptions,
  env: NodeJS.ProcessEnv = process.env,
  file?: ConfigFile,
): Readonly<HttpLimits> {
  const limits: HttpLimits = { ...HTTP_LIMIT_DEFAULTS };
  const from: Partial<Record<keyof HttpLimits, string>> = {};
  for (const [option, { flag, key }] of Object.entries(OPTIONS) as [
    keyof HttpLimitOptions,
    (typeof OPTIONS)[keyof HttpLimitOptions],
  ][]) {
    const envText = env[HTTP_LIMIT_ENV[option]];
    const inFile = file?.[key];
    const source =
      raw[option] !== undefined
        ? { text: raw[option], from: flag }
        : envText !== undefined && envText !== ''
          ? { text: envText, from: HTTP_LIMIT_ENV[option] }
          : inFile === undefined
            ? undefined
            : { text: String(inFile), from: `${file!.label}: ${key}` };
    if (source === undefined) continue;
    const { minimum, maximum } = HTTP_LIMIT_RANGES[key];
    const text = source.text.trim();
    if (!/^[0-9]+$/.test(text)) throw new UserError(`${source.from} must be a whole number, got "${text}"`);
    const n = Number(text);
    if (n < minimum || n > maximum) {
      throw new UserError(`${source.from} must be between ${minimum} and ${maximum}, got ${text}`);
    }
    limits[key] = n;
    from[key] = source.from;
  }
  // Node checks the headers within the request's time: a longer headers timeout would never apply.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new UserError(
      `${from.headersTimeoutMs ?? 'the default headers timeout'} (${limits.headersTimeoutMs} ms) must not exceed ` +
        `${from.requestTimeoutMs ?? 'the default request timeout'} (${limits.requestTimeoutMs} ms)`,
    );
  }
  return Object.freeze(limits);
}
