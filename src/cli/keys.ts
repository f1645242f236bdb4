import { generateApiKey, hashApiKey } from '../internal/api-keys.js';
import { UserError } from '../internal/errors.js';
import { canonicalCidr } from '../internal/ip-allow-list.js';
import type { Logger } from '../internal/logger.js';
import { defaultBurst, formatRateLimit, parseBurst, parseRate } from '../internal/rate-limit.js';
import { MissingStoreError } from '../store/missing-store.js';
import { describeStoreLocation, openStore } from '../store/open.js';
import type { ApiKeyLimits, ApiKeyRateLimit, ApiKeyRecord } from '../store/types.js';

/** Prints to stdout; logs go to stderr, so scripts can read the key from the last stdout line. */
const out = (line: string) => process.stdout.write(`${line}\n`);

/**
 * The store of the `keys` commands, created when missing (an operator may create keys before the
 * first `index`); a new one is named on stderr, so that a mistyped `--db` does not go unnoticed.
 */
function openKeysStore(db: string, logger: Logger) {
  return openStore({
    location: db,
    logger,
    onCreate: () => process.stderr.write(`tokenquery: created a new store at ${describeStoreLocation(db)}\n`),
  });
}

/** `keys set` and `keys revoke` change a key that must exist: a missing store is refused, not created. */
async function openExistingKeysStore(db: string, logger: Logger, verb: string) {
  try {
    return await openStore({ location: db, logger, mustExist: true });
  } catch (error) {
    if (!(error instanceof MissingStoreError)) throw error;
    throw new UserError(`no store at ${error.where}, so no API key to ${verb} there; check --db`);
  }
}

/** `--rate`, `--burst`, `--allow-ip` and (for `keys set`) `--any-ip`, as the CLI parsed them. */
export interface KeyLimitOptions {
  rate?: string;
  burst?: string;
  /** Repeatable; each value may hold several CIDRs separated by commas. */
  allowIp?: string[];
  anyIp?: boolean;
}

/** `--rate`: `default` (the server's), `unlimited`, or a rate with `--burst` (default one second's worth). */
function rateLimitOf(
  options: KeyLimitOptions,
  current: ApiKeyRateLimit | undefined,
): ApiKeyRateLimit | undefined {
  if (options.rate === undefined) {
    if (options.burst === undefined) return current;
    if (current === undefined || current === 'unlimited') {
      throw new UserError('--burst needs --rate: the key has no rate of its own');
    }
    return { perSecond: current.perSecond, burst: parseBurst(options.burst, '--burst') };
  }
  const text = options.rate.trim().toLowerCase();
  const perSecond = text === 'default' ? 'default' : parseRate(options.rate, '--rate');
  if (typeof perSecond !== 'number') {
    if (options.burst !== undefined) throw new UserError(`--burst cannot go with --rate ${text}`);
    return perSecond === 'default' ? undefined : 'unlimited';
  }
  return {
    perSecond,
    burst: options.burst === undefined ? defaultBurst(perSecond) : parseBurst(options.burst, '--burst'),
  };
}

/** `--allow-ip` (replaces the list) or `--any-ip` (clears it); neither keeps `current`. */
function allowIpsOf(options: KeyLimitOptions, current: string[] | undefined): string[] | undefined {
  if (options.anyIp && options.allowIp !== undefined) {
    throw new UserError('--any-ip and --allow-ip contradict each other');
  }
  if (options.anyIp) return undefined;
  if (options.allowIp === undefined) return current;
  const cidrs = options.allowIp.flatMap((value) => value.split(',')).filter((v) => v.trim() !== '');
  if (cidrs.length === 0) throw new UserError('--allow-ip needs an address or CIDR');
  const canonical = cidrs.map((cidr) => {
    try {
      return canonicalCidr(cidr);
    } catch (error) {
      throw new UserError(`--allow-ip: ${(error as UserError).shortMessage}`);
    }
  });
  return [...new Set(canonical)];
}

/** Limits as `keys list` and `keys set` show them. */
function describeLimits(limits: ApiKeyLimits): { rate: string; allow: string } {
  return {
    rate: limits.rateLimit === undefined ? 'default' : formatRateLimit(limits.rateLimit),
    allow: limits.allowIps === undefined ? 'any' : limits.allowIps.join(','),
  };
}

export async function keysCreate(
  db: string,
  label: string,
  limitOptions: KeyLimitOptions,
  logger: Logger,
): Promise<void> {
  // `keys list` prints one tab-separated row per key: a tab or a line break would break the table.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(label))
    throw new UserError('--label must be one line of text without tabs');
  const rateLimit = rateLimitOf(limitOptions, undefined);
  const allowIps = allowIpsOf(limitOptions, undefined);
  const store = await openKeysStore(db, logger);
  try {
    const { key, id, hash } = generateApiKey();
    const record: ApiKeyRecord = { id, hash, label, createdAt: Date.now(), revokedAt: null };
    if (rateLimit !== undefined) record.rateLimit = rateLimit;
    if (allowIps !== undefined) record.allowIps = allowIps;
    await store.keys.createApiKey(record);
    const limits =
      rateLimit === undefined && allowIps === undefined
        ? ''
        : ` [rate ${describeLimits(record).rate}, from ${describeLimits(record).allow}]`;
    out(
      `Created API key ${id}${label ? ` (${label})` : ''}${limits} in ${describeStoreLocation(db)}. It is shown only this once; store it now:`,
    );
    out(key);
  } finally {
    await store.close();
  }
}

export async function keysList(db: string, logger: Logger): Promise<void> {
  const store = await openKeysStore(db, logger);
  try {
    const keys = await store.keys.listApiKeys();
    if (keys.length === 0) {
      out('no API keys; create one with `tokenquery keys create --label <text>`');
      return;
    }
    // The label last: it is free text.
    out(['ID', 'STATUS', 'CREATED', 'RATE', 'ALLOW-IP', 'LABEL'].join('\t'));
    for (const k of keys) {
      const status = k.revokedAt === null ? 'active' : `revoked ${new Date(k.revokedAt).toISOString()}`;
      const { rate, allow } = describeLimits(k);
      out([k.id, status, new Date(k.createdAt).toISOString(), rate, allow, k.label].join('\t'));
    }
  } finally {
    await store.close();
  }
}

/** The active key with this id, or whose value this is (matched by its hash). */
function findActiveKey(keys: ApiKeyRecord[], keyOrId: string): ApiKeyRecord {
  const hash = hashApiKey(keyOrId);
  const found = keys.find((k) => k.revokedAt === null && (k.id === keyOrId || k.hash === hash));
  if (found === undefined) throw new UserError('no active API key has that id or value');
  return found;
}

/** `keys set`: changes the rate limit and/or allow-list of an active key; unnamed settings stay. */
export async function keysSet(
  db: string,
  keyOrId: string,
  options: KeyLimitOptions,
  logger: Logger,
): Promise<void> {
  if (
    options.rate === undefined &&
    options.burst === undefined &&
    options.allowIp === undefined &&
    !options.anyIp
  ) {
    throw new UserError('nothing to change: give --rate, --burst, --allow-ip or --any-ip');
  }
  const store = await openExistingKeysStore(db, logger, 'change');
  try {
    const current = findActiveKey(await store.keys.listApiKeys(), keyOrId);
    const limits: ApiKeyLimits = {};
    const rateLimit = rateLimitOf(options, current.rateLimit);
    const allowIps = allowIpsOf(options, current.allowIps);
    if (rateLimit !== undefined) limits.rateLimit = rateLimit;
    if (allowIps !== undefined) limits.allowIps = allowIps;
    if (!(await store.keys.setApiKeyLimits(current.id, limits))) {
      throw new UserError('no active API key has that id or value');
    }
    const { rate, allow } = describeLimits(limits);
    out(`updated key ${current.id}: rate ${rate}, from ${allow}; running servers apply it within one second`);
  } finally {
    await store.close();
  }
}

export async function keysRevoke(db: string, keyOrId: string, logger: Logger): Promise<void> {
  const store = await openExistingKeysStore(db, logger, 'revoke');
  try {
    // Accept the id shown by `keys list`, or the key itself (matched by its hash).
    const revoked =
      (await store.keys.revokeApiKey(keyOrId, Date.now())) ||
      (await store.keys.revokeApiKey(hashApiKey(keyOrId), Date.now()));
    if (!revoked) throw new UserError('no active API key has that id or value');
    out('revoked; running servers refuse it within one second');
  } finally {
    await store.close();
  }
}
