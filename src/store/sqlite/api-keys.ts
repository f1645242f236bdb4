/**
 * The SQLite store's `keys` part: API keys as the `keys` commands write them and the API looks
 * them up. Only the key's hash is stored.
 */
import Database from 'better-sqlite3';
import { duplicateApiKeyError, encodeApiKey, encodeApiKeyLimits, toApiKey } from '../api-key-limits.js';
import type { ApiKeyStore } from '../types.js';
import type { Statements } from './statements.js';

/** The `keys` part over one connection. */
export function createApiKeys(sql: Statements): ApiKeyStore {
  return {
    async createApiKey(key) {
      try {
        sql.insertKey.run(...encodeApiKey(key));
      } catch (error) {
        if (error instanceof Database.SqliteError && error.code.startsWith('SQLITE_CONSTRAINT')) {
          throw duplicateApiKeyError(error);
        }
        throw error;
      }
    },

    async listApiKeys() {
      return sql.listKeys.all().map(toApiKey);
    },

    async revokeApiKey(idOrHash, at) {
      return sql.revokeKey.run({ key: idOrHash, at }).changes > 0;
    },

    async findApiKeyByHash(hash) {
      const row = sql.findKey.get(hash);
      return row === undefined ? null : toApiKey(row);
    },

    async setApiKeyLimits(idOrHash, limits) {
      return sql.setKeyLimits.run(...encodeApiKeyLimits(limits), idOrHash, idOrHash).changes > 0;
    },
  };
}
