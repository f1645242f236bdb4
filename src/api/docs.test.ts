/**
 * `/docs` over HTTP: the page and everything it loads come from this server (no key needed),
 * under a Content-Security-Policy that allows nothing else; assets revalidate and compress.
 * The page itself is exercised in Chromium by docs.browser.test.ts.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { type ApiFixture, startApiFixture } from './testing/fixture.js';
import { assertError, call } from './testing/http.js';

let fx: ApiFixture;
before(async () => {
  fx = await startApiFixture();
});
after(async () => {
  await fx.close();
});

/** The URLs a page refers to in `src` and `href` attributes. */
const references = (html: string): string[] =>
  [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);

test('the page is served without a key, with a CSP that allows this origin only', async () => {
  const page = await call(fx.url, '/docs');
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /connect-src 'self'(;|$)/);
  assert.doesNotMatch(page.text, /<script>|<script [^>]*>[^<]/, 'no inline script');
});

test('everything the page loads is served here, with its type', async () => {
  const page = await call(fx.url, '/docs');
  const refs = references(page.text);
  assert.deepEqual(refs.sort(), [
    'docs/favicon-32x32.png',
    'docs/init.js',
    'docs/swagger-ui-bundle.js',
    'docs/swagger-ui.css',
  ]);
  const types: Record<string, string> = {
    js: 'application/javascript; charset=utf-8',
    css: 'text/css; charset=utf-8',
    png: 'image/png',
  };
  for (const ref of refs) {
    // Relative to the page at /docs.
    const answer = await call(fx.url, new URL(ref, `${fx.url}/docs`).pathname);
    assert.equal(answer.status, 200, ref);
    assert.equal(answer.headers.get('content-type'), types[ref.split('.').pop()!], ref);
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
  }
  const init = await call(fx.url, '/docs/init.js');
  assert.doesNotMatch(init.text, /https?:\/\//, 'the script names no other host');
  assert.match(init.text, /validatorUrl: null/, "Swagger UI's online validator stays off");
});

test('assets revalidate with an ETag and are gzipped when the client accepts it', async () => {
  const plain = await fetch(`${fx.url}/docs/swagger-ui-bundle.js`, {
    headers: { 'accept-encoding': 'identity' },
  });
  const body = Buffer.from(await plain.arrayBuffer());
  const etag = plain.headers.get('etag');
  assert.ok(etag);
  assert.equal(plain.headers.get('cache-control'), 'no-cache');
  assert.ok(body.length > 500_000, 'the whole bundle');

  const again = await fetch(`${fx.url}/docs/swagger-ui-bundle.js`, {
    headers: { 'accept-encoding': 'identity', 'if-none-match': etag },
  });
  assert.equal(again.status, 304);

  // node:http, not fetch, so that the compressed bytes are seen as sent.
  const { request } = await import('node:http');
  const zipped = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    request(`${fx.url}/docs/swagger-ui-bundle.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.notEqual(zipped.headers.etag, etag, 'each encoding has its own tag');
  assert.ok(zipped.body.length < body.length / 2);
  assert.deepEqual(gunzipSync(zipped.body), body);
});

test('/docs/ redirects to /docs; unknown files are 404 envelopes', async () => {
  const slash = await fetch(`${fx.url}/docs/`, { redirect: 'manual' });
  assert.equal(slash.status, 301);
  assert.equal(new URL(slash.headers.get('location') ?? '', `${fx.url}/docs/`).pathname, '/docs');
  for (const path of ['/docs/index.html', '/docs/..%2Fpackage.json', '/docs/swagger-ui.js']) {
    assertError(await call(fx.url, path), { http: 404, code: 404, msg: 'not found' });
  }
});

test('names an object inherits (constructor, __proto__, toString) are unknown files: 404, nothing logged', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const local = await startApiFixture({ logger: pino({ level: 'warn' }, sink) });
  try {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      assertError(await call(local.url, `/docs/${name}`), { http: 404, code: 404, msg: 'not found' });
    }
    assert.deepEqual(lines, []);
  } finally {
    await local.close();
  }
});
