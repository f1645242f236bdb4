import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '../internal/logger.js';
import { DATA_VERSION_CHECK_MS, openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { indexBatch, transferRecord } from '../store/testing/batches.js';
import type { Store } from '../store/types.js';
import { createResponseCache } from './response-cache.js';
import { startApiServer } from './server.js';
import {
  ALICE,
  type ApiFixture,
  BIG,
  ETH_INDEXED,
  ETH_TOKENS,
  startApiFixture,
  USDC,
} from './testing/fixture.js';
import { call, okData } from './testing/http.js';

const body = (text: string) => Buffer.from(text);

describe('response cache', () => {
  test('keeps a body for its version only', () => {
    let version = 1;
    const cache = createResponseCache({ version: () => version, admitOnSecondRequest: false });
    const v = cache.validate();
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.set('a', body('one'), v), true, 'set says the cache holds it');
    assert.equal(cache.get('a')?.toString(), 'one');
    assert.equal(cache.validate(), v);
    assert.equal(cache.get('a')?.toString(), 'one');
    version = 2;
    assert.equal(cache.validate(), 2);
    assert.equal(cache.get('a'), undefined, 'a new version drops every entry');
    assert.deepEqual(cache.size, { entries: 0, bytes: 0 });
  });

  test('drops an answer computed while the version moved', () => {
    let version = 1;
    const cache = createResponseCache({ version: () => version, admitOnSecondRequest: false });
    const before = cache.validate();
    // Another request sees the data move while this one is still reading the store.
    version = 2;
    cache.validate();
    assert.equal(cache.set('a', body('read at version 1, maybe older'), before), false);
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.size.entries, 0);
  });

  test('stays within its byte and entry bounds, dropping the oldest first', () => {
    const cache = createResponseCache({
      version: () => 7,
      maxBytes: 10,
      maxEntries: 3,
      admitOnSecondRequest: false,
    });
    const v = cache.validate();
    cache.set('a', body('aaaa'), v);
    cache.set('b', body('bbbb'), v);
    cache.set('c', body('cc'), v);
    assert.deepEqual(cache.size, { entries: 3, bytes: 10 });
    cache.set('d', body('d'), v); // entry bound: a goes
    assert.equal(cache.get('a'), undefined);
    assert.deepEqual(cache.size, { entries: 3, bytes: 7 });
    cache.set('e', body('eeeeee'), v); // byte bound: b goes, which makes room enough
    assert.deepEqual(
      ['a', 'b', 'c', 'd', 'e'].map((k) => cache.get(k)?.toString() ?? null),
      [null, null, 'cc', 'd', 'eeeeee'],
    );
    assert.deepEqual(cache.size, { entries: 3, bytes: 9 });
    cache.set('big', body('x'.repeat(11)), v); // larger than the whole cache: not kept, nothing dropped
    assert.equal(cache.get('big'), undefined);
    assert.deepEqual(cache.size, { entries: 3, bytes: 9 });
    cache.set('d', body('dd'), v); // replacing counts the new size only
    assert.deepEqual(cache.size, { entries: 3, bytes: 10 });
    assert.equal(cache.get('d')?.toString(), 'dd');
  });

  test('by default keeps an answer the second time its key is asked for', () => {
    let version = 1;
    const cache = createResponseCache({ version: () => version, maxEntries: 2 });
    const v = cache.validate();
    assert.equal(cache.set('a', body('one'), v), false);
    assert.equal(cache.get('a'), undefined, 'asked for once: not kept');
    assert.equal(cache.set('a', body('one'), v), true);
    assert.equal(cache.get('a')?.toString(), 'one');
    // The keys seen once are bounded by maxEntries too, the oldest forgotten first.
    cache.set('b', body('b'), v);
    cache.set('c', body('c'), v);
    cache.set('d', body('d'), v); // forgets b
    cache.set('b', body('b'), v); // b is new again (and c is forgotten)
    assert.equal(cache.get('b'), undefined);
    cache.set('d', body('d'), v);
    assert.equal(cache.get('d')?.toString(), 'd');
    // What was asked for before a version change counts after it.
    cache.set('e', body('e1'), v);
    version = 2;
    const v2 = cache.validate();
    cache.set('e', body('e2'), v2);
    assert.equal(cache.get('e')?.toString(), 'e2');
  });
});

describe('API answers through the response cache', () => {
  let fx: ApiFixture;
  /** A second handle on the same file: what the indexer's process is to the API's. */
  let other: Store;
  before(async () => {
    fx = await startApiFixture();
    other = await openSqliteStore({ path: fx.dbPath, logger: silentLogger() });
  });
  after(async () => {
    await other.close();
    await fx.close();
  });

  const get = async (path: string) => okData(await call(fx.url, `${path}?apikey=${fx.key}`));
  const info = async (token: string) =>
    (await get(`/vipapi/eth/token/${token}`)) as { tokenInfo: { t: string } };
  const page = async () => (await get(`/vipapi/eth/token/tokentrans/${USDC}/1/50`)) as { block_no: number }[];
  const tokens = async () => (await get('/vipapi/eth/tokens/1/50')) as { data: { h: string }[] };

  test('a write through the API’s own store handle shows at once', async () => {
    assert.equal((await info(USDC)).tokenInfo.t, '1.5');
    assert.equal((await info(USDC)).tokenInfo.t, '1.5'); // kept: asked for a second time
    assert.equal((await info(USDC)).tokenInfo.t, '1.5'); // now answered from the cache
    await fx.store.writer.updateSupplies('eth', [
      { address: USDC, totalSupply: 2_500_000n, cap: null, burnedBalance: null, atBlock: ETH_INDEXED },
    ]);
    assert.equal((await info(USDC)).tokenInfo.t, '2.5');
  });

  test('another process’s commit shows once DATA_VERSION_CHECK_MS has passed', async () => {
    assert.ok(DATA_VERSION_CHECK_MS <= 10, 'new blocks must show within ~100 ms');
    // Each asked for twice, so that the answers are kept in the cache before the commit.
    assert.equal((await info(BIG)).tokenInfo.t, '1000000000');
    assert.equal((await info(BIG)).tokenInfo.t, '1000000000');
    await page();
    const pageBefore = await page();
    await tokens();
    const listBefore = await tokens();
    await other.writer.updateSupplies('eth', [
      { address: BIG, totalSupply: 3n * 10n ** 27n, cap: null, burnedBalance: null, atBlock: ETH_INDEXED },
    ]);
    await other.writer.applyBatch(
      indexBatch({
        fromBlock: ETH_INDEXED + 1,
        toBlock: ETH_INDEXED + 1,
        transfers: [
          transferRecord({
            token: USDC,
            blockNumber: ETH_INDEXED + 1,
            txHash: `0x${'ab'.repeat(32)}`,
            from: ALICE,
            to: BIG,
            value: 5n,
            time: 1_800_000_000,
          }),
        ],
        tokens: ETH_TOKENS,
      }),
    );
    await sleep(2 * DATA_VERSION_CHECK_MS);
    assert.equal((await info(BIG)).tokenInfo.t, '3000000000');
    const pageAfter = await page();
    assert.equal(pageAfter.length, pageBefore.length + 1);
    assert.equal(pageAfter[0]?.block_no, ETH_INDEXED + 1);
    // USDC gained a holder (BIG's address), which can reorder the token list; at least it was re-read.
    assert.equal((await tokens()).data.length, listBefore.data.length);
  });

  test('answers byte for byte what an uncached server answers', async () => {
    const store = await openSqliteStore({ path: fx.dbPath, logger: silentLogger() });
    const uncached = await startApiServer({
      store,
      logger: silentLogger(),
      chains: ['eth', 'bsc', 'movr'],
      host: '127.0.0.1',
      port: 0,
      responseCache: false,
    });
    try {
      const paths = [
        `/vipapi/eth/token/${USDC}`,
        `/vipapi/bsc/token/${USDC}`,
        `/vipapi/eth/token/tokentrans/${USDC}/1/2`,
        `/vipapi/eth/token/tokentrans/${USDC}/2/2`,
        `/vipapi/eth/token/tokentrans/${USDC}/01/50`,
        `/vipapi/eth/token/tokentrans/${BIG}/1/50`,
        `/vipapi/eth/token/tokentrans/${BIG}/9/50`,
        '/vipapi/eth/tokens/1/50',
        '/vipapi/eth/tokens/2/1',
        '/vipapi/movr/tokens/1/10',
        `/vipapi/eth/token/0x${'99'.repeat(20)}`,
        `/vipapi/eth/token/tokentrans/${USDC}/0/50`,
      ];
      for (const path of paths) {
        // Three times: the second answer is kept, the third comes from the cache.
        for (let i = 0; i < 3; i++) {
          const [a, b] = await Promise.all([
            call(fx.url, `${path}?apikey=${fx.key}`),
            call(uncached.url, `${path}?apikey=${fx.key}`),
          ]);
          assert.equal(a.status, b.status, path);
          assert.equal(a.text, b.text, path);
          assert.equal(a.headers.get('content-type'), b.headers.get('content-type'), path);
          assert.equal(a.headers.get('content-length'), b.headers.get('content-length'), path);
        }
      }
    } finally {
      await uncached.close();
      await store.close();
    }
  });

  test('the key is checked on every request, cached answer or not', async () => {
    const path = `/vipapi/eth/token/${USDC}`;
    await get(path);
    const answer = await call(fx.url, `${path}?apikey=not-a-key`);
    assert.equal(answer.status, 401);
  });
});
