// The growth benchmark's PostgreSQL stores (issue #17 asks for the same curve on PostgreSQL): the
// same synthetic export imported by the same `tokenquery import`, into a database of its own on the
// server of TOKENQUERY_TEST_POSTGRES. The large store is kept as a database named after its shape
// (`tqbench_growth_…`, never `tq_test_…`, which the tests sweep), its facts in the cache directory
// beside the SQLite stores'; `npm run bench -- clean` drops those databases too.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import pg from 'pg';
import { MIGRATIONS } from '../src/store/postgres/migrations.js';
import {
  withAdminClient as admin,
  createTestDatabase,
  querySql,
  TEST_POSTGRES_URL,
  withDatabase,
} from '../src/store/postgres/testing/test-database.js';
import {
  type BuiltStore,
  buildStore,
  cacheDirFor,
  checkDiskFor,
  type StoreFacts,
  type StoreShape,
} from './growth-store.js';

const DATABASE_PREFIX = 'tqbench_growth_';

/**
 * A PostgreSQL store's facts: rows, and bytes per table (heap, TOAST and maps) and per index, a
 * partitioned one's summed over its partitions under its own name.
 */
async function postgresFacts(url: string): Promise<Omit<StoreFacts, 'importSeconds' | 'builtAt'>> {
  await querySql(url, 'VACUUM ANALYZE');
  const objects = await querySql<{ name: string; bytes: string }>(
    url,
    `SELECT coalesce(parent.relname, c.relname) AS name,
       sum(CASE c.relkind WHEN 'r' THEN pg_table_size(c.oid) ELSE pg_relation_size(c.oid) END) AS bytes
     FROM pg_class AS c
     JOIN pg_namespace AS n ON n.oid = c.relnamespace AND n.nspname = current_schema()
     LEFT JOIN pg_inherits AS i ON i.inhrelid = c.oid
     LEFT JOIN pg_class AS parent ON parent.oid = i.inhparent
     WHERE c.relkind IN ('r', 'i')
     GROUP BY 1 ORDER BY 2 DESC`,
  );
  const [counts] = await querySql<{ transfers: string; balances: string }>(
    url,
    `SELECT (SELECT transfer_count FROM chains WHERE chain = 'eth') AS transfers,
       (SELECT count(*) FROM balances) AS balances`,
  );
  return {
    transfers: Number(counts!.transfers),
    balanceRows: Number(counts!.balances),
    objects: objects.map((o) => ({ name: o.name, bytes: Number(o.bytes) })),
  };
}

/** The database's size, as it occupies the server's disk. */
export async function postgresBytes(url: string): Promise<number> {
  const [row] = await querySql<{ bytes: string }>(
    url,
    'SELECT pg_database_size(current_database()) AS bytes',
  );
  return Number(row!.bytes);
}

/** The cached PostgreSQL store of this shape, imported first when missing. */
export async function cachedPostgresStore(
  shape: StoreShape,
  log: (line: string) => void,
): Promise<BuiltStore> {
  const dir = `${cacheDirFor(shape)}-pg${MIGRATIONS.length}`;
  const name = `${DATABASE_PREFIX}${createHash('sha256').update(basename(dir)).digest('hex').slice(0, 16)}`;
  const url = withDatabase(TEST_POSTGRES_URL, name);
  const factsPath = join(dir, 'facts.json');
  const exists = await admin(
    async (client) =>
      (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount !== 0,
  );
  if (exists && existsSync(factsPath)) {
    const facts = JSON.parse(readFileSync(factsPath, 'utf8')) as StoreFacts;
    if (facts.transfers === shape.transfers) return { path: url, facts, reused: true, factsPath };
  }
  rmSync(dir, { recursive: true, force: true });
  checkDiskFor(shape.transfers);
  await admin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  });
  try {
    const facts = await buildStore(url, shape, log, postgresFacts);
    mkdirSync(dir, { recursive: true });
    writeFileSync(factsPath, `${JSON.stringify(facts, null, 2)}\n`);
    return { path: url, facts, reused: false, factsPath };
  } catch (error) {
    await admin((client) =>
      client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
    );
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A PostgreSQL store of `shape` in a new database, dropped by `drop` (the baseline store). */
export async function freshPostgresStore(
  shape: StoreShape,
  log: (line: string) => void,
): Promise<{ store: BuiltStore; drop: () => Promise<void> }> {
  const database = await createTestDatabase();
  try {
    const facts = await buildStore(database.url, shape, log, postgresFacts);
    return { store: { path: database.url, facts, reused: false }, drop: database.drop };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Drops every cached growth database; how many there were (0 when the server is unreachable). */
export async function dropCachedPostgresStores(): Promise<number> {
  try {
    return await admin(async (client) => {
      const names = await client.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
        [DATABASE_PREFIX],
      );
      for (const { datname } of names.rows)
        await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
      return names.rows.length;
    });
  } catch {
    return 0;
  }
}
