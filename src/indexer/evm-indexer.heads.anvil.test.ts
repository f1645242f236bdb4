/**
 * Following the head with a websocket subscription (`ChainConfig.wsUrl`), through `runIndexers`
 * as `start` and `index` run it, against a real anvil: a new block is indexed at once rather
 * than at the next poll, and a broken websocket costs nothing but that speed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startWsProxy } from '../chains/evm/testing/ws-proxy.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getBlockNumber, waitForReceipt } from '../devchain/chain.js';
import { type DeployedToken, deployDemoTokens, transferToken } from '../devchain/deploy.js';
import { sleep } from '../internal/async.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/types.js';
import { runIndexers } from './run.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-heads-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const logger = silentLogger();

describe('following the head with a websocket subscription', () => {
  let anvil: AnvilInstance;
  let token: DeployedToken;
  let n = 0;

  before(async () => {
    anvil = await startAnvil();
    token = (await deployDemoTokens(anvil.url))[0]!;
  });
  after(async () => {
    await anvil?.stop();
  });

  /** Indexes anvil into a fresh store with `runIndexers` until stopped. */
  async function startIndexing(options: { pollIntervalMs: number; wsUrl: string }) {
    const store = await openSqliteStore({ path: join(tmp, `run-${++n}.sqlite`), logger });
    const controller = new AbortController();
    const running = runIndexers({
      chains: [
        {
          name: 'eth',
          rpcUrl: anvil.url,
          fromBlock: 0,
          finalityDepth: 3,
          pollIntervalMs: options.pollIntervalMs,
          wsUrl: options.wsUrl,
        },
      ],
      store,
      logger,
      signal: controller.signal,
      tty: false,
    });
    await waitFor(
      'the initial catch-up',
      async () => (await indexedBlock(store)) === (await getBlockNumber(anvil.url)),
    );
    return {
      store,
      async stop() {
        controller.abort();
        await running;
        await store.close();
      },
    };
  }

  /** Mines a block holding one transfer; resolves with its number once mined. */
  async function transferBlock(): Promise<number> {
    const hash = await transferToken(anvil.url, token, {
      from: token.deployer,
      to: `0x${(0xa0 + n).toString(16).padStart(40, '0')}`,
      amount: 1n,
    });
    return (await waitForReceipt(anvil.url, hash)).blockNumber;
  }

  /** Milliseconds from now until the store holds `block`. */
  async function timeToIndex(store: Store, block: number, timeoutMs = 30_000): Promise<number> {
    const started = performance.now();
    await waitFor(
      `block ${block} to be indexed`,
      async () => (await indexedBlock(store)) >= block,
      timeoutMs,
    );
    return performance.now() - started;
  }

  test('with polling every 30 s, each new block is indexed within about a second', async () => {
    const proxy = await startWsProxy(anvil.port);
    const indexing = await startIndexing({ pollIntervalMs: 30_000, wsUrl: proxy.url });
    try {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const block = await transferBlock();
        times.push(await timeToIndex(indexing.store, block, 10_000));
        await sleep(100 + i * 50);
      }
      console.log(`# indexed ${times.map((t) => `${Math.round(t)} ms`).join(', ')} after mining`);
      for (const ms of times) assert.ok(ms < 2_000, `indexed after ${Math.round(ms)} ms (poll every 30 s)`);
    } finally {
      await indexing.stop();
      await proxy.close();
    }
  });

  test('after the websocket breaks it reconnects, and a block mined meanwhile is indexed once it is back', async () => {
    const proxy = await startWsProxy(anvil.port);
    const indexing = await startIndexing({ pollIntervalMs: 30_000, wsUrl: proxy.url });
    try {
      proxy.setMode('refuse');
      proxy.cut();
      const during = await transferBlock();
      await sleep(1_000);
      assert.ok((await indexedBlock(indexing.store)) < during, 'no announcement, and no poll due for 30 s');

      proxy.setMode('pass');
      const back = await timeToIndex(indexing.store, during, 20_000);
      assert.ok(proxy.relayed >= 2, 'a new connection was made');
      const next = await timeToIndex(indexing.store, await transferBlock(), 10_000);
      console.log(
        `# outage block indexed ${Math.round(back)} ms after the relay reopened; the next one after ${Math.round(next)} ms`,
      );
      assert.ok(back < 10_000, `indexed ${Math.round(back)} ms after the relay reopened (poll every 30 s)`);
      assert.ok(next < 2_000, `the next block after ${Math.round(next)} ms`);
    } finally {
      await indexing.stop();
      await proxy.close();
    }
  });

  test('with the websocket down from the start, polling alone keeps indexing and reports no error', async () => {
    const proxy = await startWsProxy(anvil.port);
    proxy.setMode('refuse');
    const indexing = await startIndexing({ pollIntervalMs: 300, wsUrl: proxy.url });
    try {
      for (let i = 0; i < 3; i++) {
        const ms = await timeToIndex(indexing.store, await transferBlock(), 10_000);
        assert.ok(ms < 3_000, `indexed by polling after ${Math.round(ms)} ms`);
      }
      assert.equal(proxy.relayed, 0);
      assert.equal((await indexing.store.reader.getChainStatus('eth'))?.lastError ?? null, null);
    } finally {
      await indexing.stop();
      await proxy.close();
    }
  });
});

async function indexedBlock(store: Store): Promise<number> {
  return (await store.writer.getCheckpoint('eth'))?.block ?? -1;
}
