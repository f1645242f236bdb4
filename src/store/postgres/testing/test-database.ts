/**
 * Throwaway PostgreSQL databases and schemas for tests and benchmarks, on the real server named
 * by `TOKENQUERY_TEST_POSTGRES` (default: the local one CI starts). Each test file creates its
 * own database `tq_test_<host>_<pid>_<random>` and drops it at the end; databases left behind by
 * test processes of this machine that died are dropped by the next run, so nothing piles up when
 * a run is killed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { describePostgresUrl } from '../connect.js';

/** Admin connection string: a database that exists, as a role allowed to create databases. */
export const TEST_POSTGRES_URL =
  process.env.TOKENQUERY_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `tq_test_<host>_`: a server shared by several machines only sweeps this machine's leftovers. */
const PREFIX = `tq_test_${createHash('sha256').update(hostname()).digest('hex').slice(0, 6)}_`;

/** What to do when the server is unreachable: said once, in the failure of the test file. */
export function unreachableMessage(error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return [
    `PostgreSQL is not reachable at ${describePostgresUrl(TEST_POSTGRES_URL)} (${reason}).`,
    'The PostgreSQL tests need a real server. Start the local one with',
    '  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
    '(.ci/run does this), or point TOKENQUERY_TEST_POSTGRES at a server where this role may CREATE DATABASE.',
  ].join('\n');
}

/** `url` with its database replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** `url` whose connections use `schema` first (tables are created there). */
export function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/** Runs `fn` on a connection to the server's admin database (creating and dropping databases). */
export async function withAdminClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Throws {@link unreachableMessage} when the server cannot be reached. */
export async function checkTestServer(): Promise<void> {
  try {
    await withAdminClient((client) => client.query('SELECT 1'));
  } catch (error) {
    throw new Error(unreachableMessage(error), { cause: error });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Drops test databases whose creating process on this machine no longer runs. */
async function sweepOrphans(client: pg.Client): Promise<void> {
  const result = await client.query<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
    [PREFIX],
  );
  for (const { datname } of result.rows) {
    const pid = Number(datname.slice(PREFIX.length).split('_')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    await client
      .query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`)
      .catch(() => {});
  }
}

export interface TestDatabase {
  /** Connection string of the new, empty database. */
  url: string;
  name: string;
  /** Drops the database, closing any connection still open to it. */
  drop: () => Promise<void>;
}

/** Creates an empty database for one test file (or one test that needs a whole database). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${PREFIX}${process.pid}_${randomBytes(6).toString('hex')}`;
  await withAdminClient(async (client) => {
    await sweepOrphans(client);
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  });
  let dropped = false;
  return {
    url: withDatabase(TEST_POSTGRES_URL, name),
    name,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await withAdminClient((client) =>
        client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
      );
    },
  };
}

/** Runs one statement on `url` (test setup: schemas, inspection). */
export async function querySql<R extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
