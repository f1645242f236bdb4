/**
 * API keys as the store keeps them: the records `tokenquery keys` writes and the API looks up,
 * and the store's part that holds them (`Store.keys`). Re-exported by `types.ts`.
 */
import type { RateLimit } from '../internal/rate-limit.js';

export interface ApiKeyRecord {
  /** Short public identifier, printed by `keys list`, accepted by `keys revoke`. */
  id: string;
  /** SHA-256 hex of the key; the key itself is never stored. */
  hash: string;
  label: string;
  /** Unix milliseconds. */
  createdAt: number;
  /** Unix milliseconds, or null while active. */
  revokedAt: number | null;
  /** The key's own rate limit; absent: the server's default (`--rate-limit`) applies. */
  rateLimit?: ApiKeyRateLimit;
  /**
   * Networks the key may be used from, as canonical CIDRs (`internal/ip-allow-list.ts`);
   * absent: any address. Backends never give back an empty list.
   */
  allowIps?: string[];
}

/** A key's own rate limit: a token bucket, or none at all even when the server has a default. */
export type ApiKeyRateLimit = RateLimit | 'unlimited';

/** What `setApiKeyLimits` sets; an absent field is cleared (the server default, any address). */
export type ApiKeyLimits = Pick<ApiKeyRecord, 'rateLimit' | 'allowIps'>;

/** API keys: `keys` commands write them, the API looks them up. */
export interface ApiKeyStore {
  createApiKey(key: ApiKeyRecord): Promise<void>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Revokes by id or by hash; returns false when no active key matched. */
  revokeApiKey(idOrHash: string, at: number): Promise<boolean>;
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Replaces the rate limit and allow-list of an active key, by id or by hash; false when none matched. */
  setApiKeyLimits(idOrHash: string, limits: ApiKeyLimits): Promise<boolean>;
}
