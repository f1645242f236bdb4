import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { MAX_UINT256 } from '../../internal/amount.js';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { TokenqueryError, UserError } from '../../internal/errors.js';
import { silentLogger } from '../../internal/logger.js';
import { freePort as closedPort } from '../../internal/testing/net.js';
import { runStoreContractSuite } from '../contract/suite.js';
import { openStore } from '../open.js';
import { hash32, indexBatch, tokenMetadata, transferRecord } from '../testing/batches.js';
import type { IndexBatch, Store } from '../types.js';
import { MIGRATIONS, MIGRATIONS_TABLE, migrate } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';
import { requireTestServer } from './testing/require-server.js';
import { createTestDatabase, querySql, type TestDatabase, withSchema } from './testing/test-database.js';

const TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const HOLDER = '0x1111111111111111111111111111111111111111';
const OTHER = '0x2222222222222222222222222222222222222222';

function mintBatch(from: number, to: number, value = 5n): IndexBatch {
  return indexBatch({
    fromBlock: from,
    toBlock: to,
    toBlockHash: hash32(from),
    transfers: [
      transferRecord({
        token: TOKEN,
        blockNumber: from,
        txHash: `0x${'ab'.repeat(32)}`,
        to: HOLDER,
        value,
        time: 1_700_000_000,
      }),
    ],
    tokens: [tokenMetadata(TOKEN, { name: 'Token', symbol: 'TOK' })],
    blocks: [{ number: to, hash: hash32(to), parentHash: hash32(0) }],
  });
}

if (await requireTestServer()) {
  const database: TestDatabase = await createTestDatabase();
  after(() => database.drop());

  let schemas = 0;
  /** A fresh schema in this file's database; its connection string puts the store there. */
  async function freshSchema(): Promise<{ url: string; drop: () => Promise<void> }> {
    const schema = `case_${++schemas}`;
    await querySql(database.url, `CREATE SCHEMA ${schema}`);
    return {
      url: withSchema(database.url, schema),
      drop: async () => {
        await querySql(database.url, `DROP SCHEMA ${schema} CASCADE`);
      },
    };
  }

  async function openIn(url: string): Promise<Store> {
    return openPostgresStore({ url, logger: silentLogger(), maxConnections: 4 });
  }

  runStoreContractSuite('postgres', async () => {
    const { url, drop } = await freshSchema();
    const opened: Store[] = [];
    const openOne = async (): Promise<Store> => {
      const store = await openIn(url);
      opened.push(store);
      return store;
    };
    try {
      return {
        store: await openOne(),
        reopen: openOne,
        cleanup: async () => {
          for (const store of opened) await store.close();
          await drop();
        },
      };
    } catch (error) {
      await drop();
      throw error;
    }
  });

  /** Runs `fn` with a store in a fresh schema, then closes it and drops the schema. */
  async function withStore(fn: (store: Store, url: string) => Promise<void>): Promise<void> {
    const { url, drop } = await freshSchema();
    const store = await openIn(url);
    try {
      await fn(store, url);
    } finally {
      await store.close();
      await drop();
    }
  }

  /** Rows of every table, to show that nothing at all changed. */
  async function tableCounts(url: string): Promise<Record<string, number>> {
    const tables = ['chains', 'tokens', 'transfers', 'balances', 'block_refs', 'recent_block_tokens'];
    const counts: Record<string, number> = {};
    for (const table of tables) {
      const [row] = await querySql<{ n: string }>(url, `SELECT count(*) AS n FROM ${table}`);
      counts[table] = Number(row!.n);
    }
    return counts;
  }

  describe('postgres store', () => {
    test('several processes opening one new database at once migrate it exactly once', async () => {
      const fresh = await createTestDatabase();
      const stores: Store[] = [];
      try {
        const opening = Array.from({ length: 6 }, () => openIn(fresh.url));
        const results = await Promise.allSettled(opening);
        for (const result of results) if (result.status === 'fulfilled') stores.push(result.value);
        for (const result of results) if (result.status === 'rejected') throw result.reason;
        const applied = await querySql<{ version: number; name: string }>(
          fresh.url,
          `SELECT version, name FROM ${MIGRATIONS_TABLE} ORDER BY version`,
        );
        assert.deepEqual(
          applied.map((r) => [r.version, r.name]),
          MIGRATIONS.map((m, i) => [i + 1, m.name]),
        );
        // Every handle works on the one schema.
        await Promise.all(stores.map((store, i) => store.writer.setChainStatus(`c${i}`, { head: i })));
        assert.equal((await stores[0]!.reader.listChainStatuses()).length, stores.length);
        // A later open finds the schema current.
        stores.push(await openIn(fresh.url));
        assert.equal((await stores.at(-1)!.reader.listChainStatuses()).length, 6);
      } finally {
        for (const store of stores) await store.close();
        await fresh.drop();
      }
    });

    test('a database made by an older release is brought up to date at open', async () => {
      const { url, drop } = await freshSchema();
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await migrate(client, silentLogger(), MIGRATIONS.slice(0, 1));
        await client.end();
        const store = await openIn(url);
        await store.writer.applyBatch(mintBatch(1, 1));
        assert.equal(await store.reader.getBalance('eth', TOKEN, HOLDER), 5n);
        assert.deepEqual(await store.neo.listNeoContracts('neo', 0, 10), []);
        await store.close();
        const applied = await querySql<{ version: number }>(url, `SELECT version FROM ${MIGRATIONS_TABLE}`);
        assert.deepEqual(
          applied.map((r) => r.version).sort((a, b) => a - b),
          MIGRATIONS.map((_, i) => i + 1),
        );
      } finally {
        await client.end().catch(() => {});
        await drop();
      }
    });

    test('a schema newer than this tokenquery is refused', async () => {
      const { url, drop } = await freshSchema();
      try {
        await (await openIn(url)).close();
        await querySql(url, `INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, 'future')`, [
          MIGRATIONS.length + 1,
        ]);
        await assert.rejects(openIn(url), /newer than this tokenquery understands/);
      } finally {
        await drop();
      }
    });

    test('uint256 values and balances beyond it are exact, stored as numeric', () =>
      withStore(async (store, url) => {
        const batch = mintBatch(1, 1, MAX_UINT256);
        // A hostile token can mint 2^256 − 1 to one holder twice: the balance leaves uint256.
        batch.transfers.push({ ...batch.transfers[0]!, logIndex: 1 });
        await store.writer.applyBatch(batch);
        assert.equal(await store.reader.getBalance('eth', TOKEN, HOLDER), 2n * MAX_UINT256);
        assert.equal(await store.reader.getBalance('eth', TOKEN, ZERO_ADDRESS), -2n * MAX_UINT256);
        const listed = await store.reader.listTransfers('eth', TOKEN, 0, 10);
        assert.deepEqual(
          listed.map((t) => t.value),
          [MAX_UINT256, MAX_UINT256],
        );
        await store.writer.updateSupplies('eth', [
          { address: TOKEN, totalSupply: MAX_UINT256, cap: MAX_UINT256, burnedBalance: 0n, atBlock: 1 },
        ]);
        assert.equal((await store.reader.getToken('eth', TOKEN))?.totalSupply, MAX_UINT256);
        const raw = await querySql<{ value: string; type: string }>(
          url,
          'SELECT value::text AS value, pg_typeof(value)::text AS type FROM transfers LIMIT 1',
        );
        assert.deepEqual(raw, [{ value: MAX_UINT256.toString(), type: 'numeric' }]);
      }));

    test('refreshStatistics analyzes the chain tables (after a bulk load the planner has no statistics)', () =>
      withStore(async (store, url) => {
        await store.writer.applyBatch(mintBatch(1, 1));
        // ANALYZE sets pg_class.reltuples at once (-1: never analyzed; 0: analyzed while empty).
        const estimates = async () =>
          Object.fromEntries(
            (
              await querySql<{ relname: string; reltuples: number }>(
                url,
                `SELECT relname, reltuples FROM pg_class
                 WHERE relnamespace = current_schema()::regnamespace AND relname IN
                   ('tokens', 'transfers', 'balances', 'balance_changes', 'address_transfers', 'seed_balances')`,
              )
            ).map((r) => [r.relname, Number(r.reltuples)]),
          );
        const before = await estimates();
        assert.equal(before.transfers, -1);
        await store.writer.refreshStatistics();
        const after = await estimates();
        for (const table of ['tokens', 'transfers', 'balances', 'address_transfers'])
          assert.ok(after[table]! > 0, `${table}: ${after[table]}`);
        for (const table of ['balance_changes', 'seed_balances']) assert.equal(after[table], 0, table);
      }));

    test('a batch that fails at its last statement leaves nothing behind', () =>
      withStore(async (store, url) => {
        await store.writer.applyBatch(mintBatch(1, 1));
        const before = await tableCounts(url);
        const statusBefore = await store.reader.getChainStatus('eth');
        const bad = mintBatch(2, 2, 7n);
        bad.transfers.push({ ...bad.transfers[0]!, token: OTHER, logIndex: 1, to: OTHER });
        bad.tokens.push({ address: OTHER, name: 'Other', symbol: 'OTH', decimals: 0 });
        bad.pruneBlocksBelow = 2;
        // Tokens, transfers, balances, counters and block refs are written before the checkpoint;
        // a head outside bigint then fails the very last statement.
        bad.head = 1e19;
        await assert.rejects(store.writer.applyBatch(bad));
        assert.deepEqual(await tableCounts(url), before);
        assert.deepEqual(await store.reader.getChainStatus('eth'), statusBefore);
        assert.equal(await store.reader.getToken('eth', OTHER), null);
        assert.equal(await store.reader.getBalance('eth', TOKEN, HOLDER), 5n);
        assert.equal((await store.reader.getToken('eth', TOKEN))?.transferCount, 1);
        assert.equal((await store.reader.listTokens('eth', 0, 10)).total, 1);
        // The same batch with a sane head is then accepted.
        await store.writer.applyBatch({ ...bad, head: 10 });
        assert.equal(await store.reader.getBalance('eth', TOKEN, HOLDER), 12n);
        assert.equal((await store.reader.listTokens('eth', 0, 10)).total, 2);
      }));

    test('a batch that fails halfway (a duplicate transfer) leaves nothing behind', () =>
      withStore(async (store, url) => {
        await store.writer.applyBatch(mintBatch(1, 1));
        const before = await tableCounts(url);
        const bad = mintBatch(2, 2, 7n);
        bad.transfers.push({ ...bad.transfers[0]!, token: OTHER });
        bad.transfers.push({ ...bad.transfers[0]!, token: OTHER });
        bad.tokens.push({ address: OTHER, name: 'Other', symbol: 'OTH', decimals: 0 });
        await assert.rejects(
          store.writer.applyBatch(bad),
          /duplicate key value violates unique constraint "transfers_eth_pkey"/,
        );
        assert.deepEqual(await tableCounts(url), before);
        assert.equal((await store.writer.getCheckpoint('eth'))?.block, 1);
      }));

    test('two writers racing for the same blocks: exactly one wins', () =>
      withStore(async (store, url) => {
        const second = await openIn(url);
        try {
          await store.writer.applyBatch(mintBatch(1, 1));
          const results = await Promise.allSettled([
            store.writer.applyBatch(mintBatch(2, 2, 10n)),
            second.writer.applyBatch(mintBatch(2, 2, 20n)),
          ]);
          assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
          const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
          assert.ok(rejected.reason instanceof TokenqueryError);
          assert.match(rejected.reason.shortMessage, /checkpoint is block 2/);
          const balance = await store.reader.getBalance('eth', TOKEN, HOLDER);
          assert.ok(balance === 15n || balance === 25n, `balance ${balance}`);
          assert.equal((await store.reader.getToken('eth', TOKEN))?.transferCount, 2);
        } finally {
          await second.close();
        }
      }));

    test('writes of one handle are seen by another; a rollback by one is exact for the other', () =>
      withStore(async (store, url) => {
        const second = await openIn(url);
        try {
          await store.writer.applyBatch(mintBatch(1, 1, 5n));
          await store.writer.applyBatch(mintBatch(2, 2, 5n));
          await second.writer.rollback('eth', 1, null);
          await second.writer.applyBatch(mintBatch(2, 2, 100n));
          await store.writer.applyBatch(mintBatch(3, 3, 1n));
          assert.equal(await store.reader.getBalance('eth', TOKEN, HOLDER), 106n);
          assert.equal((await second.reader.getToken('eth', TOKEN))?.holderCount, 1);
          await second.keys.createApiKey({ id: 'k1', hash: 'h1', label: 'x', createdAt: 1, revokedAt: null });
          assert.equal(await store.keys.revokeApiKey('k1', 5), true);
          assert.equal((await second.keys.findApiKeyByHash('h1'))?.revokedAt, 5);
        } finally {
          await second.close();
        }
      }));

    test('names with non-ASCII text, and errors with NUL, are kept (a token name loses its NULs)', () =>
      withStore(async (store) => {
        const batch = mintBatch(1, 1);
        batch.tokens = [{ address: TOKEN, name: 'Ta\u0000il 🚀 Ünï', symbol: '\u0000', decimals: 255 }];
        await store.writer.applyBatch(batch);
        const token = await store.reader.getToken('eth', TOKEN);
        // Control characters are stripped from token names and symbols (docs/api.md, "EVM token metadata").
        assert.equal(token?.name, 'Tail 🚀 Ünï');
        assert.equal(token?.symbol, '');
        assert.equal(token?.decimals, 255);
        await store.writer.setChainStatus('eth', { lastError: 'bad\u0000answer' });
        assert.equal((await store.reader.getChainStatus('eth'))?.lastError, 'bad\uFFFDanswer');
      }));

    test('addresses and hashes are stored as bytes', () =>
      withStore(async (store, url) => {
        await store.writer.applyBatch(mintBatch(1, 1));
        const [row] = await querySql<{ tx: number; from: number; to: number }>(
          url,
          'SELECT octet_length(tx_hash) AS tx, octet_length(from_addr) AS "from", octet_length(to_addr) AS "to" FROM transfers',
        );
        // The zero address starts with a zero byte, which takes the 2-byte tag (codec.ts).
        assert.deepEqual(row, { tx: 32, from: 22, to: 20 });
      }));

    test('openStore opens a postgres:// location with this backend', () =>
      withStore(async (_store, url) => {
        const opened = await openStore({ location: url, logger: silentLogger() });
        try {
          assert.equal(opened.kind, 'postgres');
          assert.deepEqual(await opened.keys.listApiKeys(), []);
        } finally {
          await opened.close();
        }
        const alias = await openStore({
          location: url.replace(/^postgres:/, 'postgresql:'),
          logger: silentLogger(),
        });
        assert.equal(alias.kind, 'postgres');
        await alias.close();
      }));

    test('an unreachable server is a one-line user error without the password', async () => {
      const port = await closedPort();
      await assert.rejects(
        openPostgresStore({ url: `postgres://tq:s3cret@127.0.0.1:${port}/nowhere`, logger: silentLogger() }),
        (error: unknown) => {
          assert.ok(error instanceof UserError);
          assert.match(
            error.shortMessage,
            new RegExp(`cannot connect to PostgreSQL at postgres://127\\.0\\.0\\.1:${port}/nowhere`),
          );
          assert.doesNotMatch(error.message, /s3cret/);
          return true;
        },
      );
    });
  });
}
