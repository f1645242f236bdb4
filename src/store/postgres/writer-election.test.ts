/**
 * Writer election and fencing on a real PostgreSQL: several stores on one database stand for
 * several processes (each has its own pool and its own lock connections).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ALL_CHAINS } from '../../internal/chains.js';
import { silentLogger } from '../../internal/logger.js';
import { eventually } from '../../internal/testing/wait.js';
import { openSqliteStore } from '../sqlite/sqlite-store.js';
import { hash32, indexBatch, tokenMetadata, transferRecord } from '../testing/batches.js';
import type { ChainWriter, IndexBatch, Store, WriterLease } from '../types.js';
import { acquireWriterLease, WriterLeaseLostError } from '../writer-lease.js';
import { WRITER_LOCK_CLASS, writerLockKey } from './locks.js';
import { openPostgresStore } from './postgres-store.js';
import { requireTestServer } from './testing/require-server.js';
import { createTestDatabase, querySql, type TestDatabase, withSchema } from './testing/test-database.js';

const TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const HOLDER = '0x1111111111111111111111111111111111111111';
const logger = silentLogger();

/** One mint of 1 to HOLDER in block `block`, as a one-block batch. */
function blockBatch(block: number): IndexBatch {
  return indexBatch({
    fromBlock: block,
    toBlock: block,
    transfers: [
      transferRecord({
        token: TOKEN,
        blockNumber: block,
        txHash: hash32(block),
        to: HOLDER,
        value: 1n,
        time: 1_700_000_000 + block,
      }),
    ],
    tokens: [tokenMetadata(TOKEN, { name: 'Token', symbol: 'TOK', decimals: 0 })],
  });
}

/** The backend pids of the lock connections of `chain` (their application_name says so). */
async function lockSessions(url: string, chain: string): Promise<number[]> {
  const rows = await querySql<{ pid: number }>(
    url,
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
    [`tokenquery writer lock ${chain}`],
  );
  return rows.map((row) => row.pid);
}

/** Backend pids holding the writer lock of `chain` of the store at `url` (its schema is in the URL). */
async function writerLockHolders(url: string, chain = 'eth'): Promise<number[]> {
  const [{ schema }] = (await querySql<{ schema: string }>(url, 'SELECT current_schema() AS schema')) as [
    { schema: string },
  ];
  const rows = await querySql<{ pid: number }>(
    url,
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
       AND classid = $1::oid AND objid = $2::oid
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [WRITER_LOCK_CLASS, writerLockKey(schema, chain) >>> 0],
  );
  return rows.map((row) => row.pid);
}

if (await requireTestServer()) {
  const database: TestDatabase = await createTestDatabase();
  const stores: Store[] = [];
  after(async () => {
    await Promise.all(stores.map((store) => store.close().catch(() => {})));
    await database.drop();
  });

  let schemas = 0;
  async function freshSchema(): Promise<string> {
    const schema = `election_${++schemas}`;
    await querySql(database.url, `CREATE SCHEMA ${schema}`);
    return withSchema(database.url, schema);
  }

  /** A store as one process opens it. */
  async function open(url: string): Promise<Store> {
    const store = await openPostgresStore({ url, logger, maxConnections: 4 });
    stores.push(store);
    return store;
  }

  async function lease(store: Store, writerId: string, signal = new AbortController().signal) {
    const held = await store.acquireWriterLease!('eth', { signal, writerId, pollIntervalMs: 100 });
    assert.ok(held !== null);
    return held;
  }

  describe('writer election on PostgreSQL', () => {
    test('the first process is elected at once; a second stands by until the first releases', async () => {
      const url = await freshSchema();
      const [a, b] = [await open(url), await open(url)];
      const first = await lease(a, 'host-a:1');
      assert.equal(first.epoch, 1);
      assert.deepEqual(
        { ...(await a.reader.getChainStatus('eth'))?.writer, since: 0 },
        { id: 'host-a:1', epoch: 1, since: 0 },
      );

      let standbyWith: ChainWriter | null | undefined;
      const waiting = b.acquireWriterLease!('eth', {
        signal: new AbortController().signal,
        writerId: 'host-b:2',
        pollIntervalMs: 100,
        onStandby: (writer) => {
          standbyWith = writer;
        },
      });
      await eventually(async () => (standbyWith !== undefined ? true : undefined), 5_000, 'standby');
      assert.equal(standbyWith?.id, 'host-a:1');
      // Still waiting while the writer lives.
      const early = await Promise.race([waiting, new Promise((r) => setTimeout(() => r('waiting'), 400))]);
      assert.equal(early, 'waiting');

      await first.release();
      const released = Date.now();
      const second = await waiting;
      assert.ok(second !== null);
      assert.ok(Date.now() - released < 2_000, `took over after ${Date.now() - released} ms`);
      assert.equal(second.epoch, 2);
      assert.equal((await b.reader.getChainStatus('eth'))?.writer?.id, 'host-b:2');
      await assert.rejects(first.writer.applyBatch(blockBatch(1)), WriterLeaseLostError);
      await second.writer.applyBatch(blockBatch(1));
      assert.equal((await a.writer.getCheckpoint('eth'))?.block, 1);
      await second.release();
    });

    test('a writer whose lock session is killed loses its lease, and a standby takes over', async () => {
      const url = await freshSchema();
      const [a, b] = [await open(url), await open(url)];
      const first = await lease(a, 'a');
      await first.writer.applyBatch(blockBatch(1));
      const waiting = lease(b, 'b');
      await new Promise((resolve) => setTimeout(resolve, 300));

      // What a crashed writer's session looks like to the server: it ends.
      assert.equal((await lockSessions(url, 'eth')).length, 2, 'the writer and the standby');
      const holders = await writerLockHolders(url);
      assert.equal(holders.length, 1, 'one session holds the writer lock');
      await querySql(url, 'SELECT pg_terminate_backend($1)', [holders[0]]);
      const killed = Date.now();

      const second = await waiting;
      assert.ok(Date.now() - killed < 3_000, `took over after ${Date.now() - killed} ms`);
      await eventually(async () => (first.lost.aborted ? true : undefined), 3_000, 'the loss noticed');
      assert.ok(first.lost.reason instanceof WriterLeaseLostError);
      // The old writer can write nothing any more; the new one resumes from the checkpoint.
      await assert.rejects(first.writer.applyBatch(blockBatch(2)), WriterLeaseLostError);
      await assert.rejects(first.writer.setChainStatus('eth', { head: 99 }), WriterLeaseLostError);
      assert.equal((await b.writer.getCheckpoint('eth'))?.block, 1);
      await second.writer.applyBatch(blockBatch(2));
      assert.equal((await a.reader.getChainStatus('eth'))?.head, 2);
      await second.release();
      await first.release();
    });

    test('fencing: a writer that has not noticed a newer election can never commit', async () => {
      const url = await freshSchema();
      const a = await open(url);
      const first = await lease(a, 'a');
      await first.writer.applyBatch(blockBatch(1));
      await first.writer.updateSupplies('eth', [
        { address: TOKEN, totalSupply: 1n, cap: null, burnedBalance: 0n, atBlock: 1 },
      ]);
      // Another process's election, which this lease's connection has not told it about (its
      // lock session is alive: the election is made by hand, as after a network partition).
      await querySql(
        url,
        "UPDATE chains SET writer_epoch = writer_epoch + 1, writer_id = 'other' WHERE chain = 'eth'",
      );
      const before = await a.reader.getChainStatus('eth');

      await assert.rejects(first.writer.applyBatch(blockBatch(2)), WriterLeaseLostError);
      assert.ok(first.lost.aborted, 'the failed write loses the lease');
      await assert.rejects(first.writer.rollback('eth', 0, null), WriterLeaseLostError);
      await assert.rejects(
        first.writer.updateSupplies('eth', [
          { address: TOKEN, totalSupply: 5n, cap: null, burnedBalance: 0n, atBlock: 2 },
        ]),
        WriterLeaseLostError,
      );
      await assert.rejects(
        first.writer.setChainStatus('eth', { head: 50, lastError: 'x' }),
        WriterLeaseLostError,
      );
      // Nothing of it reached the database.
      assert.equal((await a.writer.getCheckpoint('eth'))?.block, 1);
      assert.equal((await a.reader.getToken('eth', TOKEN))?.totalSupply, 1n);
      assert.equal((await a.reader.getToken('eth', TOKEN))?.transferCount, 1);
      assert.deepEqual(await a.reader.getChainStatus('eth'), before);
      // The lease's view writes only its own chain; the store itself is not fenced.
      await a.writer.setChainStatus('eth', { head: 7 });
      assert.equal((await a.reader.getChainStatus('eth'))?.head, 7);
      await first.release();
    });

    test('writers racing a lock loss: every block is committed exactly once', async () => {
      const url = await freshSchema();
      const [a, b] = [await open(url), await open(url)];
      const blocks = 120;
      /** Writes the next blocks through a lease until `blocks` are in or the lease is lost. */
      async function write(held: WriterLease, store: Store): Promise<number> {
        let written = 0;
        while (!held.lost.aborted) {
          const next = ((await store.writer.getCheckpoint('eth'))?.block ?? 0) + 1;
          if (next > blocks) break;
          try {
            await held.writer.applyBatch(blockBatch(next));
            written++;
          } catch (error) {
            if (error instanceof WriterLeaseLostError) break;
            throw error;
          }
        }
        return written;
      }
      const first = await lease(a, 'a');
      const waiting = lease(b, 'b');
      const writingA = write(first, a);
      await eventually(
        async () => (((await a.writer.getCheckpoint('eth'))?.block ?? 0) >= 30 ? true : undefined),
        10_000,
        'progress',
      );
      const [pid] = await writerLockHolders(url);
      await querySql(url, 'SELECT pg_terminate_backend($1)', [pid]);
      const second = await waiting;
      const [byA, byB] = await Promise.all([writingA, write(second, b)]);
      assert.ok(byA >= 30 && byA < blocks, `a wrote ${byA}`);
      assert.equal(byA + byB, blocks);
      const token = await a.reader.getToken('eth', TOKEN);
      assert.equal(token?.transferCount, blocks);
      assert.equal(await a.reader.getBalance('eth', TOKEN, HOLDER), BigInt(blocks));
      const all = await a.reader.listTransfers('eth', TOKEN, 0, 1000);
      assert.deepEqual(
        all.map((t) => t.blockNumber),
        Array.from({ length: blocks }, (_, i) => blocks - i),
      );
      await second.release();
    });

    test('a wait ends with null when its signal aborts, and closing the store ends its lock sessions', async () => {
      const url = await freshSchema();
      const [a, b] = [await open(url), await open(url)];
      const first = await lease(a, 'a');
      const controller = new AbortController();
      const waiting = b.acquireWriterLease!('eth', { signal: controller.signal, pollIntervalMs: 100 });
      await new Promise((resolve) => setTimeout(resolve, 250));
      controller.abort();
      assert.equal(await waiting, null);
      await eventually(
        async () => ((await lockSessions(url, 'eth')).length === 1 ? true : undefined),
        3_000,
        'the standby session closed',
      );
      await a.close();
      await eventually(
        async () => ((await lockSessions(url, 'eth')).length === 0 ? true : undefined),
        3_000,
        'the writer session closed',
      );
      assert.ok(first.lost.aborted, 'closing the store loses its leases');
      // The chain is free again.
      const next = await lease(b, 'b');
      assert.equal(next.epoch, 2);
      await next.release();
    });

    test('chains are elected separately, and so are stores in different schemas of one database', async () => {
      const [url1, url2] = [await freshSchema(), await freshSchema()];
      const [a, b] = [await open(url1), await open(url2)];
      const signal = new AbortController().signal;
      const held = await Promise.all([
        a.acquireWriterLease!('eth', { signal }),
        a.acquireWriterLease!('bsc', { signal }),
        b.acquireWriterLease!('eth', { signal }),
      ]);
      assert.deepEqual(
        held.map((h) => h?.epoch),
        [1, 1, 1],
      );
      await Promise.all(held.map((h) => h?.release()));
      const keys = new Set(ALL_CHAINS.map((chain) => writerLockKey('public', chain)));
      assert.equal(keys.size, ALL_CHAINS.length, 'no two known chains share a lock key');
      assert.equal(writerLockKey('s', 'eth'), writerLockKey('s', 'eth'));
      assert.notEqual(writerLockKey('s1', 'eth'), writerLockKey('s2', 'eth'));
    });
  });

  describe('writer lease without election (SQLite)', () => {
    test('is granted at once and never lost', async () => {
      const { mkdtempSync, rmSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const dir = mkdtempSync(join(tmpdir(), 'tq-lease-'));
      const store = await openSqliteStore({ path: join(dir, 'db.sqlite'), logger });
      try {
        const held = await acquireWriterLease(store, 'eth', { signal: new AbortController().signal });
        assert.ok(held !== null);
        assert.equal(held.writer, store.writer);
        assert.equal(held.lost.aborted, false);
        const aborted = new AbortController();
        aborted.abort();
        assert.equal(await acquireWriterLease(store, 'eth', { signal: aborted.signal }), null);
      } finally {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
