/**
 * A bulk load's build in steps (store/sqlite/bulk-build.ts), each key-range chunk its own
 * transaction: stopped after a chunk of each step (a hook that throws once the chunk has
 * committed, as a crash there would leave it), the store answers every read as before the load
 * (another connection reads it at that moment), and the import run again finishes the build to
 * the same rows, table by table, as an uninterrupted build and as row by row; and the WAL stays
 * about one chunk's size.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createEvmSource } from '../chains/evm/source.js';
import { startFixtureNode } from '../chains/evm/testing/fixture-node.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { silentLogger } from '../internal/logger.js';
import { bulkBuildSettings } from '../store/sqlite/bulk-build.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { assertSameTables } from '../store/sqlite/testing/table-dump.js';
import type { Store } from '../store/types.js';
import { type ImportOptions, importTransfers } from './importer.js';
import { createImportNode } from './node-reader.js';
import { CROSSCHECK_EXPORT, readCrosscheckExport, syntheticNodeFor } from './testing/export-node.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-bulk-build-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const defaults = { ...bulkBuildSettings };
afterEach(() => Object.assign(bulkBuildSettings, defaults));
const logger = silentLogger();

const rows = readCrosscheckExport();
const last = Math.max(...rows.map((r) => Number(r.block_number)));
const node = syntheticNodeFor(rows, { head: last + 10 }).node;
const token = rows[0]!.token_address!;
const holder = rows[0]!.to_address!;

async function runImport(store: Store, bulkLoad = true): Promise<void> {
  const fixture = await startFixtureNode(node);
  try {
    const rpc = createRpcClient({ url: fixture.url, logger, retryBaseMs: 5, maxRetries: 2 });
    const options: ImportOptions = {
      store,
      chain: 'eth',
      inputs: [CROSSCHECK_EXPORT],
      node: createImportNode({ rpc, source: createEvmSource({ rpc, logger }), retryDelayMs: 5 }),
      logger,
      tmpDir: tmp,
      tty: false,
      batchTransfers: 3_000,
      concurrency: 1,
      bulkLoad,
    };
    await importTransfers(options);
  } finally {
    await fixture.close();
  }
}

/** What a reader answers of the chain: everything a build in progress must keep as before the load. */
function readsOf(store: Store) {
  const { reader } = store;
  return Promise.all([
    reader.getChainStatus('eth').then((s) => s?.balancesBlock),
    reader.getToken('eth', token).then((t) => [t?.holderCount, t?.transferCount]),
    reader.listTransfers('eth', token, 0, 10),
    reader.listHolders('eth', token, 0, 10),
    reader.getBalance('eth', token, holder),
    reader.getAddressHolding('eth', holder, token),
    reader.listAddressBalances('eth', holder),
    reader.listAddressTransfers('eth', holder, null, 0, 10),
    reader.listAddressTransfers('eth', holder, token, 0, 10),
  ]);
}

describe('bulk load build in steps', () => {
  test('stopped after a chunk of any step: reads as before the load, then resumed to the same tables', async () => {
    // Chunks of about 1,000 rows: every step but the last two is cut in several.
    Object.assign(bulkBuildSettings, { minChunkRows: 1_000, maxChunks: 64 });
    const rowByRowPath = join(tmp, 'row-by-row.sqlite');
    const rowByRow = await openSqliteStore({ path: rowByRowPath, logger });
    await runImport(rowByRow, false);
    await rowByRow.close();

    const wholePath = join(tmp, 'whole.sqlite');
    const whole = await openSqliteStore({ path: wholePath, logger });
    const chunks: string[] = [];
    let walPeak = 0;
    bulkBuildSettings.afterChunk = (step) => {
      chunks.push(step);
      walPeak = Math.max(walPeak, statSync(`${wholePath}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    };
    await runImport(whole);
    await whole.close();
    assertSameTables(wholePath, rowByRowPath, 'uninterrupted');
    const perStep = (step: string) => chunks.filter((s) => s === step).length;
    for (const step of ['transfers', 'addresses', 'balances'])
      assert.ok(perStep(step) >= 4, `${step}: ${perStep(step)}`);
    // Each chunk is checkpointed away: the WAL is empty after every commit.
    assert.equal(walPeak, 0);

    for (const [step, nth] of [
      ['transfers', 1],
      ['transfers', 3],
      ['addresses', 2],
      ['balances', 1],
      ['balances', 3],
      ['holder index', 1],
    ] as const) {
      const what = `stopped after ${step} chunk ${nth}`;
      const path = join(tmp, `stopped-${step.replace(' ', '-')}-${nth}.sqlite`);
      const store = await openSqliteStore({ path, logger });
      const reader = await openSqliteStore({ path, logger });
      let seen = 0;
      let during: ReturnType<typeof readsOf> | undefined;
      bulkBuildSettings.afterChunk = (done) => {
        if (done === step && ++seen === nth) {
          // Read by another connection at this moment: the calls run synchronously here.
          during = readsOf(reader);
          throw new Error('stop');
        }
      };
      await assert.rejects(runImport(store), /stop/, what);
      const answers = await during!;
      assert.ok(answers[0] !== undefined, `${what}: balancesBlock kept`);
      // As the tables held the chain before the load: nothing.
      assert.deepEqual(
        answers.slice(1),
        [[0, 0], [], [], 0n, { balance: 0n, transferCount: 0 }, [], [], []],
        what,
      );
      // The rows are there, but not read: the transfers step committed its first chunks.
      const raw = new Database(path, { readonly: true });
      assert.ok((raw.prepare('SELECT count(*) FROM transfers').pluck().get() as number) > 0, what);
      assert.equal(raw.prepare('SELECT count(*) FROM bulk_build').pluck().get(), 1, what);
      raw.close();
      await reader.close();
      await store.close();

      bulkBuildSettings.afterChunk = null;
      const resumed = await openSqliteStore({ path, logger });
      await runImport(resumed);
      await resumed.close();
      assertSameTables(path, wholePath, what);
    }
  });
});
