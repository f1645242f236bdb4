import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '../../internal/logger.js';
import { hash32, indexBatch, tokenMetadata, transferRecord } from '../testing/batches.js';
import type { IndexBatch, Store } from '../types.js';
import { DATA_VERSION_CHECK_MS, openSqliteStore } from './sqlite-store.js';

const TOKEN = `0x${'11'.repeat(20)}`;
const HOLDER = `0x${'22'.repeat(20)}`;
const ZERO = `0x${'00'.repeat(20)}`;

function batch(block: number): IndexBatch {
  return indexBatch({
    fromBlock: block,
    toBlock: block,
    transfers: [
      transferRecord({
        token: TOKEN,
        blockNumber: block,
        txHash: hash32(block),
        from: ZERO,
        to: HOLDER,
        value: 1n,
        time: 1_700_000_000 + block,
      }),
    ],
    tokens: [tokenMetadata(TOKEN, { name: 'T', symbol: 'T', decimals: 0 })],
  });
}

describe('SQLite readVersion', () => {
  let dir: string;
  let store: Store;
  let other: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tq-version-'));
    store = await openSqliteStore({ path: join(dir, 'db.sqlite'), logger: silentLogger() });
    other = await openSqliteStore({ path: join(dir, 'db.sqlite'), logger: silentLogger() });
  });
  after(async () => {
    await store.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const version = () => store.reader.readVersion!();

  test('stays the same while nothing is written, reads included', async () => {
    const v = version();
    await store.reader.getToken('eth', TOKEN);
    await store.reader.listTokens('eth', 0, 10);
    await sleep(2 * DATA_VERSION_CHECK_MS);
    await other.reader.listTransfers('eth', TOKEN, 0, 10);
    assert.equal(version(), v);
    assert.equal(version(), v);
  });

  test('moves at once after a write through the same handle', async () => {
    const v = version();
    await store.writer.applyBatch(batch(1));
    const w = version();
    assert.notEqual(w, v);
    await store.writer.setChainStatus('eth', { head: 5 });
    assert.notEqual(version(), w);
  });

  test('moves after another connection commits, within DATA_VERSION_CHECK_MS', async () => {
    const v = version();
    await other.writer.applyBatch(batch(2));
    await sleep(2 * DATA_VERSION_CHECK_MS);
    const w = version();
    assert.notEqual(w, v);
    await other.writer.updateSupplies('eth', [
      { address: TOKEN, totalSupply: 9n, cap: null, burnedBalance: null, atBlock: 2 },
    ]);
    await sleep(2 * DATA_VERSION_CHECK_MS);
    assert.notEqual(version(), w);
    // And what it promises holds: the data read now is the new data.
    assert.equal((await store.reader.getToken('eth', TOKEN))?.totalSupply, 9n);
  });

  test('moves after a rollback by another connection', async () => {
    await sleep(2 * DATA_VERSION_CHECK_MS);
    const v = version();
    await other.writer.rollback('eth', 1, null);
    await sleep(2 * DATA_VERSION_CHECK_MS);
    assert.notEqual(version(), v);
    assert.equal((await store.reader.listTransfers('eth', TOKEN, 0, 10)).length, 1);
  });
});
