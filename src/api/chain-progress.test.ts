/**
 * The chain-progress tracker over a real SQLite store, with a clock the test moves: rates are
 * differences between readings over the trailing window, a chain's first checkpoint is no
 * speed, a rollback never makes a rate negative, and a failing store leaves the last figures.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { hash32, indexBatch, tokenMetadata, transferRecord } from '../store/testing/batches.js';
import type { IndexBatch, TransferRecord } from '../store/types.js';
import { type ChainProgressTracker, createChainProgressTracker } from './chain-progress.js';

const dir = mkdtempSync(join(tmpdir(), 'tq-progress-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

const TOKEN = `0x${'ee'.repeat(20)}`;
const A = `0x${'a1'.repeat(20)}`;
const B = `0x${'b2'.repeat(20)}`;

function transfers(block: number, n: number): TransferRecord[] {
  return Array.from({ length: n }, (_, i) =>
    transferRecord({
      token: TOKEN,
      blockNumber: block,
      logIndex: i,
      txIndex: i,
      txHash: hash32(block * 1000 + i),
      from: A,
      to: B,
      time: 1_700_000_000 + block,
    }),
  );
}

function batch(from: number, to: number, count: number, head = to + 2): IndexBatch {
  return indexBatch({
    fromBlock: from,
    toBlock: to,
    toBlockHash: hash32(to),
    transfers: count === 0 ? [] : transfers(to, count),
    tokens: [tokenMetadata(TOKEN, { name: 'Token', symbol: 'TKN', decimals: 0 })],
    blocks: [{ number: to, hash: hash32(to), parentHash: hash32(0) }],
    head,
    pruneBlocksBelow: to - 5,
  });
}

async function setup(options: { keepMs?: number } = {}) {
  const store = await openSqliteStore({ path: join(dir, `p${++counter}.sqlite`), logger: silentLogger() });
  let clock = 1_000_000;
  const tracker = createChainProgressTracker({
    store,
    chains: ['eth', 'bsc'],
    logger: silentLogger(),
    intervalMs: 3_600_000,
    now: () => clock,
    ...options,
  });
  await tracker.sample(); // the reading the tracker takes at once
  return {
    store,
    tracker,
    /** Moves the clock by `ms` and takes a reading. */
    async at(ms: number) {
      clock += ms;
      await tracker.sample();
      return eth(tracker);
    },
    async close() {
      tracker.close();
      await store.close();
    },
  };
}

const eth = (tracker: ChainProgressTracker) => tracker.current().find((f) => f.chain === 'eth')!;

describe('chain progress', () => {
  test('rates are differences over the trailing 10 s; the first checkpoint is no speed', async () => {
    const t = await setup();
    try {
      assert.deepEqual(
        t.tracker.current().map((f) => [f.chain, f.indexed, f.head, f.transfers]),
        [
          ['eth', 0, 0, 0],
          ['bsc', 0, 0, 0],
        ],
      );
      await t.store.writer.applyBatch(batch(100, 110, 5, 150));
      let figures = await t.at(1000);
      assert.equal(figures.indexed, 110);
      assert.equal(figures.head, 150);
      assert.equal(figures.lag, 40);
      assert.equal(figures.transfers, 5);
      // Block 110 is where indexing started, not 110 blocks in a second.
      assert.equal(figures.blocksPerSecond, 0);
      assert.equal(figures.transfersPerSecond, 5);

      await t.store.writer.applyBatch(batch(111, 130, 20));
      figures = await t.at(2000);
      assert.equal(figures.blocksPerSecond, 20 / 2);
      assert.equal(figures.transfersPerSecond, 25 / 3);

      // 12 s later: the window starts at the newest reading at least 10 s old (t = 3 s).
      await t.store.writer.applyBatch(batch(131, 140, 10));
      figures = await t.at(12_000);
      assert.equal(figures.blocksPerSecond, 10 / 12);
      assert.equal(figures.transfersPerSecond, 10 / 12);

      const history = t.tracker.history();
      assert.equal(history.times.length, 4);
      assert.deepEqual(history.chains.eth?.blocksPerSecond, [0, 0, 10, 10 / 12]);
      assert.deepEqual(history.chains.bsc?.blocksPerSecond, [0, 0, 0, 0]);
      // The newest 16 of the chain, as the store keeps them.
      assert.deepEqual(
        t.tracker.recent('eth').map((r) => [r.blockNumber, r.logIndex]),
        [...transfers(130, 20).slice(-6), ...transfers(140, 10)]
          .map((r) => [r.blockNumber, r.logIndex])
          .reverse(),
      );
      assert.ok((t.tracker.storageBytes() ?? 0) > 0);
    } finally {
      await t.close();
    }
  });

  test('a rollback never makes a rate negative', async () => {
    const t = await setup();
    try {
      await t.store.writer.applyBatch(batch(1, 10, 3));
      await t.at(1000);
      await t.store.writer.applyBatch(batch(11, 20, 4));
      await t.at(1000);
      await t.store.writer.rollback('eth', 12, null);
      // 10 s on, the window starts at the reading before the rollback (block 20, 7 transfers).
      const figures = await t.at(10_000);
      assert.equal(figures.indexed, 12);
      assert.equal(figures.transfers, 3);
      assert.equal(figures.blocksPerSecond, 0);
      assert.equal(figures.transfersPerSecond, 0);
      // A rollback empties the store's newest transfers.
      assert.deepEqual(t.tracker.recent('eth'), []);
    } finally {
      await t.close();
    }
  });

  test('history older than keepMs is dropped', async () => {
    const t = await setup({ keepMs: 5000 });
    try {
      for (let i = 0; i < 10; i++) await t.at(1000);
      assert.equal(t.tracker.history().times.length, 6);
      assert.equal(t.tracker.history().chains.eth?.transfersPerSecond.length, 6);
    } finally {
      await t.close();
    }
  });

  test('a store that fails keeps the last figures and logs once per failure streak', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const store = await openSqliteStore({ path: join(dir, `p${++counter}.sqlite`), logger: silentLogger() });
    await store.writer.applyBatch(batch(1, 10, 2));
    let clock = 0;
    const tracker = createChainProgressTracker({
      store,
      chains: ['eth'],
      logger: pino({ level: 'info' }, sink),
      intervalMs: 3_600_000,
      now: () => clock,
    });
    try {
      await tracker.sample();
      const before = structuredClone(tracker.current());
      const sampledAt = tracker.lastSampleAt();
      await store.close(); // every read now fails
      for (let i = 0; i < 3; i++) {
        clock += 1000;
        await tracker.sample();
      }
      assert.deepEqual(tracker.current(), before);
      assert.equal(tracker.lastSampleAt(), sampledAt);
      assert.equal(
        lines.filter((l) => l.includes('chain progress reading failed')).length,
        1,
        lines.join(''),
      );
    } finally {
      tracker.close();
    }
  });
});
