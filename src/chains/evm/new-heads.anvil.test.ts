/**
 * The websocket new-head notifier against a real anvil (which serves its websocket on the HTTP
 * port), with a TCP relay in between where a test breaks the connection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AnvilInstance, startAnvil } from '../../devchain/anvil.js';
import { getBlockNumber, mine } from '../../devchain/chain.js';
import { sleep } from '../../internal/async.js';
import { silentLogger } from '../../internal/logger.js';
import { freePort } from '../../internal/testing/net.js';
import { waitFor } from '../../internal/testing/wait.js';
import { createNewHeadsNotifier, type HeadNotifier, type NewHeadsOptions } from './new-heads.js';
import { startWsProxy, type WsProxy } from './testing/ws-proxy.js';

const logger = silentLogger();

/** Milliseconds `promise` took to settle. */
async function timed(promise: Promise<unknown>): Promise<number> {
  const started = performance.now();
  await promise;
  return performance.now() - started;
}

describe('new-head subscription over a websocket', () => {
  let anvil: AnvilInstance;
  let wsUrl: string;
  const cleanups: (() => Promise<void> | void)[] = [];

  before(async () => {
    anvil = await startAnvil();
    wsUrl = anvil.url.replace(/^http/, 'ws');
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await anvil?.stop();
  });

  function notifier(options: Partial<NewHeadsOptions> & { url: string }): HeadNotifier {
    const controller = new AbortController();
    const heads = createNewHeadsNotifier({
      logger,
      signal: controller.signal,
      retryBaseMs: 20,
      retryMaxMs: 100,
      ...options,
    });
    cleanups.push(() => controller.abort());
    return heads;
  }

  async function relay(): Promise<WsProxy> {
    const proxy = await startWsProxy(anvil.port);
    cleanups.push(() => proxy.close());
    return proxy;
  }

  test('a mined block ends the wait at once; a head is returned by one wait only', async () => {
    const heads = notifier({ url: wsUrl });
    await waitFor('the subscription', () => heads.subscribed);
    const signal = new AbortController().signal;

    const known = await getBlockNumber(anvil.url);
    const waiting = heads.waitForHead(known, 30_000, signal);
    await mine(anvil.url);
    const ms = await timed(waiting);
    assert.ok(ms < 2_000, `woke ${Math.round(ms)} ms after the block, not at the 30 s timeout`);

    // Announced while nobody waits: the next wait returns at once.
    await mine(anvil.url);
    await sleep(300);
    assert.ok((await timed(heads.waitForHead(known + 1, 30_000, signal))) < 50);
    // Nothing new since: a wait runs to its timeout.
    assert.ok((await timed(heads.waitForHead(known + 1, 200, signal))) >= 190);
  });

  test('after the connection is cut and refused for a while, it reconnects and wakes the waits', async () => {
    const proxy = await relay();
    const heads = notifier({ url: proxy.url });
    await waitFor('the subscription', () => heads.subscribed);

    proxy.setMode('refuse');
    proxy.cut();
    await waitFor('the loss to be seen', () => !heads.subscribed);
    const known = await getBlockNumber(anvil.url);
    const waiting = heads.waitForHead(known, 30_000, new AbortController().signal);
    await mine(anvil.url); // never announced: the connection is down
    await sleep(300);
    assert.equal(heads.subscribed, false);

    const back = performance.now();
    proxy.setMode('pass');
    await waiting;
    assert.ok(performance.now() - back < 2_000, 'the fresh subscription ended the wait');
    assert.ok(heads.subscribed);
    assert.ok(proxy.relayed >= 2, 'a second connection was made');
  });

  test('a connection that stops answering pings is ended and made again', async () => {
    const proxy = await relay();
    // A reconnect made while the relay is still mute loses its handshake answer: a short
    // handshake timeout ends that attempt too, instead of the 10 s default outliving the test.
    const heads = notifier({ url: proxy.url, pingIntervalMs: 100, connectTimeoutMs: 300 });
    await waitFor('the subscription', () => heads.subscribed);
    proxy.setMode('mute');
    await waitFor('the silent connection to be ended', () => !heads.subscribed, 2_000);
    await sleep(200); // the first reconnect (20–100 ms later) meets the mute relay too
    proxy.setMode('pass');
    await waitFor('a new subscription', () => heads.subscribed, 5_000);
    assert.ok(proxy.relayed >= 2);
  });

  test('a subscription that stays silent while polls find new blocks is made again', async () => {
    const proxy = await relay();
    // Pings would notice a mute relay on their own; here only the polled heads can.
    const heads = notifier({ url: proxy.url, pingIntervalMs: 60_000, staleAfterMs: 200 });
    await waitFor('the subscription', () => heads.subscribed);
    heads.polled(await getBlockNumber(anvil.url));

    proxy.setMode('mute');
    await mine(anvil.url);
    const head = await getBlockNumber(anvil.url);
    heads.polled(head);
    await sleep(100);
    heads.polled(head);
    assert.ok(heads.subscribed, 'not yet: silent for less than staleAfterMs');
    await sleep(200);
    proxy.setMode('pass');
    heads.polled(head);
    await waitFor('a new subscription', () => heads.subscribed && proxy.relayed >= 2, 5_000);

    // An idle chain is no sign of a dead subscription: the same head polled again changes nothing.
    const relayed = proxy.relayed;
    for (let i = 0; i < 5; i++) {
      heads.polled(head);
      await sleep(60);
    }
    assert.equal(proxy.relayed, relayed);
    assert.ok(heads.subscribed);
  });

  test('with nothing listening it never throws: waits run to their timeout while it retries', async () => {
    const port = await freePort();
    const heads = notifier({ url: `ws://127.0.0.1:${port}` });
    const ms = await timed(heads.waitForHead(0, 300, new AbortController().signal));
    assert.ok(ms >= 290 && ms < 2_000, `waited ${Math.round(ms)} ms`);
    assert.equal(heads.subscribed, false);
    heads.close();
    assert.ok(
      (await timed(heads.waitForHead(0, 30_000, new AbortController().signal))) < 50,
      'closed: no wait',
    );
  });
});
