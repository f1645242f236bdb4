import { generateApiKey, hashApiKey } from '../internal/api-keys.js';
import { UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import { openStore } from '../store/open.js';

/** Prints to stdout; logs go to stderr, so scripts can read the key from the last stdout line. */
const out = (line: string) => process.stdout.write(`${line}\n`);

export async function keysCreate(db: string, label: string, logger: Logger): Promise<void> {
  // `keys list` prints one tab-separated row per key: a tab or a line break would break the table.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(label))
    throw new UserError('--label must be one line of text without tabs');
  const store = await openStore({ location: db, logger });
  try {
    const { key, id, hash } = generateApiKey();
    await store.createApiKey({ id, hash, label, createdAt: Date.now(), revokedAt: null });
    out(`Created API key ${id}${label ? ` (${label})` : ''}. It is shown only this once; store it now:`);
    out(key);
  } finally {
    await store.close();
  }
}

export async function keysList(db: string, logger: Logger): Promise<void> {
  const store = await openStore({ location: db, logger });
  try {
    const keys = await store.listApiKeys();
    if (keys.length === 0) {
      out('no API keys; create one with `tokenquery keys create --label <text>`');
      return;
    }
    out(['ID', 'STATUS', 'CREATED', 'LABEL'].join('\t'));
    for (const k of keys) {
      const status = k.revokedAt === null ? 'active' : `revoked ${new Date(k.revokedAt).toISOString()}`;
      out([k.id, status, new Date(k.createdAt).toISOString(), k.label].join('\t'));
    }
  } finally {
    await store.close();
  }
}

export async function keysRevoke(db: string, keyOrId: string, logger: Logger): Promise<void> {
  const store = await openStore({ location: db, logger });
  try {
    // Accept the id shown by `keys list`, or the key itself (matched by its hash).
    const revoked =
      (await store.revokeApiKey(keyOrId, Date.now())) ||
      (await store.revokeApiKey(hashApiKey(keyOrId), Date.now()));
    if (!revoked) throw new UserError('no active API key has that id or value');
    out('revoked; running servers refuse it within one second');
  } finally {
    await store.close();
  }
}
