/**
 * Migration 0011_balance_sums on PostgreSQL: a version-10 store with data is upgraded in place on
 * open, every token's running sum filled from its stored balances by chunks with progress lines,
 * and kept by the batches after it.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { silentLogger } from '../../internal/logger.js';
import { balanceSumHistory, balanceSumsOfHistory, SUM_TOKENS } from '../testing/balance-sum-history.js';
import { batch, holder, moves } from '../testing/batches.js';
import { fillBalanceSumsInChunks } from './balance-sum-migration.js';
import { MIGRATIONS, MIGRATIONS_TABLE, migrate } from './migrations.js';
import { openPostgresStore } from './postgres-store.js';
import { fillPreviousSchema } from './testing/previous-version.js';
import { createTestDatabase, querySql, withSchema } from './testing/test-database.js';

test('a version-10 PostgreSQL store gains the running sums in place, each equal to its stored balances', async () => {
  const database = await createTestDatabase();
  after(() => database.drop());
  await querySql(database.url, 'CREATE SCHEMA built; CREATE SCHEMA previous');
  const url = withSchema(database.url, 'previous');
  const open = (at = url) => openPostgresStore({ url: at, logger: silentLogger(), maxConnections: 2 });
  const store = await open(withSchema(database.url, 'built'));
  for (const b of balanceSumHistory()) await store.writer.applyBatch(b);
  for (const [i, token] of SUM_TOKENS.entries()) {
    assert.equal(await store.reader.getBalanceSum('eth', token), balanceSumsOfHistory()[i]);
  }
  await store.close();

  // The same data as version 10 kept it: its schema (no sums), filled from the one built now.
  const version = MIGRATIONS.findIndex((m) => m.name === '0011_balance_sums');
  assert.equal(version, 10);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const lines: { percent?: number; msg: string }[] = [];
  try {
    await fillPreviousSchema(client, MIGRATIONS.slice(0, version), 'built', 'previous');
    // The upgrade, in chunks of a few holders so that the progress shows.
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    await migrate(
      client,
      logger,
      MIGRATIONS.map((m, i) =>
        i === version
          ? { ...m, fill: (c: pg.ClientBase, l: typeof logger) => fillBalanceSumsInChunks(c, l, 2) }
          : m,
      ),
    );
  } finally {
    await client.end();
  }
  const percents = lines.flatMap((line) => (line.percent === undefined ? [] : [line.percent]));
  assert.ok(percents.length >= 3, `progress lines: ${JSON.stringify(lines)}`);
  assert.equal(percents.at(-1), 100);
  assert.deepEqual(
    percents,
    [...percents].sort((a, b) => a - b),
  );

  const upgraded = await open();
  try {
    for (const [i, token] of SUM_TOKENS.entries()) {
      assert.equal(await upgraded.reader.getBalanceSum('eth', token), balanceSumsOfHistory()[i], token);
    }
    await upgraded.writer.applyBatch(
      batch({
        from: 4,
        to: 4,
        transfers: moves(SUM_TOKENS[0]!, 4, [[holder(2), '0x0000000000000000000000000000000000000000', 3n]]),
      }),
    );
    assert.equal(await upgraded.reader.getBalanceSum('eth', SUM_TOKENS[0]!), 7n);
    const applied = await querySql<{ n: number }>(url, `SELECT max(version) AS n FROM ${MIGRATIONS_TABLE}`);
    assert.equal(applied[0]?.n, MIGRATIONS.length);
  } finally {
    await upgraded.close();
  }
});
