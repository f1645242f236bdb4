/** The PostgreSQL store's API keys part: `keys` commands write the `api_keys` table, the API looks keys up. */
import pg from 'pg';
import {
  type ApiKeyRow,
  duplicateApiKeyError,
  encodeApiKey,
  encodeApiKeyLimits,
  toApiKey,
} from '../api-key-limits.js';
import type { ApiKeyLimits, ApiKeyRecord, ApiKeyStore } from '../types.js';
import { run } from './statements.js';

export function createApiKeys(pool: pg.Pool): ApiKeyStore {
  return {
    async createApiKey(key: ApiKeyRecord): Promise<void> {
      try {
        await run(pool, 'insertKey', encodeApiKey(key));
      } catch (error) {
        if (error instanceof pg.DatabaseError && error.code === '23505') {
          throw duplicateApiKeyError(error);
        }
        throw error;
      }
    },

    async listApiKeys(): Promise<ApiKeyRecord[]> {
      return (await run<ApiKeyRow>(pool, 'listKeys', [])).rows.map(toApiKey);
    },

    async revokeApiKey(idOrHash: string, at: number): Promise<boolean> {
      return ((await run(pool, 'revokeKey', [idOrHash, at])).rowCount ?? 0) > 0;
    },

    async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
      const row = (await run<ApiKeyRow>(pool, 'findKey', [hash])).rows[0];
      return row === undefined ? null : toApiKey(row);
    },

    async setApiKeyLimits(idOrHash: string, limits: ApiKeyLimits): Promise<boolean> {
      const result = await run(pool, 'setKeyLimits', [idOrHash, ...encodeApiKeyLimits(limits)]);
      return (result.rowCount ?? 0) > 0;
    },
  };
}
