import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, querySql, type TestDatabase } from './testing/test-database.js';
import { createWriteTransactions } from './transactions.js';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

describe('write transactions', () => {
  // Found by the postgres-restart scenario: a restart cut a connection while a batch's
  // transaction held it between two queries; the 'error' it emitted had no listener and ended
  // the indexer thread for good.
  test('a connection cut between two queries fails the transaction, not the process', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on('error', () => {});
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const { transaction } = createWriteTransactions(pool);
      await assert.rejects(
        transaction(async (client) => {
          const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
          await querySql(db.url, 'SELECT pg_terminate_backend($1)', [pid]);
          // No query in flight while the server's goodbye and the socket's end arrive.
          await new Promise((resolve) => setTimeout(resolve, 300));
          await client.query('SELECT 1');
        }),
      );
      assert.deepEqual(uncaught.map(String), []);
      // The broken connection was discarded: the pool works on.
      assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
      assert.equal(
        await transaction(async (client) => (await client.query('SELECT 2 AS two')).rows[0].two),
        2,
      );
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      await pool.end();
    }
  });
});
