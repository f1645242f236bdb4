/**
 * How both backends keep a key's rate limit and allow-list, in three nullable columns:
 * - `rate_per_second`, `rate_burst`: NULL for the server default; an infinite rate (IEEE
 *   infinity, which SQLite REAL and PostgreSQL `double precision` both hold) for `unlimited`;
 * - `allow_ips`: canonical CIDRs joined by commas, NULL for any address.
 * Values are checked on the way in, so a stored row always decodes.
 */
import { TokenqueryError } from '../internal/errors.js';
import { canonicalCidr } from '../internal/ip-allow-list.js';
import { isValidRateLimit } from '../internal/rate-limit.js';
import type { ApiKeyLimits, ApiKeyRecord } from './types.js';

/** A row of the `api_keys` table, as both backends select it. */
export interface ApiKeyRow extends ApiKeyLimitColumns {
  id: string;
  hash: string;
  label: string;
  created_at: number;
  revoked_at: number | null;
}

/** The limit columns of an `api_keys` row. */
export interface ApiKeyLimitColumns {
  rate_per_second: number | null;
  rate_burst: number | null;
  allow_ips: string | null;
}

/** `[rate_per_second, rate_burst, allow_ips]` for `limits`; throws on a value no parser produces. */
export function encodeApiKeyLimits(limits: ApiKeyLimits): [number | null, number | null, string | null] {
  const { rateLimit, allowIps } = limits;
  if (rateLimit !== undefined && rateLimit !== 'unlimited' && !isValidRateLimit(rateLimit)) {
    throw new TokenqueryError('invalid API key rate limit', { details: JSON.stringify(rateLimit) });
  }
  for (const cidr of allowIps ?? []) {
    let canonical: string | undefined;
    try {
      canonical = canonicalCidr(cidr);
    } catch {}
    if (canonical !== cidr) {
      throw new TokenqueryError(`API key allow-list entry "${cidr}" is not a canonical CIDR`);
    }
  }
  return [
    rateLimit === undefined
      ? null
      : rateLimit === 'unlimited'
        ? Number.POSITIVE_INFINITY
        : rateLimit.perSecond,
    rateLimit === undefined || rateLimit === 'unlimited' ? null : rateLimit.burst,
    allowIps === undefined || allowIps.length === 0 ? null : allowIps.join(','),
  ];
}

/** The parameters of an `api_keys` insert: id, hash, label, created_at, revoked_at, then the limit columns. */
export function encodeApiKey(
  key: ApiKeyRecord,
): [string, string, string, number, number | null, number | null, number | null, string | null] {
  return [key.id, key.hash, key.label, key.createdAt, key.revokedAt, ...encodeApiKeyLimits(key)];
}

/** Adds the limits of `row` to `record` (fields stay absent where the columns are NULL). */
export function withApiKeyLimits(record: ApiKeyRecord, row: ApiKeyLimitColumns): ApiKeyRecord {
  const perSecond = row.rate_per_second;
  if (perSecond === Number.POSITIVE_INFINITY) record.rateLimit = 'unlimited';
  else if (perSecond !== null && row.rate_burst !== null) {
    record.rateLimit = { perSecond, burst: row.rate_burst };
  }
  if (row.allow_ips !== null && row.allow_ips !== '') record.allowIps = row.allow_ips.split(',');
  return record;
}

export function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return withApiKeyLimits(
    {
      id: row.id,
      hash: row.hash,
      label: row.label,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
    },
    row,
  );
}

/** The error `createApiKey` throws when the backend refuses the key's id or hash as a duplicate. */
export function duplicateApiKeyError(cause: unknown): TokenqueryError {
  return new TokenqueryError('an API key with this id or hash already exists', { cause });
}
