/**
 * The PostgreSQL bulk load (`IndexBatch.bulkLoad`, store/postgres/bulk-load.ts) against the row-by-row
 * path, on the real 14,323-row ethereum-etl export (SYNTHETIC node for what it lacks): imported
 * both ways, the store holds the same rows in every table, the same catalog (the partitions the
 * build swapped in, their indexes and constraints, by name), answers the API the same, and
 * `verify` finds nothing wrong; a load stopped during its appends, and one whose build is killed
 * (its server process terminated while the build waits on a lock, after its fills and indexes),
 * resume with the same command to the same store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createEvmSource } from '../chains/evm/source.js';
import { type FixtureNode, startFixtureNode } from '../chains/evm/testing/fixture-node.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { verifyChain } from '../indexer/verify.js';
import { type Logger, silentLogger } from '../internal/logger.js';
import { openPostgresStore } from '../store/postgres/postgres-store.js';
import { requireTestServer } from '../store/postgres/testing/require-server.js';
import {
  createTestDatabase,
  querySql,
  type TestDatabase,
  withSchema,
} from '../store/postgres/testing/test-database.js';
import type { IndexBatch, Store, StoreWriter } from '../store/types.js';
import { type ImportOptions, type ImportSummary, importTransfers } from './importer.js';
import { createImportNode } from './node-reader.js';
import { CROSSCHECK_EXPORT, readCrosscheckExport, syntheticNodeFor } from './testing/export-node.js';
import { dumpCatalog, dumpTables } from './testing/postgres-tables.js';
import { assertSameStore, digest } from './testing/store-digest.js';

const silent = silentLogger();
const tmp = mkdtempSync(join(tmpdir(), 'tq-pg-bulk-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const rows = readCrosscheckExport();
const BATCH = 2_000;

if (await requireTestServer()) {
  const database: TestDatabase = await createTestDatabase();
  after(() => database.drop());
  let schemas = 0;
  async function freshUrl(): Promise<string> {
    const schema = `bulk_${++schemas}`;
    await querySql(database.url, `CREATE SCHEMA ${schema}`);
    return withSchema(database.url, schema);
  }
  const open = (url: string, logger: Logger = silent) =>
    openPostgresStore({ url, logger, maxConnections: 2 });

  /** The store with `applyBatch` wrapped by `wrap`. */
  function intercepted(
    store: Store,
    wrap: (batch: IndexBatch, apply: StoreWriter['applyBatch']) => Promise<void>,
  ): Store {
    const apply = (batch: IndexBatch) => store.writer.applyBatch(batch);
    return {
      ...store,
      writer: Object.create(store.writer, {
        applyBatch: { value: (batch: IndexBatch) => wrap(batch, apply) },
      }) as StoreWriter,
    };
  }

  describe('PostgreSQL bulk load against row by row: the real 14,323-row export', () => {
    let node: FixtureNode;
    let expected: { tables: string[]; catalog: string[]; digest: string[] };
    before(async () => {
      const last = Math.max(...rows.map((r) => Number(r.block_number)));
      node = await startFixtureNode(syntheticNodeFor(rows, { head: last + 10 }).node);
      const url = await freshUrl();
      const store = await open(url);
      const summary = await run(store, { bulkLoad: false });
      assert.equal(summary.imported, rows.length);
      expected = {
        tables: await dumpTables(url),
        catalog: await dumpCatalog(url),
        digest: await digest(store),
      };
      await store.close();
    });
    after(() => node?.close());

    function run(store: Store, options: Partial<ImportOptions> = {}): Promise<ImportSummary> {
      const rpc = createRpcClient({ url: node.url, logger: silent, retryBaseMs: 5, maxRetries: 2 });
      return importTransfers({
        store,
        chain: 'eth',
        inputs: [CROSSCHECK_EXPORT],
        node: createImportNode({ rpc, source: createEvmSource({ rpc, logger: silent }), retryDelayMs: 5 }),
        logger: silent,
        tmpDir: tmp,
        tty: false,
        batchTransfers: BATCH,
        concurrency: 1,
        ...options,
      });
    }

    async function assertSame(url: string, store: Store, what: string): Promise<void> {
      assert.deepEqual(await dumpTables(url), expected.tables, `${what}: tables`);
      assert.deepEqual(await dumpCatalog(url), expected.catalog, `${what}: catalog`);
      assertSameStore(await digest(store), expected.digest, what);
      const report = await verifyChain({ store, chain: 'eth', source: null, logger: silent });
      assert.deepEqual(report.differences, [], `${what}: verify`);
      assert.equal(report.transfers, rows.length);
      assert.equal(report.balancesBlock, null);
    }

    test('a bulk load makes the same tables, catalog and answers; verify finds nothing', async () => {
      const url = await freshUrl();
      const lines: string[] = [];
      const logger = Object.create(silent, {
        info: { value: (_: unknown, message?: string) => lines.push(message ?? '') },
      }) as Logger;
      const store = await open(url, logger);
      let staged = -1;
      const watched = intercepted(store, async (batch, apply) => {
        // The last batch (without the flag) finds every other batch's transfers staged, none indexed.
        if (batch.bulkLoad !== true) {
          staged = Number(
            (await querySql<{ n: string }>(url, 'SELECT count(*) AS n FROM bulk_transfers'))[0]!.n,
          );
          const [indexed] = await querySql<{ n: string }>(url, 'SELECT count(*) AS n FROM transfers');
          assert.equal(indexed!.n, '0');
        }
        await apply(batch);
      });
      const summary = await run(watched);
      assert.equal(summary.imported, rows.length);
      assert.ok(staged > rows.length - BATCH && staged < rows.length, `${staged} staged`);
      assert.ok(lines.some((line) => line.startsWith(`built the bulk load of ${staged} transfers`)));
      await assertSame(url, store, 'bulk');
      await store.close();
    });

    test('stopped during its appends: reads are as of the block before the load; the same command resumes', async () => {
      const url = await freshUrl();
      const store = await open(url);
      const controller = new AbortController();
      let n = 0;
      const stopping = intercepted(store, async (batch, apply) => {
        if (++n === 3) controller.abort();
        await apply(batch);
      });
      const first = await run(stopping, { signal: controller.signal });
      assert.equal(first.interrupted, true);
      const status = await store.reader.getChainStatus('eth');
      assert.equal(status?.indexed, first.toBlock);
      assert.equal(status?.balancesBlock, first.fromBlock! - 1);
      const token = (await store.reader.listTokens('eth', 0, 1)).tokens[0]!;
      assert.deepEqual(await store.reader.listTransfers('eth', token.address, 0, 10), []);
      await store.close();
      const reopened = await open(url);
      const second = await run(reopened);
      assert.equal(second.interrupted, false);
      assert.equal(first.imported + second.imported, rows.length);
      await assertSame(url, reopened, 'stopped during appends');
      await reopened.close();
    });

    test('killed during its build: the staged rows stay, the same command builds them again', async () => {
      const url = await freshUrl();
      const store = await open(url);
      // The build's last step updates `tokens`: a lock held on it stops the build there, after
      // its fills and index builds, and its server process is then terminated.
      const locker = new pg.Client({ connectionString: url });
      await locker.connect();
      let stagedBefore = 0;
      const killing = intercepted(store, async (batch, apply) => {
        if (batch.bulkLoad === true) return apply(batch);
        stagedBefore = Number((await locker.query('SELECT count(*) AS n FROM bulk_transfers')).rows[0].n);
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE tokens IN SHARE MODE');
        const applying = apply(batch);
        applying.catch(() => {});
        let killed = 0;
        while (killed === 0) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          // From another connection: inside the locker's transaction, the activity view is a snapshot.
          const waiting = await querySql(
            url,
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE tokens%'`,
          );
          killed = waiting.length;
        }
        await locker.query('ROLLBACK');
        await applying;
      });
      await assert.rejects(run(killing));
      await locker.end();
      assert.ok(stagedBefore > 0);
      const [left] = await querySql<{ n: string }>(url, 'SELECT count(*) AS n FROM bulk_transfers');
      assert.equal(Number(left!.n), stagedBefore, 'staged rows after the kill');
      const [indexed] = await querySql<{ n: string }>(url, 'SELECT count(*) AS n FROM transfers');
      assert.equal(indexed!.n, '0');
      await store.close().catch(() => {});
      const reopened = await open(url);
      assert.ok((await reopened.reader.getChainStatus('eth'))?.balancesBlock !== undefined);
      const second = await run(reopened);
      assert.equal(second.interrupted, false);
      assert.equal(second.skippedCommitted + second.imported, rows.length);
      await assertSame(url, reopened, 'killed during the build');
      await reopened.close();
    });
  });
}
