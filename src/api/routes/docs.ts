/**
 * `/docs`: Swagger UI over `/openapi.json`, with try-it calls that carry the API key typed into
 * its Authorize dialog. Every file comes from npm: Swagger UI's browser bundle as
 * @fastify/swagger-ui ships it (that plugin itself is not loaded: its static-file server needs a
 * newer Node than this project supports). Nothing is fetched from elsewhere, and the page's
 * Content-Security-Policy forbids it, so the page works offline and a stray external reference
 * shows up as a console error in the browser test.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OPENAPI_PATH } from '../openapi.js';

/** Where the page is served. */
export const DOCS_PATH = '/docs';

const gzipAsync = promisify(gzip);

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI (React) sets inline style attributes.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Relative links: the page is `/docs`, so they resolve under the same base behind a path prefix too. */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tokenquery API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png" sizes="32x32">
<style>body{margin:0}.swagger-ui .info{margin:32px 0 16px}</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;

/**
 * The page's one script of its own (inline scripts are refused by the CSP). The key typed into
 * Authorize is kept by Swagger UI in memory only (not persisted), and sent as the `apikey` query
 * parameter, as the document's security scheme says.
 */
const INIT = `'use strict';
window.ui = SwaggerUIBundle({
  url: new URL(${JSON.stringify(OPENAPI_PATH.slice(1))}, document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: -1,
  displayRequestDuration: true,
  tryItOutEnabled: false,
  supportedSubmitMethods: ['get', 'head'],
});
`;

/**
 * Swagger UI's own files that the page loads, by the name served under /docs/. A Map, not an
 * object literal: the name comes from the URL, and `constructor` or `__proto__` must not be found.
 */
const VENDOR_FILES = new Map<string, string>([
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
  /** Made on the first request that accepts gzip (the bundle shrinks about four times). */
  gzipped?: Promise<Buffer>;
}

function vendorDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@fastify/swagger-ui/package.json')), 'static');
}

function makeAsset(type: string, body: Buffer): Asset {
  return { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export function docsRoutes(app: FastifyInstance): void {
  // Files are read on first use, so a server nobody reads the docs of never touches them.
  const assets = new Map<string, Promise<Asset>>();
  const own = new Map<string, Asset>([
    ['init.js', makeAsset('application/javascript; charset=utf-8', Buffer.from(INIT))],
  ]);
  const page = makeAsset('text/html; charset=utf-8', Buffer.from(PAGE));

  function load(name: string): Promise<Asset> | undefined {
    const ownAsset = own.get(name);
    if (ownAsset !== undefined) return Promise.resolve(ownAsset);
    const type = VENDOR_FILES.get(name);
    if (type === undefined) return undefined;
    let asset = assets.get(name);
    if (asset === undefined) {
      asset = readFile(join(vendorDir(), name)).then((body) => makeAsset(type, body));
      // A failed read is not remembered: the next request tries again.
      asset.catch(() => assets.delete(name));
      assets.set(name, asset);
    }
    return asset;
  }

  app.get(DOCS_PATH, async (request, reply) => {
    reply.header('content-security-policy', CSP);
    return sendAsset(request, reply, page);
  });
  app.get(`${DOCS_PATH}/`, async (_request, reply) => reply.redirect(`../${DOCS_PATH.slice(1)}`, 301));
  app.get(`${DOCS_PATH}/:file`, async (request, reply) => {
    const asset = load((request.params as { file: string }).file);
    if (asset === undefined) return reply.callNotFound();
    return sendAsset(request, reply, await asset);
  });
}

async function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset): Promise<FastifyReply> {
  const gzipped =
    asset.body.length > 1024 && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  // Each encoding is its own representation, so each has its own tag.
  const etag = gzipped ? `${asset.etag.slice(0, -1)}-gz"` : asset.etag;
  reply
    .header('etag', etag)
    .header('cache-control', 'no-cache')
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff')
    .type(asset.type);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  if (!gzipped) return reply.code(200).send(asset.body);
  asset.gzipped ??= gzipAsync(asset.body);
  return reply
    .code(200)
    .header('content-encoding', 'gzip')
    .send(await asset.gzipped);
}
