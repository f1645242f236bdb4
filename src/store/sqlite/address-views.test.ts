import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import { silentLogger } from '../../internal/logger.js';
import { NON_HOLDERS } from '../batch-plan.js';
import type { IndexBatch, Store, TransferRecord } from '../types.js';
import { isLowerHex } from './codec.js';
import { MIGRATIONS, migrate } from './migrations.js';
import { openSqliteStore } from './sqlite-store.js';
import { copyRows } from './testing/previous-version.js';
import { dumpTables, randomBatches } from './testing/random-batches.js';
import { openSqliteStoreWithWriterThread } from './writer-thread.js';

const root = mkdtempSync(join(tmpdir(), 'tokenquery-address-views-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshPath = (): string => join(root, `store-${++counter}.sqlite`);

/** The order SQLite keeps addresses in: TEXT (any non-hex address) before BLOB (lower-case hex), each by its text. */
const storeOrder = (a: string, b: string): number => {
  const [ka, kb] = [isLowerHex(a) ? 1 : 0, isLowerHex(b) ? 1 : 0];
  return ka !== kb ? ka - kb : a < b ? -1 : a > b ? 1 : 0;
};
const newestFirst = (a: TransferRecord, b: TransferRecord): number =>
  b.blockNumber - a.blockNumber || b.logIndex - a.logIndex || (a.token < b.token ? 1 : -1);

/**
 * What the address reads answer, from the transfers of `batches`: balances, transfer counts and
 * the addresses' transfer lists up to `balancesUpTo` (`balancesBlock`, else the checkpoint).
 */
function model(batches: IndexBatch[], balancesUpTo: number) {
  const all = batches.flatMap((batch) => batch.transfers);
  const transfers = all.filter((t) => t.blockNumber <= balancesUpTo);
  const holdings = new Map<string, Map<string, { balance: bigint; transferCount: number }>>();
  const holding = (token: string, address: string) => {
    let perToken = holdings.get(token);
    if (perToken === undefined) {
      perToken = new Map();
      holdings.set(token, perToken);
    }
    let entry = perToken.get(address);
    if (entry === undefined) {
      entry = { balance: 0n, transferCount: 0 };
      perToken.set(address, entry);
    }
    return entry;
  };
  for (const t of transfers) {
    holding(t.token, t.from).transferCount++;
    if (t.to !== t.from) {
      holding(t.token, t.to).transferCount++;
      holding(t.token, t.from).balance -= t.value;
      holding(t.token, t.to).balance += t.value;
    }
  }
  const addresses = [...new Set(all.flatMap((t) => [t.from, t.to]))];
  const holders = (token: string) =>
    [...(holdings.get(token) ?? new Map())]
      .filter(([address, h]) => h.balance > 0n && !NON_HOLDERS.has(address))
      .map(([address, h]) => ({ address, balance: h.balance as bigint }))
      .sort((a, b) =>
        a.balance === b.balance ? storeOrder(a.address, b.address) : a.balance > b.balance ? -1 : 1,
      );
  return {
    addresses,
    holdings,
    holding: (token: string, address: string) =>
      holdings.get(token)?.get(address) ?? { balance: 0n, transferCount: 0 },
    holders,
    transfersOf: (address: string, token: string | null) =>
      transfers
        .filter((t) => (t.from === address || t.to === address) && (token === null || t.token === token))
        .sort(newestFirst),
  };
}

/**
 * Checks every address read of `store` (chain eth) against the model; `current` is the model at
 * the checkpoint (holder counts are always current, balances may lag).
 */
async function checkReads(
  store: Store,
  expected: ReturnType<typeof model>,
  current: ReturnType<typeof model>,
  when: string,
): Promise<void> {
  const { tokens } = await store.reader.listTokens('eth', 0, 100);
  for (const token of tokens) {
    const holders = expected.holders(token.address);
    const holderCount = current.holders(token.address).length;
    assert.equal(token.holderCount, holderCount, `${when}: holder count of ${token.address}`);
    assert.deepEqual(await store.reader.listHolders('eth', token.address, 0, 1000), holders, when);
    assert.deepEqual(await store.reader.listHolders('eth', token.address, 2, 3), holders.slice(2, 5), when);
    const scanned = [];
    for (let page = await store.scans.scanHolders('eth', token.address, null, 3); page.length > 0; ) {
      scanned.push(...page);
      page = await store.scans.scanHolders('eth', token.address, page[page.length - 1]!, 3);
    }
    assert.deepEqual(scanned, holders, `${when}: scanHolders`);
    const holdings = [...(expected.holdings.get(token.address) ?? new Map())]
      .filter(([, h]) => h.balance !== 0n || h.transferCount > 0)
      .map(([holder, h]) => ({ holder, ...h }))
      .sort((a, b) => storeOrder(a.holder, b.holder));
    assert.deepEqual(await store.scans.scanHoldings('eth', token.address, null, 1000), holdings, when);
  }
  for (const address of expected.addresses) {
    const balances = NON_HOLDERS.has(address)
      ? []
      : tokens
          .filter((token) => expected.holding(token.address, address).balance > 0n)
          .map((token) => ({ token: token.address, ...expected.holding(token.address, address) }));
    const listed = await store.reader.listAddressBalances('eth', address);
    assert.deepEqual(
      listed.map((entry) => ({
        token: entry.token.address,
        balance: entry.balance,
        transferCount: entry.transferCount,
      })),
      balances,
      `${when}: balances of ${address}`,
    );
    for (const token of tokens) {
      assert.deepEqual(
        await store.reader.getAddressHolding('eth', address, token.address),
        expected.holding(token.address, address),
        `${when}: holding of ${address} in ${token.address}`,
      );
    }
    for (const token of [null, ...tokens.map((t) => t.address)]) {
      const transfers = expected.transfersOf(address, token);
      assert.deepEqual(
        await store.reader.listAddressTransfers('eth', address, token, 0, 1000),
        transfers,
        when,
      );
      assert.deepEqual(
        await store.reader.listAddressTransfers('eth', address, token, 3, 4),
        transfers.slice(3, 7),
        when,
      );
    }
  }
}

describe('address views (sqlite)', () => {
  for (const [name, openSqlite] of [
    ['sqlite', openSqliteStore],
    ['sqlite with a writer thread', openSqliteStoreWithWriterThread],
  ] as const) {
    test(`${name}: every address read matches the transfers, with balances deferred, after a crash and after a rollback`, async () => {
      const batches = randomBatches().map((batch, i) => ({ ...batch, deferBalances: i !== 3 && i !== 7 }));
      const path = freshPath();
      const store = await openSqlite({ path, logger: silentLogger() });
      let restarted: Store | null = null;
      try {
        for (const [i, batch] of batches.entries()) {
          await (restarted ?? store).writer.applyBatch(batch);
          const status = await (restarted ?? store).reader.getChainStatus('eth');
          const balancesUpTo = status?.balancesBlock ?? batch.toBlock;
          await checkReads(
            restarted ?? store,
            model(batches, balancesUpTo),
            model(batches, batch.toBlock),
            `after batch ${i}`,
          );
          // A second connection carries on without the first one's unwritten balances (a crash).
          if (i === 9) restarted = await openSqliteStore({ path, logger: silentLogger() });
        }
        await (restarted ?? store).writer.rollback('eth', 95, null);
        const rolledBack = model(batches, 95);
        await checkReads(restarted ?? store, rolledBack, rolledBack, 'after the rollback');
      } finally {
        await restarted?.close();
        await store.close();
      }
    });
  }

  test('ties between tokens at one (block, log index) come by token address descending, on any page', async () => {
    // Token ids in the opposite order of the addresses: the index order alone would be wrong.
    const [high, low] = [
      '0xff00000000000000000000000000000000000000',
      '0x0000000000000000000000000000000000000001',
    ];
    const holder = '0x1111111111111111111111111111111111111111';
    const at = (token: string, logIndex: number) => ({
      token,
      blockNumber: 1,
      logIndex,
      txIndex: 0,
      txHash: `0x${'ab'.repeat(32)}`,
      from: '0x2222222222222222222222222222222222222222',
      to: holder,
      value: 1n,
      time: 1,
    });
    const store = await openSqliteStore({ path: freshPath(), logger: silentLogger() });
    try {
      await store.writer.applyBatch({
        ...randomBatches()[0]!,
        fromBlock: 1,
        toBlock: 1,
        transfers: [at(high, 0), at(high, 1), at(low, 1), at(low, 2)],
        tokens: [high, low].map((address) => ({ address, name: 'T', symbol: 'T', decimals: 0 })),
        pruneBlocksBelow: 0,
      });
      const page = async (offset: number, limit: number) =>
        (await store.reader.listAddressTransfers('eth', holder, null, offset, limit)).map((t) => [
          t.logIndex,
          t.token,
        ]);
      const all = [
        [2, low],
        [1, high],
        [1, low],
        [0, high],
      ];
      assert.deepEqual(await page(0, 10), all);
      for (let offset = 0; offset < 4; offset++) {
        for (let limit = 1; limit <= 3; limit++) {
          assert.deepEqual(
            await page(offset, limit),
            all.slice(offset, offset + limit),
            `${offset}, ${limit}`,
          );
        }
      }
    } finally {
      await store.close();
    }
  });

  test('a version-6 store is upgraded in place, and answers exactly like one built new', async () => {
    const built = freshPath();
    const store = await openSqliteStore({ path: built, logger: silentLogger() });
    for (const batch of randomBatches()) await store.writer.applyBatch(batch);
    await store.close();

    // The same data as version 6 kept it: the tables of migrations 1-6, zero balances without a row.
    const old = freshPath();
    const raw = new Database(old);
    migrate(raw, silentLogger(), MIGRATIONS.slice(0, 6));
    raw.exec(`ATTACH DATABASE '${built}' AS built`);
    for (const table of [
      'chains',
      'tokens',
      'transfers',
      'seed_balances',
      'block_refs',
      'recent_block_tokens',
    ]) {
      copyRows(raw, table, 'built');
    }
    copyRows(raw, 'balances', 'built', 'WHERE amount <> 0');
    raw.exec('DETACH DATABASE built');
    raw.close();

    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const upgraded = await openSqliteStore({ path: old, logger: pino({ level: 'info' }, sink) });
    await upgraded.close();
    assert.ok(
      lines.some((line) => line.includes('upgrading the database')),
      lines.join('\n'),
    );
    assert.deepEqual(dumpTables(old), dumpTables(built));
    const check = new Database(old, { readonly: true });
    assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length);
    check.close();
  });

  test('address and holder pages are index ranges: no sort but of the page, no table scan', async () => {
    const path = freshPath();
    await (await openSqliteStore({ path, logger: silentLogger() })).close();
    const raw = new Database(path, { readonly: true });
    const { prepareStatements } = await import('./statements.js');
    const { prepareNeoStatements } = await import('./neo-statements.js');
    const sql = prepareStatements(raw);
    const neo = prepareNeoStatements(raw);
    const plan = (statement: { source: string }): string =>
      raw
        .prepare(`EXPLAIN QUERY PLAN ${statement.source}`)
        .all(...Array((statement.source.match(/\?/g) ?? []).length).fill(null))
        .map((r) => (r as { detail: string }).detail)
        .join(' | ');
    const holders = plan(sql.holders);
    assert.match(
      holders,
      /SEARCH balances USING COVERING INDEX balances_by_rank \(token_id=\? AND rank>\?\)/,
      holders,
    );
    for (const seek of [sql.holdersOfRankAfter, sql.holdersBelowRank]) {
      assert.match(plan(seek), /balances_by_rank/, plan(seek));
      assert.doesNotMatch(plan(seek), /TEMP B-TREE/, plan(seek));
    }
    const one = plan(sql.addressTransfersOfToken);
    assert.match(one, /SEARCH address_transfers USING PRIMARY KEY \(address_id=\? AND token_id=\?\)/, one);
    assert.doesNotMatch(one, /TEMP B-TREE|SCAN (address_transfers|transfers)/, one);
    const byIndex = plan(sql.addressTransfersByIndex);
    assert.match(byIndex, /COVERING INDEX address_transfers_all \(address_id=\?\)/, byIndex);
    assert.doesNotMatch(byIndex, /TEMP B-TREE|SCAN (address_transfers|transfers|tokens)/, byIndex);
    const all = plan(sql.addressTransfers);
    assert.match(all, /COVERING INDEX address_transfers_all \(address_id=\?\)/, all);
    // Ties between tokens are sorted within a run of one (block, log index), never the whole range.
    assert.doesNotMatch(all, /TEMP B-TREE FOR ORDER BY|SCAN (x|t|k)\b/, all);
    for (const balances of [sql.addressBalances, neo.addressBalances]) {
      const detail = plan(balances);
      assert.match(detail, /^SEARCH b USING INDEX balances_by_holder \(holder=\?\)/, detail);
    }
    assert.match(plan(sql.addressHolding), /PRIMARY KEY \(token_id=\? AND holder=\?\)/);
    raw.close();
  });

  test('a holder page reads the rank index alone up to its offset', async () => {
    const path = freshPath();
    await (await openSqliteStore({ path, logger: silentLogger() })).close();
    const raw = new Database(path, { readonly: true });
    const { prepareStatements } = await import('./statements.js');
    const inner = prepareStatements(raw).holders.source.match(
      /\(SELECT token_id, holder FROM balances.*?OFFSET \+\?\)/s,
    );
    assert.ok(inner, 'the page subquery');
    // Index-only: no seek into the table per skipped entry (an index on a virtual column had one).
    const ops = raw
      .prepare(`EXPLAIN ${inner[0].slice(1, -1)}`)
      .all(...Array((inner[0].match(/\?/g) ?? []).length).fill(null))
      .map((r) => (r as { opcode: string }).opcode);
    assert.ok(!ops.includes('NotFound') && !ops.includes('DeferredSeek'), ops.join(' '));
    raw.close();
  });
});
