/**
 * Migration 0009_not_exact on SQLite: a version-8 store with data is upgraded in place on open,
 * its tokens exact (no mark), and the marks work after it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { silentLogger } from '../../internal/logger.js';
import { batch, holder, moves, tokenAddress } from '../testing/batches.js';
import { MIGRATIONS } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import { previousVersionStore } from './testing/previous-version.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenquery-not-exact-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a version-8 SQLite store gains the not-exact mark in place, every token exact', async () => {
  const builtPath = join(dir, 'built.sqlite');
  const path = join(dir, 'v8.sqlite');
  const token = tokenAddress(1);
  const store = await openSqliteStore({ path: builtPath, logger: silentLogger() });
  await store.writer.applyBatch(
    batch({ from: 1, to: 1, transfers: moves(token, 1, [[holder(1), holder(2), 5n]]) }),
  );
  await store.close();

  // The same data as version 8 kept it: its schema, filled from the store built now.
  const version = MIGRATIONS.findIndex((m) => m.name === '0009_not_exact');
  assert.equal(version, 8);
  previousVersionStore(path, builtPath, MIGRATIONS.slice(0, version));

  const upgraded = await openSqliteStore({ path, logger: silentLogger() });
  try {
    assert.equal(await upgraded.reader.getBalance('eth', token, holder(2)), 5n);
    assert.equal(await upgraded.reader.getNotExact('eth', token), null);
    assert.deepEqual(await upgraded.reader.countNotExact(), {});
    const mark = { atBlock: 1, supplyDrift: 4n, sampled: 2, differing: 1 };
    await upgraded.writer.setExactness('eth', [{ address: token, mark }]);
    assert.deepEqual(await upgraded.reader.getNotExact('eth', token), mark);
  } finally {
    await upgraded.close();
  }
  const check = new Database(path, { readonly: true });
  assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
  check.close();
});
