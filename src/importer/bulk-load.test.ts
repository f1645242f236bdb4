/**
 * The bulk load (`IndexBatch.bulkLoad`, store/sqlite/bulk-load.ts) against the row-by-row path:
 * the same export imported both ways makes the same rows in every table, on the real 14,323-row
 * ethereum-etl export (SYNTHETIC node for what it lacks) and on a SYNTHETIC chain-shaped export
 * with amounts past 2^53, self-transfers and mints; `verify` finds nothing wrong with it; and a
 * load stopped between batches resumes to the same store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { createEvmSource } from '../chains/evm/source.js';
import { type FixtureNodeOptions, startFixtureNode } from '../chains/evm/testing/fixture-node.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { verifyChain } from '../indexer/verify.js';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { assertSameTables } from '../store/sqlite/testing/table-dump.js';
import { openSqliteStoreWithWriterThread } from '../store/sqlite/writer-thread.js';
import type { Store, StoreWriter } from '../store/types.js';
import { type ImportOptions, importTransfers } from './importer.js';
import { createImportNode } from './node-reader.js';
import { CROSSCHECK_EXPORT, readCrosscheckExport, syntheticNodeFor } from './testing/export-node.js';
import { createSyntheticExport } from './testing/synthetic-export.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-bulk-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const logger = silentLogger();
let count = 0;

/** Imports `inputs` into a new store file (through the writer thread when asked); returns its path. */
async function importInto(
  node: FixtureNodeOptions,
  inputs: string[],
  options: Partial<ImportOptions> & {
    writerThread?: boolean;
    stopAfter?: number;
    /** Rows written into the new store's file before the import (raw SQL). */
    before?: (db: Database.Database) => void;
  } = {},
): Promise<{ path: string; imported: number; store: Store }> {
  const path = join(tmp, `store-${++count}.sqlite`);
  if (options.before !== undefined) {
    await (await openSqliteStore({ path, logger })).close();
    const db = new Database(path);
    options.before(db);
    db.close();
  }
  const fixture = await startFixtureNode(node);
  try {
    const open = options.writerThread === true ? openSqliteStoreWithWriterThread : openSqliteStore;
    const store = await open({ path, logger });
    const rpc = createRpcClient({ url: fixture.url, logger, retryBaseMs: 5, maxRetries: 2 });
    const summary = await importTransfers({
      store,
      chain: 'eth',
      inputs,
      node: createImportNode({ rpc, source: createEvmSource({ rpc, logger }), retryDelayMs: 5 }),
      logger,
      tmpDir: tmp,
      tty: false,
      ...options,
    });
    return { path, imported: summary.imported, store };
  } finally {
    await fixture.close();
  }
}

describe('bulk load against row by row', () => {
  const rows = readCrosscheckExport();
  const last = Math.max(...rows.map((r) => Number(r.block_number)));
  const crosscheckNode = syntheticNodeFor(rows, { head: last + 10 }).node;

  test('the real 14,323-row export: the same rows in every table, and verify finds nothing', async () => {
    const rowByRow = await importInto(crosscheckNode, [CROSSCHECK_EXPORT], {
      batchTransfers: 700,
      bulkLoad: false,
    });
    await rowByRow.store.close();
    for (const writerThread of [false, true]) {
      const bulk = await importInto(crosscheckNode, [CROSSCHECK_EXPORT], {
        batchTransfers: 700,
        writerThread,
      });
      assert.equal(bulk.imported, rows.length);
      const report = await verifyChain({ store: bulk.store, chain: 'eth', source: null, logger });
      assert.deepEqual(report.differences, [], `writer thread: ${writerThread}`);
      assert.equal(report.transfers, rows.length);
      assert.equal(report.balancesBlock, null);
      await bulk.store.close();
      assertSameTables(bulk.path, rowByRow.path, `writer thread: ${writerThread}`);
    }
  });

  test('a chain-shaped synthetic export (amounts past 2^53, mints, self-transfers) makes the same tables', async () => {
    const generated = createSyntheticExport({ transfers: 12_000, holders: 900, tokens: 150, seed: 3 });
    // Self-transfers (an address to itself, counted once and changing nothing) are not in the
    // generator's output: every 37th row is made one.
    const lines = [...generated.chunks()].join('').split('\n');
    const header = lines[0]!.split(',');
    const from = header.indexOf('from_address');
    const to = header.indexOf('to_address');
    const body = lines.slice(1, -1).map((line, i) => {
      if (i % 37 !== 5) return line;
      const cells = line.split(',');
      cells[to] = cells[from]!;
      return cells.join(',');
    });
    const path = join(tmp, 'chain-shaped.csv.gz');
    writeFileSync(path, gzipSync(`${[lines[0], ...body].join('\n')}\n`));
    const node = { ...generated.node(), head: generated.lastBlock + 100 };
    const rowByRow = await importInto(node, [path], { batchTransfers: 1_000, bulkLoad: false });
    await rowByRow.store.close();
    const bulk = await importInto(node, [path], { batchTransfers: 1_000, writerThread: true });
    assert.equal(bulk.imported, 12_000);
    const report = await verifyChain({ store: bulk.store, chain: 'eth', source: null, logger });
    assert.deepEqual(report.differences, []);
    await bulk.store.close();
    assertSameTables(bulk.path, rowByRow.path, 'chain-shaped');
  });

  test('addresses stored before the load: numbered after them, or looked up when the chain has some', async () => {
    // Another chain's addresses take the first ids (the entries' ids are then ranks after them);
    // an address of the chain itself (kept by no transfer) makes the build look each one up.
    const others = (db: Database.Database) =>
      db.prepare("INSERT INTO addresses (chain, address) VALUES ('bsc', x'01'), ('bsc', x'02')").run();
    const own = (db: Database.Database) => {
      others(db);
      db.prepare("INSERT INTO addresses (chain, address) VALUES ('eth', ?)").run(
        Buffer.from(rows[0]!.from_address!.slice(2), 'hex'),
      );
    };
    for (const [what, before] of [
      ['other chains', others],
      ['own', own],
    ] as const) {
      const options = { batchTransfers: 3_000, before };
      const rowByRow = await importInto(crosscheckNode, [CROSSCHECK_EXPORT], { ...options, bulkLoad: false });
      await rowByRow.store.close();
      const bulk = await importInto(crosscheckNode, [CROSSCHECK_EXPORT], { ...options, writerThread: true });
      const report = await verifyChain({ store: bulk.store, chain: 'eth', source: null, logger });
      assert.deepEqual(report.differences, [], what);
      await bulk.store.close();
      assertSameTables(bulk.path, rowByRow.path, `${what} addresses`);
    }
  });

  test('a load stopped after any batch resumes to the same tables', async () => {
    const rowByRow = await importInto(crosscheckNode, [CROSSCHECK_EXPORT], {
      batchTransfers: 3_000,
      bulkLoad: false,
    });
    await rowByRow.store.close();
    // Stopped as the 1st, 3rd and last-but-one of 5 batches commit, then run again (twice for the 1st).
    for (const stopAt of [1, 3, 4]) {
      const path = join(tmp, `stopped-${stopAt}.sqlite`);
      const fixture = await startFixtureNode(crosscheckNode);
      try {
        const store = await openSqliteStoreWithWriterThread({ path, logger });
        const controller = new AbortController();
        let batches = 0;
        const stopping: Store = {
          ...store,
          writer: Object.create(store.writer, {
            applyBatch: {
              value: async (batch: Parameters<StoreWriter['applyBatch']>[0]) => {
                if (++batches === stopAt) controller.abort();
                await store.writer.applyBatch(batch);
              },
            },
          }) as StoreWriter,
        };
        const rpc = createRpcClient({ url: fixture.url, logger, retryBaseMs: 5, maxRetries: 2 });
        const options: ImportOptions = {
          store: stopping,
          chain: 'eth',
          inputs: [CROSSCHECK_EXPORT],
          node: createImportNode({ rpc, source: createEvmSource({ rpc, logger }), retryDelayMs: 5 }),
          logger,
          tmpDir: tmp,
          tty: false,
          batchTransfers: 3_000,
          concurrency: 1,
        };
        const first = await importTransfers({ ...options, signal: controller.signal });
        assert.equal(first.interrupted, true);
        // Stopped: the checkpoint moved on, the tables wait at the block before the load.
        const status = await store.reader.getChainStatus('eth');
        assert.equal(status?.indexed, first.toBlock);
        assert.equal(status?.balancesBlock, first.fromBlock! - 1);
        await store.close();
        const reopened = await openSqliteStoreWithWriterThread({ path, logger });
        const second = await importTransfers({ ...options, store: reopened });
        assert.equal(second.interrupted, false);
        assert.equal(first.imported + second.imported, rows.length, `stopped at batch ${stopAt}`);
        await reopened.close();
      } finally {
        await fixture.close();
      }
      assertSameTables(path, rowByRow.path, `stopped at batch ${stopAt}`);
    }
  });
});
