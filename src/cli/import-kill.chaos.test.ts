/**
 * `tokenquery import` killed (SIGKILL) while it loads the real 14,323-row export in bulk, at
 * several points of the load and once as the store starts building it, then run again with the
 * same command until it finishes: the store holds exactly what an import that was never
 * interrupted holds, every table compared (SYNTHETIC node for what the export lacks). On each
 * backend of `TOKENQUERY_CHAOS_BACKENDS` (SQLite by default; PostgreSQL: its tables' fingerprints
 * and its catalog, which the build's swap of partitions must leave as it was).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type FixtureNode, startFixtureNode } from '../chains/evm/testing/fixture-node.js';
import {
  CROSSCHECK_EXPORT,
  readCrosscheckExport,
  syntheticNodeFor,
} from '../importer/testing/export-node.js';
import { dumpCatalog, dumpTables as dumpPostgresTables } from '../importer/testing/postgres-tables.js';
import { chaosBackends } from '../indexer/testing/chaos.js';
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

  const dir = tempDir();
  const backends = chaosBackends(dir);
  after(async () => {
    for (const backend of backends) await backend.cleanup();
  });

  /** Every table of the store at `db` (PostgreSQL: fingerprints and the catalog), comparable. */
  async function dump(db: string): Promise<unknown> {
    if (!db.startsWith('postgres')) return [...dumpTables(db)];
    return { tables: await dumpPostgresTables(db), catalog: await dumpCatalog(db) };
  }

  /** The checkpoint of eth in the store at `db` (0 before it has one), read while the import runs. */
  function checkpointReader(db: string): { read(): Promise<number>; close(): Promise<void> } {
    if (!db.startsWith('postgres')) {
      return {
        read: async () => {
          try {
            const read = new Database(db, { readonly: true, fileMustExist: true });
            try {
              return (
                (read
                  .prepare("SELECT indexed_block FROM chains WHERE chain = 'eth'")
                  .pluck()
                  .get() as number) ?? 0
              );
            } finally {
              read.close();
            }
          } catch {
            return 0; // not created yet, or busy
          }
        },
        close: async () => {},
      };
    }
    const client = new pg.Client({ connectionString: db });
    const connected = client.connect();
    return {
      read: async () => {
        await connected;
        try {
          const result = await client.query("SELECT indexed_block FROM chains WHERE chain = 'eth'");
          return Number(result.rows[0]?.indexed_block ?? 0);
        } catch {
          return 0; // not migrated yet
        }
      },
      close: () => client.end(),
    };
  }

  for (const backend of backends) {
    test(`${backend.name}: killed at any point, the same command resumes to the same tables without loss or duplicates`, async () => {
      const reference = await backend.freshLocation('reference');
      const clean = await runCli(importArgs(reference), { timeoutMs: 120_000 });
      assert.equal(clean.code, 0, clean.stderr);
      const expected = await dump(reference);

      const db = await backend.freshLocation('killed');
      const checkpoint = checkpointReader(db);
      // Killed once the checkpoint has passed a block (batches appended), then as the build starts.
      const kills: ((stderr: string) => Promise<boolean>)[] = [
        async () => (await checkpoint.read()) >= 15_320_520,
        async () => (await checkpoint.read()) >= 15_320_560,
        async (err) => err.includes('building the bulk load'),
      ];
      let killed = 0;
      try {
        for (const when of kills) {
          const run = spawnCli([...importArgs(db), '--log-level', 'info']);
          while (run.child.exitCode === null && !(await when(run.stderr()))) {
            await new Promise((r) => setTimeout(r, 5));
          }
          if (run.child.exitCode === null) {
            run.child.kill('SIGKILL');
            killed++;
          }
          await run.exited;
        }
      } finally {
        await checkpoint.close();
      }
      assert.ok(killed >= 2, `only ${killed} of the runs were killed before they finished`);
      const resumed = await runCli(importArgs(db), { timeoutMs: 120_000 });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(await dump(db), expected);
    });
  }
});
