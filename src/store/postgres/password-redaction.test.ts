/**
 * No command shows a database password, whatever goes wrong with the connection: an unreachable
 * server, a missing database or role, a malformed URL, a bad read replica.
 */
import { after, describe, test } from 'node:test';
import { assertOneLineError, freePort, removeTempDirs, runCli } from '../../cli/testing/cli-process.js';
import { requireTestServer } from './testing/require-server.js';
import { createTestDatabase, TEST_POSTGRES_URL } from './testing/test-database.js';

const SECRET = 'S3cretPw';

/** The test server's URL with another user, password and database. */
function url(database: string, user = 'postgres', password = SECRET): string {
  const parsed = new URL(TEST_POSTGRES_URL);
  parsed.username = user;
  parsed.password = password;
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

if (await requireTestServer()) {
  after(removeTempDirs);

  describe('database passwords', () => {
    test('are never shown when the database cannot be used', async () => {
      const closed = `postgres://tq:${SECRET}@127.0.0.1:${await freePort()}/tq`;
      // A primary that works, for the case of a read replica that does not.
      const primary = await createTestDatabase();
      after(() => primary.drop());
      // `serve` refuses a primary without tokenquery's tables: create them.
      await runCli(['keys', 'list', '--db', primary.url]);
      const primaryUrl = new URL(primary.url);
      primaryUrl.password = SECRET;
      const cases: [string[], RegExp][] = [
        [
          ['keys', 'list', '--db', closed],
          /^tokenquery: cannot connect to PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/tq: /,
        ],
        [
          ['serve', '--db', url('tq_no_such_database'), '--port', '0'],
          /database "tq_no_such_database" does not exist/,
        ],
        [
          ['keys', 'create', '--db', url('postgres', 'tq_no_such_role')],
          /role "tq_no_such_role" does not exist/,
        ],
        [['keys', 'list', '--db', `postgres://tq:${SECRET}@[::1/tq`], /cannot connect to PostgreSQL/],
        [['keys', 'list', '--db', `postgres://tq:S3c@ret/${SECRET}@127.0.0.1/tq`], /percent-encode/],
        [
          [
            'serve',
            '--db',
            primaryUrl.toString(),
            '--db-read',
            closed,
            '--port',
            '0',
            '--log-level',
            'error',
          ],
          /cannot connect to PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/tq/,
        ],
        [['serve', '--db', 'data.sqlite', '--db-read', closed], /--db-read needs --db to be the primary/],
      ];
      const results = await Promise.all(cases.map(([args]) => runCli(args)));
      for (const [i, result] of results.entries()) {
        assertOneLineError(result, cases[i]![1], [SECRET, 'S3c@ret']);
      }
    });
  });
}
