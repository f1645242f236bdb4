// An HTTP server in a process of its own (forked by api.ts), so that it shares its event loop with
// nothing else: either tokenquery's API over a filled SQLite store, or the bare
// `node:http` baseline answering constant bodies.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startApiServer } from '../src/api/server.js';
import { generateApiKey } from '../src/internal/api-keys.js';
import { silentLogger } from '../src/internal/logger.js';
import { openStore } from '../src/store/open.js';
import { childInput, childMain } from './common.js';

export type ApiServerChildInput =
  /**
   * `cache`: tokenquery's response cache on or off. `dbPath`: a SQLite file or a `postgres://` URL.
   * `fastPath: false`: cache hits are routed like every other request (src/api/fast-path.ts).
   */
  | { mode: 'tokenquery'; dbPath: string; cache: boolean; fastPath?: boolean }
  /** Path (without query) → the exact body to answer with. */
  | { mode: 'baseline'; bodies: Record<string, string> }
  /** The same map as a JSON file: for bodies larger than a command-line argument may be (128 KiB). */
  | { mode: 'baseline'; bodiesPath: string };

export interface ApiServerChildReady {
  url: string;
  /** tokenquery only: a key valid for this server. */
  apiKey?: string;
}

async function tokenquery(dbPath: string, cache: boolean, fastPath = true): Promise<ApiServerChildReady> {
  const logger = silentLogger();
  const store = await openStore({ location: dbPath, logger });
  const key = generateApiKey();
  await store.keys.createApiKey({
    id: key.id,
    hash: key.hash,
    label: 'bench',
    createdAt: Date.now(),
    revokedAt: null,
  });
  const server = await startApiServer({
    store,
    logger,
    chains: ['eth'],
    host: '127.0.0.1',
    port: 0,
    responseCache: cache,
    fastPath,
  });
  process.once('disconnect', () => {
    void server
      .close()
      .then(() => store.close())
      .finally(() => process.exit(0));
  });
  return { url: server.url, apiKey: key.key };
}

/**
 * What any Node HTTP server costs: parse the request, look the path up, write a constant body with
 * the same content type. Nothing to compute, nothing to read.
 */
async function baseline(bodies: Record<string, string>): Promise<ApiServerChildReady> {
  const byPath = new Map(Object.entries(bodies).map(([path, body]) => [path, Buffer.from(body)]));
  const notFound = Buffer.from(randomBytes(8).toString('hex'));
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const body = byPath.get(q === -1 ? url : url.slice(0, q));
    res.writeHead(body ? 200 : 404, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': (body ?? notFound).length,
    });
    res.end(body ?? notFound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.once('disconnect', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}` };
}

const input = childInput<ApiServerChildInput>();
await childMain(
  () =>
    input.mode === 'tokenquery'
      ? tokenquery(input.dbPath, input.cache, input.fastPath)
      : baseline(
          'bodiesPath' in input
            ? (JSON.parse(readFileSync(input.bodiesPath, 'utf8')) as Record<string, string>)
            : input.bodies,
        ),
  'ready',
);
