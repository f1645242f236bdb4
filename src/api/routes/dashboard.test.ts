/**
 * The dashboard's routes over the API fixture: the page and its files come from this server
 * (uPlot from its npm package), and `/dashboard/data` has the documented shape, needs no key,
 * follows the store, and shows no full address or hash.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { DEAD_ADDRESS } from '../../internal/chains.js';
import {
  ALICE,
  type ApiFixture,
  BOB,
  CAROL,
  ETH_TRANSFERS,
  NOSUPPLY,
  startApiFixture,
  USDC,
} from '../testing/fixture.js';
import { assertError, call } from '../testing/http.js';
import { type DashboardData, shorten } from './dashboard.js';

let fx: ApiFixture;
before(async () => {
  fx = await startApiFixture();
});
after(() => fx?.close());

async function data(): Promise<{ body: DashboardData; text: string }> {
  const answer = await call(fx.url, '/dashboard/data');
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(answer.headers.get('cache-control'), 'no-store');
  return { body: JSON.parse(answer.text) as DashboardData, text: answer.text };
}

describe('dashboard page', () => {
  test('/ is the page, with a CSP that allows only this server, and every file it names is served', async () => {
    const page = await call(fx.url, '/');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'(;|$)/);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.length >= 4, refs.join());
    for (const ref of refs) {
      if (ref.startsWith('data:')) continue;
      assert.doesNotMatch(ref, /^(https?:)?\/\//, `external reference ${ref}`);
      if (!ref.startsWith('dashboard/')) continue;
      const file = await call(fx.url, `/${ref}`);
      assert.equal(file.status, 200, ref);
      assert.match(file.headers.get('content-type') ?? '', /^text\/(javascript|css)/, ref);
    }
  });

  test('uPlot is served from its npm package, gzipped when asked, and revalidates by ETag', async () => {
    const require = createRequire(import.meta.url);
    const original = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'));
    const plain = await fetch(`${fx.url}/dashboard/assets/uplot.js`, {
      headers: { 'accept-encoding': 'identity' },
    });
    assert.deepEqual(Buffer.from(await plain.arrayBuffer()), original);
    // Node's fetch would decode gzip itself: read the raw body through a raw request instead.
    const { request } = await import('node:http');
    const gz = await new Promise<{ encoding: string | undefined; body: Buffer; etag: string }>(
      (resolve, reject) => {
        request(`${fx.url}/dashboard/assets/uplot.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              encoding: res.headers['content-encoding'],
              body: Buffer.concat(chunks),
              etag: String(res.headers.etag),
            }),
          );
        })
          .on('error', reject)
          .end();
      },
    );
    assert.equal(gz.encoding, 'gzip');
    assert.ok(gz.body.length < original.length / 2);
    assert.deepEqual(gunzipSync(gz.body), original);
    const again = await fetch(`${fx.url}/dashboard/assets/uplot.js`, {
      headers: { 'accept-encoding': 'gzip', 'if-none-match': gz.etag },
    });
    assert.equal(again.status, 304);
  });

  test('an unknown file is 404, other methods 405', async () => {
    assertError(await call(fx.url, '/dashboard/assets/secret.js'), {
      http: 404,
      code: 404,
      msg: 'not found',
    });
    assertError(await call(fx.url, '/dashboard/assets/..%2Fpackage.json'), {
      http: 404,
      code: 404,
      msg: 'not found',
    });
    for (const path of ['/', '/dashboard/data']) {
      assertError(await call(fx.url, path, { method: 'POST' }), {
        http: 405,
        code: 10001,
        msg: /method not allowed/,
      });
    }
  });
});

describe('dashboard data', () => {
  test('has the documented shape, in the configured chain order', async () => {
    const { body } = await data();
    assert.deepEqual(Object.keys(body), [
      'generatedAt',
      'chains',
      'throughput',
      'topTokens',
      'recentTransfers',
      'store',
    ]);
    assert.ok(Math.abs(body.generatedAt - Date.now()) < 5000);
    assert.deepEqual(
      body.chains.map((c) => c.chain),
      ['eth', 'bsc', 'movr'],
    );
    for (const chain of body.chains) {
      assert.deepEqual(Object.keys(chain).sort(), [
        'blocksPerSecond',
        'chain',
        'head',
        'indexed',
        'lag',
        'lastError',
        'transfers',
        'transfersPerSecond',
        'updatedAt',
      ]);
    }
    assert.deepEqual(Object.keys(body.throughput.chains), ['eth', 'bsc', 'movr']);
    for (const series of Object.values(body.throughput.chains)) {
      assert.equal(series.blocksPerSecond.length, body.throughput.times.length);
      assert.equal(series.transfersPerSecond.length, body.throughput.times.length);
    }
    assert.ok(
      body.throughput.times.every((t) => Number.isInteger(t) && Math.abs(t - Date.now() / 1000) < 3600),
    );
    assert.deepEqual(Object.keys(body.topTokens), ['eth', 'bsc', 'movr']);
    assert.deepEqual(Object.keys(body.recentTransfers), ['eth', 'bsc', 'movr']);
    assert.deepEqual(body.store.kind, 'sqlite');
  });

  test('follows the store: progress, top tokens as the token list ranks them, the newest transfers', async () => {
    const { body } = await data();
    const eth = body.chains.find((c) => c.chain === 'eth')!;
    const status = JSON.parse((await call(fx.url, '/status')).text) as {
      chains: Record<string, { head: number; indexed: number; lag: number }>;
    };
    assert.equal(eth.head, status.chains.eth!.head);
    assert.equal(eth.indexed, status.chains.eth!.indexed);
    assert.equal(eth.lag, status.chains.eth!.lag);
    assert.equal(eth.transfers, ETH_TRANSFERS.length);

    const ranked = await fx.store.reader.listTokens('eth', 0, 10);
    assert.deepEqual(
      body.topTokens.eth!.map((t) => [t.symbol, t.holders, t.transfers]),
      ranked.tokens.map((t) => [t.symbol, t.holderCount, t.transferCount]),
    );
    assert.equal(body.topTokens.eth![0]!.token, `${USDC.slice(0, 6)}…${USDC.slice(-4)}`);

    // The fixture's eth batch: newest first, amounts in token units.
    const newest = [...ETH_TRANSFERS].reverse();
    assert.deepEqual(
      body.recentTransfers.eth!.map((t) => [t.block, t.time]),
      newest.map((t) => [t.blockNumber, t.time]),
    );
    const last = body.recentTransfers.eth![0]!;
    assert.equal(last.symbol, 'USDC');
    assert.equal(last.amount, '0.000001');
    assert.deepEqual(body.recentTransfers.movr, []);
  });

  test("each top token carries its top holders, as Token Holders' first page ranks them", async () => {
    const { body } = await data();
    const usdc = body.topTokens.eth!.find((t) => t.symbol === 'USDC')!;
    // The fixture's USDC (6 decimals, supply 1.5): 0.65, 0.299999, 0.05 and 0.000001 of it.
    assert.deepEqual(usdc.topHolders, [
      { address: shorten(ALICE), amount: '0.65', percentage: '43.333333' },
      { address: shorten(BOB), amount: '0.299999', percentage: '19.999933' },
      { address: shorten(CAROL), amount: '0.05', percentage: '3.333333' },
      { address: shorten(DEAD_ADDRESS), amount: '0.000001', percentage: '0.000066' },
    ]);
    const noSupply = body.topTokens.eth!.find((t) => t.token === shorten(NOSUPPLY))!;
    assert.ok(noSupply.topHolders.length > 0);
    assert.ok(noSupply.topHolders.every((h) => h.percentage === null));
  });

  test('needs no key and shows no full address or hash', async () => {
    const { text } = await data();
    for (const t of ETH_TRANSFERS) {
      for (const id of [t.token, t.from, t.to, t.txHash]) {
        assert.ok(!text.includes(id), `${id} is shown whole`);
      }
    }
  });

  test('is built at most once a second, however often it is asked for', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the earlier tests' answer
    const answers = await Promise.all(Array.from({ length: 20 }, () => data()));
    assert.equal(new Set(answers.map((a) => a.body.generatedAt)).size, 1);
  });
});
