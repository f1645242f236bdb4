import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import { verifyChain } from '../../indexer/verify.js';
import { TokenqueryError, UserError } from '../../internal/errors.js';
import { silentLogger } from '../../internal/logger.js';
import { runStoreContractSuite } from '../contract/suite.js';
import { indexBatch, tokenMetadata, transferRecord } from '../testing/batches.js';
import type { IndexBatch, Store } from '../types.js';
import { batchToWire } from './batch-wire.js';
import { MIGRATIONS, migrate } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import { dumpTables, randomBatches } from './testing/random-batches.js';
import { openSqliteStoreWithWriterThread } from './writer-thread.js';

const root = mkdtempSync(join(tmpdir(), 'tokenquery-sqlite-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
/** A path in a directory that does not exist yet (the store must create it). */
const freshPath = (): string => join(root, `case-${++counter}`, 'nested', 'store.sqlite');

for (const [name, openSqlite] of [
  ['sqlite', openSqliteStore],
  ['sqlite with a writer thread', openSqliteStoreWithWriterThread],
] as const) {
  runStoreContractSuite(name, async () => {
    const path = freshPath();
    const opened: Store[] = [];
    const openOne = async (): Promise<Store> => {
      const store = await openSqlite({ path, logger: silentLogger() });
      opened.push(store);
      return store;
    };
    return {
      store: await openOne(),
      reopen: openOne,
      cleanup: async () => {
        for (const store of opened) await store.close();
        rmSync(join(path, '..', '..'), { recursive: true, force: true });
      },
    };
  });
}

const TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const HOLDER = '0x1111111111111111111111111111111111111111';

function mintBatch(from: number, to: number, value = 5n): IndexBatch {
  return indexBatch({
    fromBlock: from,
    toBlock: to,
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
  });
}

describe('sqlite store', () => {
  test('creates the parent directory and runs in WAL mode', async () => {
    const path = freshPath();
    const store = await openSqliteStore({ path, logger: silentLogger() });
    try {
      assert.ok(existsSync(path));
      const raw = new Database(path, { readonly: true });
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(raw.pragma('user_version', { simple: true }), MIGRATIONS.length);
      raw.close();
      assert.equal(store.kind, 'sqlite');
    } finally {
      await store.close();
    }
  });

  test('migrations are idempotent across opens and repeated runs', async () => {
    const path = freshPath();
    const store = await openSqliteStore({ path, logger: silentLogger() });
    await store.writer.applyBatch(mintBatch(1, 1));
    await store.close();
    const again = await openSqliteStore({ path, logger: silentLogger() });
    assert.equal(await again.reader.getBalance('eth', TOKEN, HOLDER), 5n);
    await again.close();

    const raw = new Database(path);
    const schema = raw.prepare('SELECT name, sql FROM sqlite_schema ORDER BY name').all();
    migrate(raw, silentLogger());
    assert.deepEqual(raw.prepare('SELECT name, sql FROM sqlite_schema ORDER BY name').all(), schema);
    assert.equal(raw.pragma('user_version', { simple: true }), MIGRATIONS.length);
    raw.close();
  });

  test('a later migration is applied once, on top of the existing data', async () => {
    const raw = new Database(':memory:');
    const extra = [...MIGRATIONS, { name: '9999_test', sql: 'CREATE TABLE extra (x INTEGER)' }];
    migrate(raw, silentLogger(), MIGRATIONS);
    migrate(raw, silentLogger(), extra);
    migrate(raw, silentLogger(), extra);
    assert.equal(raw.pragma('user_version', { simple: true }), extra.length);
    assert.equal(raw.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'extra'").pluck().get(), 1);
    raw.close();
  });

  test('a database newer than this code is refused', async () => {
    const path = freshPath();
    await (await openSqliteStore({ path, logger: silentLogger() })).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    raw.close();
    await assert.rejects(openSqliteStore({ path, logger: silentLogger() }), TokenqueryError);
  });

  test('several processes creating one new file at once all succeed', async () => {
    const path = freshPath();
    const moduleUrl = new URL('./sqlite-store.js', import.meta.url).href;
    const loggerUrl = new URL('../../internal/logger.js', import.meta.url).href;
    const script = `
      const { openSqliteStore } = await import(${JSON.stringify(moduleUrl)});
      const { silentLogger } = await import(${JSON.stringify(loggerUrl)});
      const store = await openSqliteStore({ path: process.argv[1], logger: silentLogger() });
      await store.keys.createApiKey({ id: 'k' + process.pid, hash: 'h' + process.pid, label: '', createdAt: 1, revokedAt: null });
      await store.close();`;
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script, path], {
            stdio: 'inherit',
          });
          child.on('exit', resolve);
        }),
    );
    assert.deepEqual(await Promise.all(runs), [0, 0, 0, 0]);
    const store = await openSqliteStore({ path, logger: silentLogger() });
    assert.equal((await store.keys.listApiKeys()).length, 4);
    await store.close();
  });

  test('two handles on one file see each other’s writes', async () => {
    const path = freshPath();
    const writer = await openSqliteStore({ path, logger: silentLogger() });
    const reader = await openSqliteStore({ path, logger: silentLogger() });
    try {
      await writer.writer.applyBatch(mintBatch(1, 3, 42n));
      assert.equal(await reader.reader.getBalance('eth', TOKEN, HOLDER), 42n);
      assert.equal((await reader.reader.getChainStatus('eth'))?.indexed, 3);
      await reader.keys.createApiKey({ id: 'k1', hash: 'h1', label: 'x', createdAt: 1, revokedAt: null });
      assert.equal((await writer.keys.findApiKeyByHash('h1'))?.label, 'x');
      assert.equal(await writer.keys.revokeApiKey('k1', 5), true);
      assert.equal((await reader.keys.findApiKeyByHash('h1'))?.revokedAt, 5);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  test('balances stay exact when another connection writes between batches', async () => {
    // The writer keeps the balances it wrote in memory; another connection's commit (here a
    // rollback and a different history) must make it read them again.
    const path = freshPath();
    const first = await openSqliteStore({ path, logger: silentLogger() });
    const second = await openSqliteStore({ path, logger: silentLogger() });
    try {
      await first.writer.applyBatch(mintBatch(1, 1, 5n));
      await first.writer.applyBatch(mintBatch(2, 2, 5n));
      await second.writer.rollback('eth', 1, null);
      await second.writer.applyBatch(mintBatch(2, 2, 100n));
      await first.writer.applyBatch(mintBatch(3, 3, 1n));
      assert.equal(await first.reader.getBalance('eth', TOKEN, HOLDER), 106n);
      assert.equal((await first.reader.getToken('eth', TOKEN))?.holderCount, 1);
    } finally {
      await first.close();
      await second.close();
    }
  });

  test('balances stay exact when the balance cache is smaller than the holders', async () => {
    // 40 holders through a cache of 8: most balances are evicted and read again.
    const path = freshPath();
    const store = await openSqliteStore({ path, logger: silentLogger(), balanceCacheSize: 8 });
    const holders = Array.from({ length: 40 }, (_, i) => `0x${(0x1000 + i).toString(16).padStart(40, '0')}`);
    const expected = new Map<string, bigint>();
    try {
      for (let block = 1; block <= 30; block++) {
        const batch = mintBatch(block, block, 0n);
        batch.transfers = holders.map((to, i) => {
          const value = BigInt(((block * 7 + i * 13) % 11) + 1);
          expected.set(to, (expected.get(to) ?? 0n) + value);
          return { ...batch.transfers[0]!, logIndex: i, to, value };
        });
        await store.writer.applyBatch(batch);
      }
      for (const [holder, amount] of expected)
        assert.equal(await store.reader.getBalance('eth', TOKEN, holder), amount);
      assert.equal((await store.reader.getToken('eth', TOKEN))?.holderCount, holders.length);
    } finally {
      await store.close();
    }
  });

  test('the writer thread reports store errors with their message', async () => {
    const path = freshPath();
    const store = await openSqliteStoreWithWriterThread({ path, logger: silentLogger() });
    try {
      await store.writer.applyBatch(mintBatch(1, 1));
      await assert.rejects(store.writer.applyBatch(mintBatch(5, 5)), (error: unknown) => {
        assert.ok(error instanceof TokenqueryError);
        assert.match(error.shortMessage, /starts at block 5, but the checkpoint is block 1/);
        return true;
      });
      // Writes queued before close() still land.
      const pending = store.writer.applyBatch(mintBatch(2, 2));
      await store.close();
      await pending;
    } finally {
      await store.close();
    }
    const reopened = await openSqliteStore({ path, logger: silentLogger() });
    assert.equal((await reopened.writer.getCheckpoint('eth'))?.block, 2);
    await reopened.close();
  });

  test('a failing batch leaves nothing behind', async () => {
    const path = freshPath();
    const store = await openSqliteStore({ path, logger: silentLogger() });
    try {
      await store.writer.applyBatch(mintBatch(1, 1));
      const other = '0xdddddddddddddddddddddddddddddddddddddddd';
      const bad = mintBatch(2, 2, 7n);
      bad.transfers.push({ ...bad.transfers[0]!, token: other, logIndex: 1 });
      // `other` is new but comes without metadata: the whole batch must fail.
      await assert.rejects(store.writer.applyBatch(bad), TokenqueryError);
      assert.equal(await store.reader.getBalance('eth', TOKEN, HOLDER), 5n);
      assert.equal(await store.reader.getToken('eth', other), null);
      assert.equal((await store.writer.getCheckpoint('eth'))?.block, 1);
      assert.equal((await store.reader.listTransfers('eth', TOKEN, 0, 10)).length, 1);
    } finally {
      await store.close();
    }
  });

  test('stores hex as bytes and amounts compactly, and prunes the rollback journal', async () => {
    const path = freshPath();
    const store = await openSqliteStore({ path, logger: silentLogger() });
    await store.writer.applyBatch({ ...mintBatch(1, 10, 2n ** 255n), pruneBlocksBelow: 0 });
    await store.writer.applyBatch({ ...mintBatch(11, 20, 1000n), pruneBlocksBelow: 15 });
    await store.close();
    const raw = new Database(path, { readonly: true });
    const row = raw
      .prepare(
        `SELECT typeof(tx_hash) AS th, length(tx_hash) AS lh, typeof(from_addr) AS tf, length(to_addr) AS lt,
         typeof(value) AS tv, length(value) AS lv FROM transfers ORDER BY block_number LIMIT 1`,
      )
      .get();
    assert.deepEqual(row, { th: 'blob', lh: 32, tf: 'blob', lt: 20, tv: 'blob', lv: 32 });
    assert.equal(
      raw.prepare('SELECT typeof(value) FROM transfers WHERE block_number = 11').pluck().get(),
      'integer',
    );
    assert.equal(raw.prepare('SELECT typeof(address) FROM tokens').pluck().get(), 'blob');
    // Block 1's journal entry was pruned; block 11 lies below the window of the second batch.
    assert.equal(raw.prepare('SELECT count(*) FROM recent_block_tokens').pluck().get(), 0);
    raw.close();
  });

  test('hot reads are index range scans without sorting', async () => {
    const path = freshPath();
    await (await openSqliteStore({ path, logger: silentLogger() })).close();
    const raw = new Database(path, { readonly: true });
    const plan = (sql: string): string =>
      raw
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all()
        .map((r) => (r as { detail: string }).detail)
        .join(' | ');
    const transfers =
      plan(`SELECT * FROM transfers WHERE token_id = (SELECT id FROM tokens WHERE chain = 'eth' AND address = x'00')
      ORDER BY block_number DESC, log_index DESC LIMIT 10 OFFSET 0`);
    assert.doesNotMatch(transfers, /TEMP B-TREE|SCAN transfers/, transfers);
    const tokens = plan(`SELECT * FROM tokens WHERE chain = 'eth'
      ORDER BY holder_count DESC, transfer_count DESC, address ASC LIMIT 10 OFFSET 0`);
    assert.match(tokens, /tokens_by_rank/, tokens);
    assert.doesNotMatch(tokens, /TEMP B-TREE/, tokens);
    raw.close();
  });
});

/** A logger whose lines the test can read. */
function recordingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('the database files (API key hashes, labels and allow-lists live there)', () => {
  test('a new store, its -wal and -shm files and the folders it creates are private, whatever the umask', async () => {
    const path = freshPath();
    const moduleUrl = new URL('./sqlite-store.js', import.meta.url).href;
    const loggerUrl = new URL('../../internal/logger.js', import.meta.url).href;
    // In a child: the umask is per process, and 0 lets every mode bit through.
    const script = `
      import { statSync, writeFileSync } from 'node:fs';
      import { dirname, join } from 'node:path';
      const { openSqliteStore } = await import(${JSON.stringify(moduleUrl)});
      const { silentLogger } = await import(${JSON.stringify(loggerUrl)});
      process.umask(0);
      const path = process.argv[1];
      const store = await openSqliteStore({ path, logger: silentLogger() });
      await store.keys.createApiKey({ id: 'k', hash: 'h', label: 'a label', createdAt: 1, revokedAt: null });
      const mode = (p) => statSync(p).mode & 0o777;
      const control = join(dirname(path), 'control');
      writeFileSync(control, '');
      const modes = {
        db: mode(path), wal: mode(path + '-wal'), shm: mode(path + '-shm'),
        nested: mode(dirname(path)), caseDir: mode(dirname(dirname(path))), control: mode(control),
      };
      await store.close();
      process.stdout.write(JSON.stringify(modes));`;
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, path], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}`))));
    });
    const modes = JSON.parse(output) as Record<string, number>;
    assert.equal(modes.control, 0o666, 'the umask of the child lets everything through');
    assert.deepEqual(
      { db: modes.db, wal: modes.wal, shm: modes.shm, nested: modes.nested, caseDir: modes.caseDir },
      { db: 0o600, wal: 0o600, shm: 0o600, nested: 0o700, caseDir: 0o700 },
    );
  });

  test('an existing database keeps its mode; a readable one is warned about once', async () => {
    const path = freshPath();
    mkdirSync(join(path, '..'), { recursive: true });
    new Database(path).close();
    chmodSync(path, 0o644);
    const { logger, lines } = recordingLogger();
    await (await openSqliteStore({ path, logger })).close();
    await (await openSqliteStore({ path, logger })).close();
    assert.equal(modeOf(path), 0o644, 'the user chose that mode');
    const warnings = lines.filter((line) => line.includes('readable by other users'));
    assert.equal(warnings.length, 1, lines.join(''));
    assert.ok(warnings[0]!.includes(path), warnings[0]);
    assert.ok(warnings[0]!.includes('chmod 600'), warnings[0]);
  });

  test('mustExist refuses a store that does not exist in one line, and creates nothing', async () => {
    const dir = join(root, `missing-${++counter}`);
    const path = join(dir, 'x.sqlite');
    await assert.rejects(openSqliteStore({ path, logger: silentLogger(), mustExist: true }), (error) => {
      assert.ok(error instanceof UserError);
      assert.equal(
        error.shortMessage,
        `no store at ${path}: create it with \`tokenquery index\` (or \`start\`, \`import\`, \`demo\`)`,
      );
      return true;
    });
    assert.equal(existsSync(dir), false);
  });

  test('mustExist opens an existing store; onCreate is called only for a new one', async () => {
    const path = freshPath();
    const created: string[] = [];
    const onCreate = () => created.push('created');
    await (await openSqliteStore({ path, logger: silentLogger(), onCreate })).close();
    assert.deepEqual(created, ['created']);
    await (await openSqliteStore({ path, logger: silentLogger(), onCreate, mustExist: true })).close();
    assert.deepEqual(created, ['created']);
  });
});

describe('batches applied from the wire columns (the writer thread) and from objects', () => {
  test('store exactly the same rows: hex and other addresses, mints, burns, negative and huge amounts', async () => {
    const batches = randomBatches();
    const paths = [freshPath(), freshPath()];
    const fromObjects = await openSqliteStore({ path: paths[0]!, logger: silentLogger() });
    const fromWire = await openSqliteStore({ path: paths[1]!, logger: silentLogger() });
    for (const batch of batches) {
      await fromObjects.writer.applyBatch(batch);
      await fromWire.writer.applyWireBatch(structuredClone(batchToWire(batch)));
    }
    await fromObjects.close();
    await fromWire.close();
    const [objects, wire] = [dumpTables(paths[0]!), dumpTables(paths[1]!)];
    assert.equal(objects.tokens!.length, 3);
    assert.ok(objects.transfers!.length > 500);
    assert.ok(objects.balances!.length > 30);
    assert.ok(objects.recent_block_tokens!.length > 0);
    assert.deepEqual(wire, objects);
  });
});

describe('balances written behind the checkpoint (deferBalances)', () => {
  /**
   * The batches, each allowed to leave its balance rows for later but the fourth (which writes
   * them all, so the table is neither empty nor current midway) and the last.
   */
  const deferring = (batches: IndexBatch[]): IndexBatch[] =>
    batches.map((batch, i) => ({ ...batch, deferBalances: i !== 3 && i < batches.length - 1 }));
  /** A store given `batches` writing every balance at once, then `finish`; its tables. */
  const reference = async (batches: IndexBatch[], finish?: (store: Store) => Promise<unknown>) => {
    const path = freshPath();
    const store = await openSqliteStore({ path, logger: silentLogger() });
    for (const batch of batches) await store.writer.applyBatch(batch);
    await finish?.(store);
    await store.close();
    return dumpTables(path);
  };
  const holderCounts = async (store: Store) =>
    (await store.reader.listTokens('eth', 0, 10)).tokens.map((t) => [
      t.address,
      t.holderCount,
      t.transferCount,
    ]);

  for (const [name, openSqlite] of [
    ['sqlite', openSqliteStore],
    ['sqlite with a writer thread', openSqliteStoreWithWriterThread],
  ] as const) {
    test(`${name}: the same rows in the end, holder counts exact all along, verify clean midway`, async () => {
      const batches = randomBatches();
      const path = freshPath();
      const deferred = await openSqlite({ path, logger: silentLogger() });
      const exact = await openSqliteStore({ path: freshPath(), logger: silentLogger() });
      for (const [i, batch] of deferring(batches).entries()) {
        await deferred.writer.applyBatch(batch);
        await exact.writer.applyBatch(batch);
        assert.deepEqual(await holderCounts(deferred), await holderCounts(exact), `after batch ${i}`);
        if (i === 6) {
          // The balances table lags, says so, and verify compares it as of that block.
          const lagging = (await deferred.reader.getChainStatus('eth'))?.balancesBlock;
          assert.equal(lagging, batches[3]!.toBlock);
          const report = await verifyChain({
            store: deferred,
            chain: 'eth',
            source: null,
            logger: silentLogger(),
          });
          assert.equal(report.balancesBlock, lagging);
          assert.ok(report.balances > 0);
          assert.deepEqual(report.differences, []);
        }
      }
      assert.equal((await deferred.reader.getChainStatus('eth'))?.balancesBlock, undefined);
      await deferred.close();
      await exact.close();
      const tables = dumpTables(path);
      assert.ok(tables.balances!.length > 30);
      assert.deepEqual(tables, await reference(batches));
    });
  }

  test('close writes them; a crash loses nothing: the next write replays what the table lacks', async () => {
    const batches = deferring(randomBatches());
    // Closed after 5 deferred batches: the balances are written.
    const closed = freshPath();
    const first = await openSqliteStore({ path: closed, logger: silentLogger() });
    for (const batch of batches.slice(0, 5)) await first.writer.applyBatch(batch);
    await first.close();
    const closedTables = dumpTables(closed);
    assert.equal((closedTables.chains![0] as unknown as { balances_block: unknown }).balances_block, null);
    assert.deepEqual(closedTables, await reference(batches.slice(0, 5)));

    // "Crashed" after 7: a second connection carries on without the first one's memory, and the
    // first one, closed afterwards, must not write its stale balances over the second's.
    const path = freshPath();
    const crashed = await openSqliteStore({ path, logger: silentLogger() });
    for (const batch of batches.slice(0, 7)) await crashed.writer.applyBatch(batch);
    const restarted = await openSqliteStore({ path, logger: silentLogger() });
    for (const batch of batches.slice(7)) await restarted.writer.applyBatch(batch);
    await crashed.close();
    await restarted.close();
    assert.deepEqual(dumpTables(path), await reference(batches));
  });

  test('a rollback writes them first, or replays them after a crash', async () => {
    const batches = deferring(randomBatches());
    const rollBack = (store: Store) => store.writer.rollback('eth', 95, null);
    const expected = await reference(batches.slice(0, 10), rollBack);
    // Unwritten balances in memory.
    const path = freshPath();
    const store = await openSqliteStore({ path, logger: silentLogger() });
    for (const batch of batches.slice(0, 10)) await store.writer.applyBatch(batch);
    await rollBack(store);
    await store.close();
    assert.deepEqual(dumpTables(path), expected);
    // Lost in a crash.
    const crashedPath = freshPath();
    const crashed = await openSqliteStore({ path: crashedPath, logger: silentLogger() });
    for (const batch of batches.slice(0, 10)) await crashed.writer.applyBatch(batch);
    const restarted = await openSqliteStore({ path: crashedPath, logger: silentLogger() });
    await rollBack(restarted);
    await crashed.close();
    await restarted.close();
    assert.deepEqual(dumpTables(crashedPath), expected);
  });
});

describe('balance changes without a transfer (IndexBatch.balanceChanges)', () => {
  const withChanges = () => randomBatches({ balanceChanges: true });

  test('from the wire columns and from objects: exactly the same rows', async () => {
    const batches = withChanges();
    const paths = [freshPath(), freshPath()];
    const fromObjects = await openSqliteStore({ path: paths[0]!, logger: silentLogger() });
    const fromWire = await openSqliteStore({ path: paths[1]!, logger: silentLogger() });
    for (const batch of batches) {
      await fromObjects.writer.applyBatch(batch);
      await fromWire.writer.applyWireBatch(structuredClone(batchToWire(batch)));
    }
    await fromObjects.close();
    await fromWire.close();
    const [objects, wire] = [dumpTables(paths[0]!), dumpTables(paths[1]!)];
    assert.ok(objects.balance_changes!.length > 100);
    assert.deepEqual(wire, objects);
  });

  test('deferred, then lost in a crash: the next write replays the changes with the transfers', async () => {
    const batches = withChanges();
    const deferring = batches.map((batch, i) => ({
      ...batch,
      deferBalances: i !== 3 && i < batches.length - 1,
    }));
    const referencePath = freshPath();
    const reference = await openSqliteStore({ path: referencePath, logger: silentLogger() });
    for (const batch of batches) await reference.writer.applyBatch(batch);
    await reference.close();

    const path = freshPath();
    const crashed = await openSqliteStore({ path, logger: silentLogger() });
    for (const batch of deferring.slice(0, 7)) await crashed.writer.applyBatch(batch);
    // The balances table lags, and verify compares it as of that block, changes included.
    const report = await verifyChain({ store: crashed, chain: 'eth', source: null, logger: silentLogger() });
    assert.equal(report.balancesBlock, batches[3]!.toBlock);
    assert.ok(report.balanceChanges > 50);
    assert.deepEqual(report.differences, []);
    // A second connection carries on without the first one's unwritten balances.
    const restarted = await openSqliteStore({ path, logger: silentLogger() });
    for (const batch of deferring.slice(7)) await restarted.writer.applyBatch(batch);
    await crashed.close();
    await restarted.close();
    assert.deepEqual(dumpTables(path), dumpTables(referencePath));
  });
});
