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
});
