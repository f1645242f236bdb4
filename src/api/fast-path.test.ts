import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateApiKey } from '../internal/api-keys.js';
import { silentLogger } from '../internal/logger.js';
import { DATA_VERSION_CHECK_MS, openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { ApiKeyRecord, Store } from '../store/types.js';
import { type ApiAppOptions, type ApiApps, createApiApps } from './app.js';
import { fastPathOf } from './fast-path.js';
import { type ApiFixture, BIG, ETH_INDEXED, startApiFixture, USDC } from './testing/fixture.js';

/** One HTTP/1.1 connection spoken by hand, so that answers are compared as the bytes sent. */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiting: { head: boolean; resolve: (answer: string) => void }[] = [];
  closed = false;
  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, data]);
      this.pump();
    });
    socket.on('close', () => {
      this.closed = true;
      // An answer cut short, or none: what arrived is the answer.
      for (const waiter of this.waiting.splice(0)) waiter.resolve(this.buffer.toString('latin1'));
      this.buffer = Buffer.alloc(0);
    });
    socket.on('error', () => {});
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends requests (all in one write: pipelined) and resolves with their answers in order. */
  send(requests: { method: string; target: string }[]): Promise<string[]> {
    const answers = requests.map(
      ({ method }) =>
        new Promise<string>((resolve) => this.waiting.push({ head: method === 'HEAD', resolve })),
    );
    this.socket.write(
      requests.map(({ method, target }) => `${method} ${target} HTTP/1.1\r\nHost: test\r\n\r\n`).join(''),
    );
    return Promise.all(answers);
  }

  close(): void {
    this.socket.destroy();
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = this.buffer.subarray(0, end + 4).toString('latin1');
      const length = this.waiting[0]!.head ? 0 : Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (this.buffer.length < end + 4 + length) return;
      const answer = this.buffer.subarray(0, end + 4 + length).toString('latin1');
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.waiting.shift()!.resolve(answer);
    }
  }
}

/** An answer without its `Date` header, the one part that may differ between two servers. */
const withoutDate = (answer: string): string => answer.replace(/\r\nDate: [^\r]*/, '');

/**
 * Asserts two servers' answers are the same bytes but for `Date` and the clock in `Retry-After`:
 * seconds until the bucket's next token, counted from when each server's bucket emptied, which
 * may be a second apart between two servers that each ran the requests at their own moments.
 */
function assertSameAnswer(a: string, b: string, message: string): void {
  const retryAfter = /\r\nretry-after: (\d+)/;
  const [ra, rb] = [retryAfter.exec(a)?.[1], retryAfter.exec(b)?.[1]];
  if (ra !== undefined && rb !== undefined) assert.ok(Math.abs(Number(ra) - Number(rb)) <= 1, message);
  const normal = (answer: string) => withoutDate(answer).replace(retryAfter, '\r\nretry-after: *');
  assert.equal(normal(a), normal(b), message);
}

interface Served {
  apps: ApiApps;
  store: Store;
  port: number;
  connection: RawConnection | null;
  close(): Promise<void>;
}

async function serve(dbPath: string, options: Partial<ApiAppOptions>): Promise<Served> {
  const store = await openSqliteStore({ path: dbPath, logger: silentLogger() });
  const apps = await createApiApps({
    store,
    logger: silentLogger(),
    chains: ['eth', 'bsc', 'movr'],
    ...options,
  });
  await apps.api.listen({ host: '127.0.0.1', port: 0 });
  const port = (apps.api.server.address() as AddressInfo).port;
  const served: Served = {
    apps,
    store,
    port,
    connection: null,
    async close() {
      served.connection?.close();
      await apps.api.close();
      // A test may have closed it already.
      await store.close().catch(() => {});
    },
  };
  return served;
}

/** Sends requests on the server's keep-alive connection, opening a new one when the last closed. */
async function exchange(server: Served, requests: { method: string; target: string }[]): Promise<string[]> {
  if (server.connection === null || server.connection.closed)
    server.connection = await RawConnection.open(server.port);
  const answers = await server.connection.send(requests);
  if (answers.some((a) => /\r\nConnection: close\r\n/i.test(a))) {
    server.connection.close();
    server.connection = null;
  }
  return answers;
}

async function addKey(store: Store, extra: Partial<ApiKeyRecord> = {}): Promise<{ key: string; id: string }> {
  const { key, id, hash } = generateApiKey();
  await store.keys.createApiKey({
    id,
    hash,
    label: 'test',
    createdAt: Date.now(),
    revokedAt: null,
    ...extra,
  });
  return { key, id };
}

/** The request counters of a `/metrics` text: series and count, latencies left out. */
function requestCounts(metrics: string): string[] {
  return metrics
    .split('\n')
    .filter(
      (line) => line.startsWith('tokenquery_http_requests_total{') || /_duration_seconds_count\{/.test(line),
    )
    .sort();
}

describe('fastPathOf', () => {
  const key = generateApiKey().key;
  test('takes only a plain path and exactly one key-length apikey', () => {
    assert.equal(fastPathOf(`/vipapi/eth/tokens/1/50?apikey=${key}`), '/vipapi/eth/tokens/1/50');
    assert.equal(fastPathOf('/vipapi/eth/tokens/1/50'), undefined);
    assert.equal(fastPathOf(`/vipapi/eth/tokens/1/50?apikey=${key}&x=1`), undefined);
    assert.equal(fastPathOf(`/vipapi/eth/tokens/1/50?x=${key}12345`), undefined);
    assert.equal(fastPathOf(`/vipapi/eth/tokens/1/50?x?apikey=${key}`), undefined);
    assert.equal(fastPathOf(`/vipapi/eth/tokens/1/50#?apikey=${key}`), undefined);
    assert.equal(fastPathOf(`vipapi/eth/tokens/1/50?apikey=${key}`), undefined);
    assert.equal(fastPathOf(`?apikey=${key}`), undefined);
    assert.equal(fastPathOf(`/${'a'.repeat(300)}?apikey=${key}`), undefined);
  });
});

describe('fast path: the same bytes as the routed answer', () => {
  let fx: ApiFixture;
  let fast: Served;
  let routed: Served;
  const keys: Record<string, string> = {};

  before(async () => {
    fx = await startApiFixture();
    keys.plain = fx.key;
    keys.limited = (await addKey(fx.store, { rateLimit: { perSecond: 0.001, burst: 4 } })).key;
    keys.allowed = (await addKey(fx.store, { allowIps: ['127.0.0.1/32'] })).key;
    keys.refusedAddress = (await addKey(fx.store, { allowIps: ['10.0.0.0/8'] })).key;
    keys.limitedAllowed = (
      await addKey(fx.store, { rateLimit: { perSecond: 0.001, burst: 50 }, allowIps: ['127.0.0.0/8'] })
    ).key;
    const revoked = await addKey(fx.store);
    await fx.store.keys.revokeApiKey(revoked.id, Date.now());
    keys.revoked = revoked.key;
    keys.unknown = generateApiKey().key;
    // Both with the default rate limit's absence, and an anonymous limit that runs out during the
    // run, so that 401s turn into 429s at the same request on both.
    const options: Partial<ApiAppOptions> = { anonymousRateLimit: { perSecond: 0.001, burst: 300 } };
    fast = await serve(fx.dbPath, options);
    routed = await serve(fx.dbPath, { ...options, fastPath: false });
    assert.ok(fast.apps.fastPath !== null);
    assert.equal(routed.apps.fastPath, null);
  });
  after(async () => {
    await fast.close();
    await routed.close();
    await fx.close();
  });

  test('hits, misses, HEAD, bad and limited keys, refused addresses, hostile URLs', async () => {
    const k = keys.plain!;
    const hex = USDC.slice(2);
    const paths = [
      `/vipapi/eth/token/${USDC}`,
      `/vipapi/eth/token/tokentrans/${USDC}/1/2`,
      `/vipapi/eth/token/tokentrans/${USDC}/01/2`,
      `/vipapi/eth/token/tokentrans/${BIG}/1/50`,
      '/vipapi/eth/tokens/1/50',
      '/vipapi/movr/tokens/1/10',
      `/vipapi/bsc/token/${USDC}`,
      `/vipapi/eth/address/tokenbalance/${USDC}`,
      // Encoded and odd spellings: the router decodes, the handlers normalize.
      `/vipapi/eth/token/%30x${hex}`,
      `/vipapi/%65th/token/${USDC}`,
      `/vipapi/eth/token/0X${hex}`,
      `/vipapi/eth/token/${USDC}%23`,
      `/vipapi/eth/token/${USDC}%2F`,
      `/vipapi/eth/token/${USDC};x=1`,
      `/vipapi/eth/token/../token/${USDC}`,
      `/vipapi/eth/./token/${USDC}`,
      `//vipapi/eth/token/${USDC}`,
      `/vipapi//eth/token/${USDC}`,
      `/vipapi/eth/token/${USDC}/`,
      `/VIPAPI/eth/token/${USDC}`,
      `/vipapi/eth/token/${USDC}#frag`,
      `/vipapi/eth/token/%zz`,
      '/vipapi/kcs/tokens/1/50',
      '/vipapi/eth/tokens/0/50',
      `/vipapi/eth/token/tokentrans/${USDC}/1/51`,
      `/vipapi/eth/token/0x${'1'.repeat(300)}`,
      `/vipapi/eth/token/0x${'1'.repeat(9000)}`,
      `/vipapi/eth/token/0x${'9'.repeat(40)}`,
      '/healthz',
      '/nothing',
    ];
    const queries = [
      `?apikey=${k}`,
      `?apikey=${keys.limited}`,
      `?apikey=${keys.allowed}`,
      `?apikey=${keys.refusedAddress}`,
      `?apikey=${keys.limitedAllowed}`,
      `?apikey=${keys.revoked}`,
      `?apikey=${keys.unknown}`,
      `?apikey=${k}&x=1`,
      `?x=1&apikey=${k}`,
      `?apikey=${k}&apikey=${k}`,
      `?apikey=%74${k.slice(1)}`,
      `?APIKEY=${k}`,
      `?apikey=${k}#x`,
      `?apikey=${k.slice(0, -1)}+`,
      '?apikey=',
      '',
    ];
    const requests: { method: string; target: string }[] = [];
    for (const path of paths) {
      for (const query of queries) {
        requests.push({ method: 'GET', target: path + query });
        requests.push({ method: 'HEAD', target: path + query });
      }
    }
    for (const method of ['POST', 'OPTIONS', 'DELETE', 'PUT']) {
      requests.push({ method, target: `/vipapi/eth/token/${USDC}?apikey=${k}` });
    }
    let compared = 0;
    const statuses = new Set<number>();
    // Three rounds: the first answers are computed, the second kept, the third come from the cache.
    for (let round = 0; round < 3; round++) {
      for (const request of requests) {
        const [a] = await exchange(fast, [request]);
        const [b] = await exchange(routed, [request]);
        assertSameAnswer(a!, b!, `${request.method} ${request.target.slice(0, 200)}`);
        statuses.add(Number(a!.slice(9, 12)));
        compared++;
      }
    }
    // Pipelined: several requests in one write, hits and misses mixed, answered in order.
    const pipelined = requests.slice(0, 64);
    const [a, b] = await Promise.all([exchange(fast, pipelined), exchange(routed, pipelined)]);
    assert.equal(a.length, b.length);
    for (const [i, answer] of a.entries()) assertSameAnswer(answer, b[i]!, `pipelined ${i}`);
    assert.ok(compared > 2500);
    // The comparison meant something: a good share of them took the fast path, and some 429s.
    assert.ok(fast.apps.fastPath!.answered > 50, `fast path answered ${fast.apps.fastPath!.answered}`);
    assert.deepEqual(
      [200, 401, 404, 405, 414, 429].filter((code) => !statuses.has(code)),
      [],
      `statuses seen: ${[...statuses].join(' ')}`,
    );

    // The same requests counted in /metrics, by route, method and status.
    const [fastMetrics] = await exchange(fast, [{ method: 'GET', target: '/metrics' }]);
    const [routedMetrics] = await exchange(routed, [{ method: 'GET', target: '/metrics' }]);
    const counts = requestCounts(fastMetrics!);
    assert.ok(
      counts.some((line) => line.includes('route="/vipapi/:chain/token/:address",method="HEAD",code="200"')),
    );
    assert.deepEqual(counts, requestCounts(routedMetrics!));
  });
});

describe('fast path: key, allow-list, limit and data changes take effect as before', () => {
  let fx: ApiFixture;
  let server: Served;
  /** Another store handle on the same file: what `tokenquery keys` and the indexer are to `serve`. */
  let other: Store;
  const TTL_MS = 200;

  before(async () => {
    fx = await startApiFixture();
    other = await openSqliteStore({ path: fx.dbPath, logger: silentLogger() });
    server = await serve(fx.dbPath, { keyCacheTtlMs: TTL_MS, anonymousRateLimit: null });
  });
  after(async () => {
    await server.close();
    await other.close();
    await fx.close();
  });

  const status = (answer: string): number => Number(answer.slice(9, 12));
  const header = (answer: string, name: string): string | undefined =>
    new RegExp(`\\r\\n${name}: ([^\\r]*)`, 'i').exec(answer)?.[1];
  const body = (answer: string): string => answer.slice(answer.indexOf('\r\n\r\n') + 4);
  /** GETs `path` with `key`; returns the answer and whether the fast path answered it. */
  async function get(path: string, key: string, on = server): Promise<{ answer: string; fast: boolean }> {
    const before = on.apps.fastPath!.answered;
    const [answer] = await exchange(on, [{ method: 'GET', target: `${path}?apikey=${key}` }]);
    return { answer: answer!, fast: on.apps.fastPath!.answered > before };
  }
  /**
   * Asks until the answer is cached and served by the fast path. A write just before (a key added
   * through the other handle) is seen by the data-version check up to DATA_VERSION_CHECK_MS later
   * and drops the cache between two of these requests, so three in a row are not always enough;
   * a second round after that check has run always is.
   */
  async function warm(path: string, key: string, on = server): Promise<void> {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 3; i++) await get(path, key, on);
      if ((await get(path, key, on)).fast) return;
      await sleep(2 * DATA_VERSION_CHECK_MS);
    }
    assert.fail(`${path} not answered by the fast path`);
  }

  test('a revoked key is refused within the key TTL, cached answer or not', async () => {
    const { key, id } = await addKey(other);
    const path = `/vipapi/eth/token/${USDC}`;
    await warm(path, key);
    await other.keys.revokeApiKey(id, Date.now());
    await sleep(TTL_MS + 2 * DATA_VERSION_CHECK_MS);
    const after = await get(path, key);
    assert.equal(status(after.answer), 401);
    assert.equal(body(after.answer), '{"code":50003,"msg":"invalid apikey","data":null}');
    assert.equal(after.fast, false);
  });

  test('an allow-list set on a key refuses the next cached answers from elsewhere', async () => {
    const { key, id } = await addKey(other);
    const path = '/vipapi/eth/tokens/1/50';
    await warm(path, key);
    await other.keys.setApiKeyLimits(id, { allowIps: ['10.0.0.0/8'] });
    await sleep(TTL_MS + 2 * DATA_VERSION_CHECK_MS);
    assert.equal(status((await get(path, key)).answer), 401);
    // Widened to this address: answered again, and from the fast path once cached.
    await other.keys.setApiKeyLimits(id, { allowIps: ['127.0.0.1/32'] });
    await sleep(TTL_MS + 2 * DATA_VERSION_CHECK_MS);
    await warm(path, key);
  });

  test('a path is remembered once the cache holds its answer, not while it is asked once (a crawl)', async () => {
    const fast = server.apps.fastPath!;
    // Pages of a list no other test asks for: the first request of each is a miss the cache does
    // not keep yet (it admits a key on its second request), so nothing is worth remembering.
    const pages = Array.from({ length: 12 }, (_, i) => `/vipapi/eth/tokens/${i + 1}/${37 + (i % 3)}`);
    const before = fast.size;
    for (const path of pages) assert.equal((await get(path, fx.key)).fast, false);
    assert.equal(fast.size, before, 'paths asked once are not remembered');
    // Asked again, each answer is kept, its path remembered, and the third request answered early.
    for (const path of pages) assert.equal((await get(path, fx.key)).fast, false);
    assert.equal(fast.size, before + pages.length);
    for (const path of pages) assert.equal((await get(path, fx.key)).fast, true);
  });

  test('a rate limit counts cached answers, and its headers and 429 are the routed ones', async () => {
    const { key, id } = await addKey(other);
    const path = `/vipapi/eth/token/tokentrans/${USDC}/1/50`;
    await warm(path, key);
    await other.keys.setApiKeyLimits(id, { rateLimit: { perSecond: 0.01, burst: 3 } });
    await sleep(TTL_MS + 2 * DATA_VERSION_CHECK_MS);
    // The limit change wrote to the store: the cache was dropped, so fill it again with another key.
    await warm(path, fx.key);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await get(path, key));
    assert.deepEqual(
      answers.map(({ answer }) => [status(answer), header(answer, 'x-ratelimit-remaining')]),
      [
        [200, '2'],
        [200, '1'],
        [200, '0'],
        [429, '0'],
        [429, '0'],
      ],
    );
    // The first may refresh the key's lookup on the routed path; the others within the TTL take
    // the fast path until the bucket is empty, then the routed path answers 429.
    assert.ok(answers.slice(1, 3).every(({ fast }) => fast));
    assert.ok(answers.slice(3).every(({ fast }) => !fast));
    const refused = answers[3]!.answer;
    assert.equal(header(refused, 'retry-after'), '100');
    assert.equal(header(refused, 'x-ratelimit-burst-capacity'), '3');
    assert.equal(header(refused, 'x-ratelimit-replenish-rate'), '0.01');
    assert.equal(body(refused), '{"code":429,"msg":"too many requests","data":null}');
  });

  test('another process’s commit shows in fast-path answers within DATA_VERSION_CHECK_MS', async () => {
    const path = `/vipapi/eth/token/${BIG}`;
    await warm(path, fx.key);
    assert.match(body((await get(path, fx.key)).answer), /"t":"1000000000"/);
    await other.writer.updateSupplies('eth', [
      { address: BIG, totalSupply: 4n * 10n ** 27n, cap: null, burnedBalance: null, atBlock: ETH_INDEXED },
    ]);
    await sleep(2 * DATA_VERSION_CHECK_MS);
    const after = await get(path, fx.key);
    assert.equal(after.fast, false, 'the cache was dropped');
    assert.match(body(after.answer), /"t":"4000000000"/);
  });

  test('a store that fails under a cached answer: routed, answered as before, no crash', async () => {
    const failing = await serve(fx.dbPath, { anonymousRateLimit: null });
    try {
      const path = `/vipapi/eth/token/${USDC}`;
      await warm(path, fx.key, failing);
      // The served store's handle goes away: its version cannot be read any more.
      await failing.store.close();
      const failed = await get(path, fx.key, failing);
      assert.equal(failed.fast, false);
      assert.equal(status(failed.answer), 500);
      assert.equal(body(failed.answer), '{"code":40001,"msg":"server is busy","data":null}');
    } finally {
      await failing.close();
    }
  });

  test('once closing, every request is routed (fastify answers with Connection: close)', async () => {
    const path = `/vipapi/eth/token/${USDC}`;
    await warm(path, fx.key);
    const fastPath = server.apps.fastPath!;
    // What the server hands the request listener, reduced to what the fast path reads and writes.
    const written: unknown[] = [];
    const request = {
      method: 'GET',
      url: `${path}?apikey=${fx.key}`,
      socket: { remoteAddress: '127.0.0.1' },
    };
    const response = {
      writeHead: (...args: unknown[]) => written.push(args),
      end: (...args: unknown[]) => written.push(args),
    };
    type Args = Parameters<typeof fastPath.answer>;
    assert.equal(fastPath.answer(request as unknown as Args[0], response as unknown as Args[1]), true);
    assert.equal(written.length, 2);
    server.connection?.close();
    server.connection = null;
    await server.apps.api.close();
    assert.equal(fastPath.answer(request as unknown as Args[0], response as unknown as Args[1]), false);
    assert.equal(written.length, 2);
  });
});
