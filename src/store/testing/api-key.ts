/**
 * A fresh API key stored through the store's key role, for tests that call the API with a key.
 * Returns what `generateApiKey` made: `key` for the requests, `id` and `hash` to revoke or find it.
 */
import { type GeneratedApiKey, generateApiKey } from '../../internal/api-keys.js';
import type { Store } from '../types.js';

export async function createTestApiKey(
  store: Pick<Store, 'keys'>,
  label = 't',
  createdAt = 0,
): Promise<GeneratedApiKey> {
  const generated = generateApiKey();
  await store.keys.createApiKey({
    id: generated.id,
    hash: generated.hash,
    label,
    createdAt,
    revokedAt: null,
  });
  return generated;
}
