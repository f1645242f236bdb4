import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createEvmSource } from '../../chains/evm/source.js';
import { startFixtureNode } from '../../chains/evm/testing/fixture-node.js';
import { createRpcClient } from '../../chains/jsonrpc/rpc-client.js';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { silentLogger } from '../../internal/logger.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { importTransfers } from '../importer.js';
import { createImportNode } from '../node-reader.js';
import { createSyntheticExport, type SyntheticExportOptions } from './synthetic-export.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-synthetic-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const logger = silentLogger();
const SMALL: SyntheticExportOptions = { transfers: 5_003, holders: 300, tokens: 7, seed: 42, perBlock: 40 };
const text = (options: SyntheticExportOptions) => [...createSyntheticExport(options).chunks()].join('');

describe('synthetic exports', () => {
  test('the same seed gives the same bytes; another seed, other bytes', () => {
    assert.equal(text(SMALL), text(SMALL));
    assert.notEqual(text(SMALL), text({ ...SMALL, seed: 43 }));
    const lines = text(SMALL).trimEnd().split('\n');
    assert.equal(lines.length, SMALL.transfers + 1);
    assert.equal(text({ ...SMALL, order: 'shuffled' }).length, text(SMALL).length);
    assert.notEqual(text({ ...SMALL, order: 'shuffled' }), text(SMALL));
  });

  test('the spotlight weaves in exact counts of its rows, spread over the stream, and nothing else changes', () => {
    const spotlight = { walletTokens: 7, busyTransfers: 1_000, tokenHolders: 1_500 };
    const plain = createSyntheticExport(SMALL);
    const lit = createSyntheticExport({ ...SMALL, spotlight });
    assert.equal(text({ ...SMALL, spotlight: {} }), text(SMALL));
    const { wallet, busy, holderToken } = lit.spotlight;
    const walletTokens = new Map<string, number>();
    const airdrops = new Set<string>();
    let busyRows = 0;
    let changed = 0;
    let firstHalf = 0;
    for (let n = lit.firstBlock; n <= lit.lastBlock; n++) {
      const before = plain.block(n);
      lit.block(n).forEach((t, i) => {
        const p = before[i]!;
        assert.deepEqual(
          [t.txHash, t.logIndex, t.blockNumber, t.time],
          [p.txHash, p.logIndex, p.blockNumber, p.time],
        );
        if (t.token === p.token && t.from === p.from && t.to === p.to && t.value === p.value) return;
        changed++;
        if (n < lit.firstBlock + lit.blocks / 2) firstHalf++;
        if (t.to === wallet) walletTokens.set(t.token, (walletTokens.get(t.token) ?? 0) + 1);
        else if (t.from === busy || t.to === busy) busyRows++;
        else {
          assert.deepEqual([t.token, t.from], [holderToken, ZERO_ADDRESS]);
          airdrops.add(t.to);
        }
      });
    }
    assert.deepEqual([...walletTokens.keys()].sort(), [...lit.tokenAddresses].sort());
    assert.ok([...walletTokens.values()].every((count) => count === 1));
    assert.equal(busyRows, spotlight.busyTransfers);
    assert.equal(airdrops.size, spotlight.tokenHolders);
    assert.ok(airdrops.has(lit.airdropAddress(0)) && airdrops.has(lit.airdropAddress(1_499)));
    // Every rewritten row differs from the plain one (2 of them may keep the same token and recipient by chance).
    assert.ok(changed >= 7 + 1_000 + 1_500 - 2, `${changed}`);
    assert.ok(
      Math.abs(firstHalf / changed - 0.5) < 0.02,
      `spread: ${firstHalf} of ${changed} in the first half`,
    );
    assert.throws(() => createSyntheticExport({ ...SMALL, spotlight: { walletTokens: 8 } }), RangeError);
    assert.throws(() => createSyntheticExport({ ...SMALL, spotlight: { tokenHolders: 5_004 } }), RangeError);
  });

  test('sorted, shuffled JSON, and node-completed files import to the balances the generator implies', async () => {
    const generated = createSyntheticExport(SMALL);
    // Expectations from the generator's rows, not from the importer.
    const balances = new Map<string, bigint>();
    const counts = new Map<string, number>();
    for (let n = generated.firstBlock; n <= generated.lastBlock; n++) {
      for (const t of generated.block(n)) {
        counts.set(t.token, (counts.get(t.token) ?? 0) + 1);
        if (t.from === t.to) continue;
        balances.set(`${t.token}/${t.from}`, (balances.get(`${t.token}/${t.from}`) ?? 0n) - BigInt(t.value));
        balances.set(`${t.token}/${t.to}`, (balances.get(`${t.token}/${t.to}`) ?? 0n) + BigInt(t.value));
      }
    }
    const node = await startFixtureNode(generated.node({ withBlocks: true }));
    try {
      const variants: [string, SyntheticExportOptions, boolean][] = [
        ['sorted csv', SMALL, true],
        ['shuffled json lines, gzipped', { ...SMALL, format: 'jsonl', order: 'shuffled' }, false],
        ['csv without times and positions', { ...SMALL, fullColumns: false, order: 'shuffled' }, false],
      ];
      for (const [name, options, sorted] of variants) {
        const path = join(tmp, `${name.replaceAll(' ', '-')}.export`);
        writeFileSync(path, options.format === 'jsonl' ? gzipSync(text(options)) : text(options));
        const store = await openSqliteStore({
          path: join(tmp, `${name.replaceAll(' ', '-')}.sqlite`),
          logger,
        });
        const rpc = createRpcClient({ url: node.url, logger, retryBaseMs: 5 });
        const summary = await importTransfers({
          store,
          chain: 'eth',
          inputs: [path],
          node: createImportNode({ rpc, source: createEvmSource({ rpc, logger }) }),
          logger,
          tmpDir: tmp,
          tty: false,
          sorted,
          batchTransfers: 1_000,
        });
        assert.equal(summary.imported, SMALL.transfers, name);
        assert.equal(summary.newTokens, counts.size, name);
        for (const [key, balance] of balances) {
          const [token, holder] = key.split('/') as [string, string];
          assert.equal(await store.reader.getBalance('eth', token, holder), balance, `${name}: ${key}`);
        }
        for (const [token, count] of counts) {
          const record = await store.reader.getToken('eth', token);
          assert.equal(record?.transferCount, count, name);
          const holders = [...balances].filter(
            ([k, b]) => k.startsWith(`${token}/`) && b > 0n && !k.endsWith(ZERO_ADDRESS),
          );
          assert.equal(record?.holderCount, holders.length, name);
        }
        const [sample] = generated.block(generated.firstBlock + 3);
        const [stored] = (await store.reader.listTransfers('eth', sample!.token, 0, SMALL.transfers)).filter(
          (t) => t.blockNumber === sample!.blockNumber && t.logIndex === sample!.logIndex,
        );
        assert.deepEqual(
          { time: stored?.time, txIndex: stored?.txIndex },
          { time: sample!.time, txIndex: sample!.txIndex },
          name,
        );
        await store.close();
      }
    } finally {
      await node.close();
    }
  });

  test("'chain' activity: whales hold a tenth of the transfers, tokens and addresses are Zipf-skewed, 20 million addresses cost nothing", () => {
    const options: SyntheticExportOptions = {
      transfers: 60_000,
      holders: 20_000_000,
      tokens: 100_000,
      seed: 5,
      perBlock: 200,
      activity: 'chain',
    };
    const generated = createSyntheticExport(options);
    const again = createSyntheticExport(options);
    assert.deepEqual(generated.block(generated.lastBlock), again.block(again.lastBlock));
    const tokens = new Map<string, number>();
    const addresses = new Map<string, number>();
    for (let n = generated.firstBlock; n <= generated.lastBlock; n++) {
      const rows = generated.block(n);
      assert.equal(rows.length, 200);
      for (const t of rows) {
        tokens.set(t.token, (tokens.get(t.token) ?? 0) + 1);
        for (const a of [t.from, t.to]) if (a !== ZERO_ADDRESS) addresses.set(a, (addresses.get(a) ?? 0) + 1);
      }
    }
    const count = (token: number) => tokens.get(generated.tokenAddresses[token]!) ?? 0;
    const whales = count(0) + count(1) + count(2);
    assert.ok(Math.abs(whales / options.transfers - 0.1) < 0.005, `whales: ${whales}`);
    // After the whales, rank k about 1/(k+1) as busy as the first: token 3 about twice token 4's
    // and ten times token 12's.
    assert.ok(count(3) > 1.6 * count(4) && count(3) < 2.4 * count(4), `${count(3)} / ${count(4)}`);
    assert.ok(count(3) > 7 * count(12) && count(3) < 13 * count(12), `${count(3)} / ${count(12)}`);
    // The busiest address is the first rank, and is in a few percent of the transfers; most
    // addresses appear once.
    const busiest = [...addresses].sort((a, b) => b[1] - a[1])[0]!;
    assert.equal(busiest[0], generated.holderAddress(0));
    assert.ok(
      busiest[1] > 0.03 * options.transfers && busiest[1] < 0.15 * options.transfers,
      `${busiest[1]}`,
    );
    const once = [...addresses.values()].filter((n) => n === 1).length;
    assert.ok(once > addresses.size / 2, `${once} of ${addresses.size} once`);
  });
});
