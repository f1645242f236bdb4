/**
 * PostgreSQL bulk loads (bulk-load.ts) beyond the contract suite's cases: a version-12 store gains
 * the staging table in place (migration `0013_bulk_load`), and two chains loading at once each
 * build from their own staged rows only, to the same rows as the same batches written row by row.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { silentLogger } from '../../internal/logger.js';
import { seededRandom } from '../../internal/random.js';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import type { IndexBatch, Store } from '../types.js';
import { MIGRATIONS, MIGRATIONS_TABLE } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';
import { requireTestServer } from './testing/require-server.js';
import { createTestDatabase, querySql, type TestDatabase, withSchema } from './testing/test-database.js';

if (await requireTestServer()) {
  const database: TestDatabase = await createTestDatabase();
  after(() => database.drop());
  let schemas = 0;
  async function freshUrl(): Promise<string> {
    const schema = `s${++schemas}`;
    await querySql(database.url, `CREATE SCHEMA ${schema}`);
    return withSchema(database.url, schema);
  }
  const open = (url: string): Promise<Store> =>
    openPostgresStore({ url, logger: silentLogger(), maxConnections: 2 });
  const count = async (url: string, table: string): Promise<number> =>
    Number((await querySql<{ n: string }>(url, `SELECT count(*) AS n FROM ${table}`))[0]!.n);

  /** `steps` batches of random transfers of `chain` (some past 2^53, mints, self-transfers), the last without the flag. */
  function loadOf(chain: string, seed: number, steps: number): IndexBatch[] {
    const next = seededRandom(seed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const parties = [ZERO_ADDRESS, ...Array.from({ length: 12 }, (_, i) => holder(i + 1))];
    const tokens = [tokenAddress(1), tokenAddress(2), tokenAddress(3)];
    return Array.from({ length: steps }, (_, step) => {
      const from = step * 3 + 1;
      const transfers = [0, 1, 2].flatMap((k) =>
        moves(
          pick(tokens),
          from + k,
          Array.from({ length: 4 }, () => {
            const sender = pick(parties);
            return [
              sender,
              next() < 0.1 ? sender : pick(parties),
              BigInt(Math.floor(next() * 1e6)) << 40n,
            ] as const;
          }),
        ),
      );
      const last = step === steps - 1;
      return {
        ...batch({ chain, from, to: from + 2, transfers }),
        continues: step === 0 ? null : from - 1,
        ...(last ? {} : { deferBalances: true, bulkLoad: true }),
      };
    });
  }

  /** The rows of the history tables of `url`'s store, token ids replaced by chain and address, as text. */
  async function historyOf(url: string): Promise<string[]> {
    const out: string[] = [];
    for (const table of ['transfers', 'address_transfers', 'balances']) {
      const rows = await querySql<{ r: string }>(
        url,
        `SELECT ((to_jsonb(t) - 'token_id') || jsonb_build_object('chain', k.chain, 'token', k.address))::text AS r
         FROM ${table} AS t JOIN tokens AS k ON k.id = t.token_id ORDER BY 1`,
      );
      out.push(...rows.map((row) => `${table} ${row.r}`));
    }
    const tokens = await querySql<{ r: string }>(
      url,
      `SELECT (to_jsonb(t) - 'id')::text AS r FROM tokens AS t ORDER BY 1`,
    );
    return [...out, ...tokens.map((row) => `tokens ${row.r}`)];
  }

  test('two chains loading at once: each build takes its own staged rows, as row by row would write them', async () => {
    const eth = loadOf('eth', 1, 6);
    const bsc = loadOf('bsc', 2, 6);
    const rowByRow = await freshUrl();
    const reference = await open(rowByRow);
    for (const b of [...eth, ...bsc]) await reference.writer.applyBatch({ ...b, bulkLoad: false });
    await reference.close();

    const url = await freshUrl();
    const store = await open(url);
    try {
      // Interleaved: every batch but each chain's last, then eth's last (eth builds), then bsc's.
      for (let i = 0; i < 5; i++) {
        await store.writer.applyBatch(eth[i]!);
        await store.writer.applyBatch(bsc[i]!);
      }
      assert.equal(await count(url, 'bulk_transfers_eth'), 5 * 12);
      assert.equal(await count(url, 'bulk_transfers_bsc'), 5 * 12);
      await store.writer.applyBatch(eth[5]!);
      assert.equal(await count(url, 'bulk_transfers_eth'), 0);
      assert.equal(await count(url, 'bulk_transfers_bsc'), 5 * 12);
      assert.equal((await store.reader.getChainStatus('bsc'))?.balancesBlock, 0);
      assert.equal((await store.reader.getChainStatus('eth'))?.balancesBlock, undefined);
      await store.writer.applyBatch(bsc[5]!);
      assert.equal(await count(url, 'bulk_transfers'), 0);
      assert.deepEqual(await historyOf(url), await historyOf(rowByRow));
    } finally {
      await store.close();
    }
  });

  test('a chain that holds transfers takes a bulk batch row by row', async () => {
    const url = await freshUrl();
    const store = await open(url);
    try {
      const [first, second] = loadOf('eth', 3, 2);
      await store.writer.applyBatch({ ...first!, bulkLoad: false });
      await store.writer.applyBatch({ ...second!, bulkLoad: true });
      assert.equal(await count(url, 'bulk_transfers'), 0);
      assert.equal(await count(url, 'transfers'), 24);
      assert.equal((await store.reader.getChainStatus('eth'))?.balancesBlock, undefined);
    } finally {
      await store.close();
    }
  });

  test('a version-12 store gains the staging table in place, a partition for each chain it holds', async () => {
    const url = await freshUrl();
    const built = await open(url);
    for (const b of loadOf('eth', 4, 2)) await built.writer.applyBatch({ ...b, bulkLoad: false });
    await built.close();
    // Version 12 is this schema without what 0013 adds.
    await querySql(
      url,
      `DROP TABLE bulk_transfers; ALTER TABLE chains DROP COLUMN bulk_block;
       DELETE FROM ${MIGRATIONS_TABLE} WHERE version = 13`,
    );
    assert.equal(MIGRATIONS[12]?.name, '0013_bulk_load');
    const before = await historyOf(url);

    const upgraded = await open(url);
    try {
      const applied = await querySql<{ n: number }>(url, `SELECT max(version) AS n FROM ${MIGRATIONS_TABLE}`);
      assert.equal(applied[0]?.n, MIGRATIONS.length);
      const partitions = await querySql<{ name: string }>(
        url,
        `SELECT c.relname AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'bulk_transfers'::regclass`,
      );
      assert.deepEqual(
        partitions.map((p) => p.name),
        ['bulk_transfers_eth'],
      );
      assert.deepEqual(await historyOf(url), before);
      // A new chain loads in bulk on the upgraded store.
      for (const b of loadOf('bsc', 5, 3)) await upgraded.writer.applyBatch(b);
      assert.equal(await count(url, 'bulk_transfers'), 0);
      assert.equal((await upgraded.reader.getToken('bsc', tokenAddress(1)))?.chain, 'bsc');
    } finally {
      await upgraded.close();
    }
  });
}
