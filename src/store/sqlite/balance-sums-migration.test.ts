/**
 * Migration 0011_balance_sums on SQLite: a version-10 store with data is upgraded in place on open,
 * every token's running sum filled from its stored balances (including a sum SQLite's `sum()`
 * cannot make), with progress logged, and kept by the batches after it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import { silentLogger } from '../../internal/logger.js';
import { balanceSumHistory, balanceSumsOfHistory, SUM_TOKENS } from '../testing/balance-sum-history.js';
import { batch, holder, moves } from '../testing/batches.js';
import { MIGRATIONS } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import { previousVersionStore } from './testing/previous-version.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenquery-balance-sums-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a version-10 SQLite store gains the running sums in place, each equal to its stored balances', async () => {
  const builtPath = join(dir, 'built.sqlite');
  const path = join(dir, 'v9.sqlite');
  const store = await openSqliteStore({ path: builtPath, logger: silentLogger() });
  for (const b of balanceSumHistory()) await store.writer.applyBatch(b);
  // Kept by the batches on this version: the reference the fill must reach.
  for (const [i, token] of SUM_TOKENS.entries()) {
    assert.equal(await store.reader.getBalanceSum('eth', token), balanceSumsOfHistory()[i]);
  }
  await store.close();

  // The same data as version 10 kept it: its schema (no sums), filled from the store built now.
  const version = MIGRATIONS.findIndex((m) => m.name === '0011_balance_sums');
  assert.equal(version, 10);
  previousVersionStore(path, builtPath, MIGRATIONS.slice(0, version));
  const old = new Database(path);
  assert.equal(
    old.prepare("SELECT count(*) FROM pragma_table_info('tokens') WHERE name = 'balance_sum'").pluck().get(),
    0,
  );
  old.close();

  const lines: { migration?: string; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const upgraded = await openSqliteStore({ path, logger });
  try {
    for (const [i, token] of SUM_TOKENS.entries()) {
      assert.equal(await upgraded.reader.getBalanceSum('eth', token), balanceSumsOfHistory()[i], token);
    }
    assert.ok(
      lines.some(
        (l) => l.migration === '0011_balance_sums' && /summing the stored balances of 5 tokens/.test(l.msg),
      ),
      JSON.stringify(lines),
    );
    // The batches after the upgrade add to the filled sums.
    await upgraded.writer.applyBatch(
      batch({
        from: 4,
        to: 4,
        transfers: moves(SUM_TOKENS[0]!, 4, [[holder(2), '0x0000000000000000000000000000000000000000', 3n]]),
      }),
    );
    assert.equal(await upgraded.reader.getBalanceSum('eth', SUM_TOKENS[0]!), 7n);
  } finally {
    await upgraded.close();
  }
  const check = new Database(path, { readonly: true });
  assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
  check.close();
});
