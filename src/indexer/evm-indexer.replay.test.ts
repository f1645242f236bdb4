/**
 * Replays REAL Ethereum mainnet data (ethereum-etl's recorded test resources, see
 * fixtures/README.md) through the whole indexer into a real SQLite store, and checks the stored
 * transfers against ethereum-etl's expected ERC-20 transfers, exactly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createEvmSource } from '../chains/evm/source.js';
import { type FixtureLimits, startFixtureNode } from '../chains/evm/testing/fixture-node.js';
import { loadEthereumEtlSet, loadExpectedTransfers } from '../chains/evm/testing/fixture-sets.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store, TransferRecord } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-replay-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

interface ReplayCase {
  set: string;
  fromBlock: number;
  head: number;
  expected: string;
}

const cases: ReplayCase[] = [
  {
    set: 'stream_blocks_17173049_17173050',
    fromBlock: 17173049,
    head: 17173050,
    expected: 'stream_blocks_17173049_17173050/expected_erc20_only_token_transfers.json',
  },
  {
    set: 'stream_blocks_1755634_1755635',
    fromBlock: 1755634,
    head: 1755635,
    expected: 'stream_blocks_1755634_1755635/expected_token_transfers.json',
  },
  {
    set: 'export_token_transfers_block_483920',
    fromBlock: 483920,
    head: 483920,
    expected: 'export_token_transfers_block_483920/expected_token_transfers.csv',
  },
];

/** Indexes a fixture set until the checkpoint reaches `head`, then stops the indexer. */
async function replay(c: ReplayCase, options: { finalityDepth: number; limits?: FixtureLimits; db: string }) {
  const fixture = loadEthereumEtlSet(c.set);
  const node = await startFixtureNode({
    ...fixture,
    head: c.head,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const logger = silentLogger();
  const store = await openSqliteStore({ path: join(tmp, options.db), logger });
  const controller = new AbortController();
  const source = createEvmSource({ rpc: createRpcClient({ url: node.url, logger, retryBaseMs: 5 }), logger });
  const indexer = createEvmIndexer({
    chain: {
      name: 'eth',
      rpcUrl: node.url,
      fromBlock: c.fromBlock,
      finalityDepth: options.finalityDepth,
      pollIntervalMs: 20,
    },
    source,
    store: store.writer,
    logger,
    signal: controller.signal,
    tty: false,
  });
  const running = indexer.run();
  running.catch(() => {}); // awaited below; a fatal error must fail the test there, not warn here
  try {
    const deadline = Date.now() + 20_000;
    while ((await store.writer.getCheckpoint('eth'))?.block !== c.head) {
      if (Date.now() > deadline) throw new Error('indexer did not reach the head in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    controller.abort();
    await running;
    await node.close();
  }
  return { store, node };
}

/** Every stored transfer of every token on the chain. */
async function allTransfers(store: Store): Promise<TransferRecord[]> {
  const { total } = await store.reader.listTokens('eth', 0, 1);
  const { tokens } = await store.reader.listTokens('eth', 0, total);
  const out: TransferRecord[] = [];
  for (const token of tokens)
    out.push(...(await store.reader.listTransfers('eth', token.address, 0, token.transferCount)));
  return out;
}

const key = (t: { token: string; blockNumber: number; logIndex: number }) =>
  `${t.token}/${t.blockNumber}/${t.logIndex}`;

describe('replay of real mainnet blocks', () => {
  for (const c of cases) {
    for (const mode of [
      { name: 'backfill path', finalityDepth: 0 },
      { name: 'head-following path', finalityDepth: 64 },
    ]) {
      test(`${c.set}: ${mode.name} stores exactly ethereum-etl's ERC-20 transfers`, async () => {
        const expected = loadExpectedTransfers(join('ethereum-etl', c.expected));
        const { store } = await replay(c, {
          finalityDepth: mode.finalityDepth,
          db: `${c.set}-${mode.finalityDepth}.sqlite`,
          // Provider-like limits force the adaptive range logic to split: 17173049-17173050 has
          // 352 logs of the topics asked for (Transfer's and WETH's deposits and withdrawals), the
          // larger block 213.
          limits: { maxResults: 250 },
        });
        try {
          const stored = await allTransfers(store);
          assert.equal(stored.length, expected.length);
          const byKey = new Map(stored.map((t) => [key(t), t]));
          for (const e of expected) {
            const s = byKey.get(key({ token: e.token, blockNumber: e.blockNumber, logIndex: e.logIndex }));
            assert.ok(s, `missing transfer ${e.txHash}#${e.logIndex}`);
            assert.equal(s.from, e.from);
            assert.equal(s.to, e.to);
            assert.equal(s.value, e.value);
            assert.equal(s.txHash, e.txHash);
            if (e.blockTimestamp !== undefined) assert.equal(s.time, e.blockTimestamp);
          }
          // Counts are maintained incrementally: they must agree with the stored rows.
          const { total, tokens } = await store.reader.listTokens('eth', 0, 1000);
          assert.equal(total, new Set(expected.map((e) => e.token)).size);
          assert.equal(
            tokens.reduce((sum, t) => sum + t.transferCount, 0),
            expected.length,
          );
        } finally {
          await store.close();
        }
      });
    }
  }

  test('282 transfers of 71 tokens for blocks 17173049-17173050, ERC-721 transfers excluded', async () => {
    const { store } = await replay(cases[0]!, { finalityDepth: 0, db: 'count.sqlite' });
    try {
      const stored = await allTransfers(store);
      assert.equal(stored.length, 282);
      assert.equal((await store.reader.listTokens('eth', 0, 1)).total, 71);
      const nft = loadExpectedTransfers(
        'ethereum-etl/stream_blocks_17173049_17173050/expected_erc721_style_transfers.json',
      );
      const storedKeys = new Set(stored.map(key));
      for (const e of nft) assert.ok(!storedKeys.has(key(e)), 'an ERC-721 transfer was stored');
    } finally {
      await store.close();
    }
  });
});
