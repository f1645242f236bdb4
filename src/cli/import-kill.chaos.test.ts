/**
 * `tokenquery import` killed (SIGKILL) while it loads the real 14,323-row export in bulk, at
 * several points of the load and once as the store starts building it, then run again with the
 * same command until it finishes: the store holds exactly what an import that was never
 * interrupted holds, every table compared (SYNTHETIC node for what the export lacks).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { type FixtureNode, startFixtureNode } from '../chains/evm/testing/fixture-node.js';
import {
  CROSSCHECK_EXPORT,
  readCrosscheckExport,
  syntheticNodeFor,
} from '../importer/testing/export-node.js';
import { dumpTables } from '../store/sqlite/testing/table-dump.js';
import { removeTempDirs, runCli, spawnCli, tempDir } from './testing/cli-process.js';

after(removeTempDirs);

describe('tokenquery import killed mid-load', () => {
  const rows = readCrosscheckExport();
  const last = Math.max(...rows.map((r) => Number(r.block_number)));
  let node: FixtureNode;
  before(async () => {
    node = await startFixtureNode(syntheticNodeFor(rows, { head: last + 100 }).node);
  });
  after(() => node.close());

  const importArgs = (db: string) => [
    'import',
    CROSSCHECK_EXPORT,
    '--db',
    db,
    '--rpc',
    `eth=${node.url}`,
    '--batch-transfers',
    '500',
    '--sorted',
  ];

  test('killed at any point, the same command resumes to the same tables without loss or duplicates', async () => {
    const dir = tempDir();
    const reference = join(dir, 'reference.sqlite');
    const clean = await runCli(importArgs(reference), { timeoutMs: 120_000 });
    assert.equal(clean.code, 0, clean.stderr);
    const expected = dumpTables(reference);

    const db = join(dir, 'killed.sqlite');
    // Killed once the checkpoint has passed a block (batches appended), then as the build starts.
    const checkpoint = (): number => {
      try {
        const read = new Database(db, { readonly: true, fileMustExist: true });
        try {
          return (
            (read.prepare("SELECT indexed_block FROM chains WHERE chain = 'eth'").pluck().get() as number) ??
            0
          );
        } finally {
          read.close();
        }
      } catch {
        return 0; // not created yet, or busy
      }
    };
    const kills: ((stderr: string) => boolean)[] = [
      () => checkpoint() >= 15_320_520,
      () => checkpoint() >= 15_320_560,
      (err) => err.includes('building the bulk load'),
    ];
    let killed = 0;
    for (const when of kills) {
      const run = spawnCli([...importArgs(db), '--log-level', 'info']);
      while (run.child.exitCode === null && !when(run.stderr())) await new Promise((r) => setTimeout(r, 5));
      if (run.child.exitCode === null) {
        run.child.kill('SIGKILL');
        killed++;
      }
      await run.exited;
    }
    assert.ok(killed >= 2, `only ${killed} of the runs were killed before they finished`);
    const resumed = await runCli(importArgs(db), { timeoutMs: 120_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    const actual = dumpTables(db);
    for (const [table, expectedRows] of expected) {
      assert.deepEqual(actual.get(table), expectedRows, `table ${table}`);
    }
  });
});
