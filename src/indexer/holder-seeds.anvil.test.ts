/**
 * A late start (`fromBlock` after the tokens' first transfers) against a real anvil node: each
 * holder seen first is seeded with its `balanceOf` at the block before the start, through
 * Multicall3 where it has code at that block and plain batched `eth_call`s where it has none, so
 * balances and holder counts agree with a full index and with the node. A node that keeps no old
 * state (anvil `--prune-history`) leaves the chain indexing, with holder counts marked partial.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startApiServer } from '../api/server.js';
import { MULTICALL3_ADDRESS } from '../chains/evm/abi.js';
import { createEvmSource } from '../chains/evm/source.js';
import type { EvmSource, HolderRef } from '../chains/evm/types.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getAccounts, getBlockNumber } from '../devchain/chain.js';
import {
  balancesOf,
  burnToken,
  DEMO_TOKEN_SPECS,
  type DeployedToken,
  deployToken,
  transferToken,
} from '../devchain/deploy.js';
import { rpc } from '../devchain/rpc.js';
import { SPRAY_GAS_LIMIT, spray } from '../devchain/traffic.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';
import { diffStoreAgainstNode, readNodeTruth } from './testing/evm-truth.js';
import { deployMulticall3 } from './testing/multicall3.js';
import { verifyChain } from './verify.js';

const ZERO = '0x0000000000000000000000000000000000000000';
const tmp = mkdtempSync(join(tmpdir(), 'tq-seeds-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const logger = silentLogger();
const units = (n: number): bigint => BigInt(n) * 10n ** 18n;

/** The reads of starting balances an indexer made, through a source that records them. */
interface SeedReads {
  multicall: boolean[];
  pairs: HolderRef[];
}

/** Runs an in-process indexer from `fromBlock` into a store at `db` until stopped. */
async function startIndexer(url: string, db: string, fromBlock: number) {
  const store = await openSqliteStore({ path: join(tmp, db), logger });
  const controller = new AbortController();
  const source = createEvmSource({
    rpc: createRpcClient({ url, logger, retryBaseMs: 5 }),
    logger,
    invalidRetryBaseMs: 5,
  });
  const reads: SeedReads = { multicall: [], pairs: [] };
  const recording: EvmSource = {
    ...source,
    readBalancesAt(pairs, block, options) {
      reads.multicall.push(options.multicall);
      reads.pairs.push(...pairs);
      return source.readBalancesAt(pairs, block, options);
    },
  };
  const running = createEvmIndexer({
    chain: { name: 'eth', rpcUrl: url, fromBlock, finalityDepth: 2, pollIntervalMs: 20 },
    source: recording,
    store: store.writer,
    logger,
    signal: controller.signal,
    tty: false,
    supplyRefreshBlocks: 1,
  }).run();
  running.catch(() => {});
  return {
    store,
    reads,
    running,
    async stop() {
      controller.abort();
      await running.catch(() => {});
      await store.close();
    },
  };
}

async function caughtUp(store: Store, url: string): Promise<void> {
  const atHead = async () => {
    const head = await getBlockNumber(url);
    return (await store.writer.getCheckpoint('eth'))?.block === head;
  };
  await waitFor('the indexer to reach the head', atHead, 60_000);
}

/** Every non-zero address a token's stored transfers name. */
async function holdersNamed(store: Store, token: string): Promise<string[]> {
  const stored = await store.reader.getToken('eth', token);
  if (stored === null) return [];
  const transfers = await store.reader.listTransfers('eth', token, 0, stored.transferCount + 10);
  const set = new Set<string>();
  for (const t of transfers) set.add(t.from).add(t.to);
  set.delete(ZERO);
  return [...set].sort();
}

/**
 * Asserts the late index agrees with the node and with the full index: every holder its
 * transfers name has the node's balance (and the full index's), and its holder count is the
 * full one less the holders that never moved since the start (they are never seen).
 */
async function assertExact(late: Store, full: Store, url: string, tokens: readonly string[]): Promise<void> {
  for (const token of tokens) {
    const named = await holdersNamed(late, token);
    const onNode = await balancesOf(url, token, named);
    let positive = 0;
    for (const [i, holder] of named.entries()) {
      const balance = await late.reader.getBalance('eth', token, holder);
      assert.equal(balance, onNode[i], `balance of ${holder} in ${token} against balanceOf`);
      assert.equal(
        balance,
        await full.reader.getBalance('eth', token, holder),
        `balance of ${holder} in ${token}`,
      );
      if (balance > 0n) positive++;
    }
    const stored = await late.reader.getToken('eth', token);
    assert.equal(stored?.holderCount, positive, `holder count of ${token}`);
    const seen = new Set(named);
    const allNamed = await holdersNamed(full, token);
    let dormant = 0;
    for (const holder of allNamed) {
      if (!seen.has(holder) && (await full.reader.getBalance('eth', token, holder)) > 0n) dormant++;
    }
    assert.equal(
      (await full.reader.getToken('eth', token))?.holderCount,
      positive + dormant,
      `holder count of ${token} in the full index`,
    );
  }
}

describe('late start: starting balances of holders', () => {
  let anvil: AnvilInstance;
  let accounts: string[];
  let old: DeployedToken;
  let other: DeployedToken;
  let fresh: DeployedToken;
  /** Last block before Multicall3 exists; last block before the third phase. */
  let beforeMulticall: number;
  let beforeLast: number;

  before(async () => {
    anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
    const url = anvil.url;
    accounts = await getAccounts(url);
    const [deployer, a1, a2, a3, a4, a5, a6] = accounts as [string, ...string[]];
    old = await deployToken(url, DEMO_TOKEN_SPECS[0]!);
    other = await deployToken(url, DEMO_TOKEN_SPECS[1]!);
    // Phase 1: holders, among them 600 sprayed ones, and a6, who will not move until later.
    await transferToken(url, old, { from: deployer, to: a1!, amount: units(1000) });
    await transferToken(url, old, { from: a1!, to: a2!, amount: units(300) });
    await transferToken(url, old, { from: deployer, to: a6!, amount: units(77) });
    await transferToken(url, other, { from: deployer, to: a3!, amount: 5_000_000n });
    await spray(url, old, { transfers: 1500, holders: 600, seed: 7 });
    beforeMulticall = await getBlockNumber(url);
    // Phase 2: Multicall3 appears, more transfers.
    await deployMulticall3(url, deployer);
    await transferToken(url, old, { from: a2!, to: a3!, amount: units(100) });
    await transferToken(url, other, { from: a3!, to: a4!, amount: 1_000_000n });
    beforeLast = await getBlockNumber(url);
    // Phase 3: a1 goes to zero and is refunded, a token created after both starts, a burn, and the
    // sprayed holders move again.
    await transferToken(url, old, { from: a1!, to: a4!, amount: units(700) });
    await transferToken(url, old, { from: a2!, to: a1!, amount: units(50) });
    await transferToken(url, old, { from: a3!, to: deployer, amount: units(100) });
    await transferToken(url, old, { from: deployer, to: a5!, amount: units(9) });
    await burnToken(url, old, { amount: units(1) });
    await transferToken(url, other, { from: a4!, to: a3!, amount: 1n });
    fresh = await deployToken(url, DEMO_TOKEN_SPECS[0]!);
    await transferToken(url, fresh, { from: deployer, to: a1!, amount: units(3) });
    await transferToken(url, fresh, { from: a1!, to: a2!, amount: units(1) });
    await spray(url, old, { transfers: 1500, holders: 600, seed: 7 });
  });
  after(async () => {
    await anvil?.stop();
  });

  test('balances and holder counts agree with a full index and the node, with and without Multicall3', async () => {
    const url = anvil.url;
    const tokens = [old.address, other.address, fresh.address];
    const full = await startIndexer(url, 'full.sqlite', 0);
    const plain = await startIndexer(url, 'plain.sqlite', beforeMulticall + 1);
    const batched = await startIndexer(url, 'multicall.sqlite', beforeLast + 1);
    try {
      for (const indexer of [full, plain, batched]) await caughtUp(indexer.store, url);
      assert.deepEqual(full.reads.pairs, [], 'a full index seeds nothing');
      assert.equal((await full.store.reader.getChainStatus('eth'))?.seedBlock, undefined);

      for (const [indexer, seedBlock, multicall] of [
        [plain, beforeMulticall, false],
        [batched, beforeLast, true],
      ] as const) {
        const status = await indexer.store.reader.getChainStatus('eth');
        assert.equal(status?.seedBlock, seedBlock);
        assert.equal(status?.holdersPartial, undefined);
        assert.ok(indexer.reads.multicall.length > 0);
        assert.ok(
          indexer.reads.multicall.every((m) => m === multicall),
          `Multicall3 used: ${indexer.reads.multicall}`,
        );
        // A token created after the start is never read: all its holders started at 0.
        assert.ok(indexer.reads.pairs.every((p) => p.token !== fresh.address));
        await assertExact(indexer.store, full.store, url, tokens);
        // The address and holder views too: every address the late index names holds its
        // balanceOf, every holder list is the node's (holders that never moved since the start
        // are never seen), and a sample of address transfer lists is the node's from the start on.
        assert.deepEqual(
          await diffStoreAgainstNode(
            indexer.store,
            'eth',
            await readNodeTruth(url, undefined, seedBlock + 1),
            {
              supply: false,
              views: { transferSample: 40 },
            },
          ),
          [],
          `the late index from block ${seedBlock + 1} against the node`,
        );
        const report = await verifyChain({
          store: indexer.store,
          chain: 'eth',
          source: createEvmSource({ rpc: createRpcClient({ url, logger }), logger }),
          sample: 1000,
          logger,
        });
        assert.deepEqual(report.differences, []);
        assert.equal(report.seedBlock, seedBlock);
        assert.ok(report.seeds > 500, `seeds: ${report.seeds}`);
        assert.ok(report.nodeChecks > 500, `node checks: ${report.nodeChecks}`);
      }
      // More than one aggregate3 call's worth at once (500 calls each).
      const sprayedHolders = batched.reads.pairs.filter((p) => p.token === old.address).length;
      assert.ok(sprayedHolders > 500, `holders seeded: ${sprayedHolders}`);
      // a1 went to zero and was refunded; it was seeded once, from its balance before the start.
      const a1 = accounts[1]!;
      assert.equal(batched.reads.pairs.filter((p) => p.token === old.address && p.holder === a1).length, 1);
      assert.equal(await batched.store.reader.getBalance('eth', old.address, a1), units(50));

      // The batched reads really go through aggregate3 (a failed one would fall back to one call
      // each): one eth_call per 500 balances, the same answers.
      let ethCalls = 0;
      const counted = createEvmSource({
        rpc: createRpcClient({
          url,
          logger,
          observe: (method, calls) => {
            if (method === 'eth_call') ethCalls += calls;
          },
        }),
        logger,
      });
      // Multicall3 has no balanceOf: that call reverts alone and reads as null.
      const pairs = [...batched.reads.pairs.slice(0, 599), { token: MULTICALL3_ADDRESS, holder: a1 }];
      const viaMulticall = await counted.readBalancesAt(pairs, beforeLast, { multicall: true });
      assert.equal(ethCalls, 2);
      assert.deepEqual(viaMulticall, await counted.readBalancesAt(pairs, beforeLast, { multicall: false }));
      assert.equal(ethCalls, 602);
      assert.equal(viaMulticall[599], null);
      assert.ok(viaMulticall.slice(0, 599).every((amount) => amount !== null));
      assert.ok(viaMulticall.some((amount) => amount !== null && amount > 0n));
      // Many at once: ten aggregate3 calls would be ~2 MB in one request, more than anvil takes.
      const many = Array.from({ length: 5000 }, (_, i) => ({
        token: old.address,
        holder: `0x${(0xabc00000 + i).toString(16).padStart(40, '0')}`,
      }));
      ethCalls = 0;
      const zeros = await counted.readBalancesAt(many, beforeLast, { multicall: true });
      assert.equal(ethCalls, 10);
      assert.ok(zeros.every((amount) => amount === 0n));
    } finally {
      await Promise.all([full.stop(), plain.stop(), batched.stop()]);
    }
  });

  test('a restart seeds at the block the first run chose, whatever fromBlock says now', async () => {
    const url = anvil.url;
    const first = await startIndexer(url, 'restart.sqlite', beforeLast + 1);
    await caughtUp(first.store, url);
    await first.stop();
    // a6 has not moved since phase 1: its first transfer now must start from its 77 tokens.
    const a6 = accounts[6]!;
    await transferToken(url, old, { from: a6, to: accounts[7]!, amount: units(7) });
    const second = await startIndexer(url, 'restart.sqlite', beforeLast + 5);
    try {
      await caughtUp(second.store, url);
      assert.equal((await second.store.reader.getChainStatus('eth'))?.seedBlock, beforeLast);
      assert.equal(await second.store.reader.getBalance('eth', old.address, a6), units(70));
      assert.equal(await second.store.reader.getBalance('eth', old.address, accounts[7]!), units(7));
      assert.deepEqual(
        second.reads.pairs.map((p) => p.holder).sort(),
        [a6, accounts[7]!].sort(),
        'only the two new holders are read',
      );
    } finally {
      await second.stop();
    }
  });
});

describe('late start on a node that keeps no old state', () => {
  let anvil: AnvilInstance;
  let token: DeployedToken;
  let start: number;

  before(async () => {
    // anvil keeps the state of its newest 4 blocks only, like a full node that is not an archive.
    anvil = await startAnvil({ args: ['--prune-history', '4'] });
    const url = anvil.url;
    const [deployer, a1, a2] = (await getAccounts(url)) as [string, string, string];
    token = await deployToken(url, DEMO_TOKEN_SPECS[0]!);
    await transferToken(url, token, { from: deployer, to: a1, amount: units(10) });
    start = (await getBlockNumber(url)) + 1;
    await transferToken(url, token, { from: a1, to: a2, amount: units(4) });
    await transferToken(url, token, { from: deployer, to: a2, amount: units(1) });
    await rpc(url, 'anvil_mine', ['0xa']);
  });
  after(async () => {
    await anvil?.stop();
  });

  test('indexing goes on without seeds, and /status says holder counts are partial', async () => {
    const url = anvil.url;
    const indexer = await startIndexer(url, 'pruned.sqlite', start);
    const server = await startApiServer({
      store: indexer.store,
      logger,
      chains: ['eth'],
      host: '127.0.0.1',
      port: 0,
    });
    try {
      await caughtUp(indexer.store, url);
      const status = await indexer.store.reader.getChainStatus('eth');
      assert.equal(status?.holdersPartial, true);
      assert.equal(status?.seedBlock, start - 1);
      assert.equal((await indexer.store.reader.getToken('eth', token.address))?.transferCount, 2);
      const body = (await (await fetch(`${server.url}/status`)).json()) as {
        chains: Record<string, Record<string, unknown>>;
      };
      assert.equal(body.chains.eth?.holdersPartial, true);
      assert.equal(body.chains.eth?.indexed, await getBlockNumber(url));
      // Without a starting balance, the sender's balance counts from 0 (as before seeding existed).
      const [deployer, a1] = (await getAccounts(url)) as [string, string];
      assert.equal(await indexer.store.reader.getBalance('eth', token.address, a1), -units(4));
      assert.ok((await indexer.store.reader.getBalance('eth', token.address, deployer)) < 0n);
      // New blocks still index after the fault.
      await transferToken(url, token, { from: deployer, to: a1, amount: 1n });
      await caughtUp(indexer.store, url);
      assert.equal((await indexer.store.reader.getToken('eth', token.address))?.transferCount, 3);
    } finally {
      await server.close();
      await indexer.stop();
    }
  });
});
