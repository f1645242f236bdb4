/**
 * The indexer against a real local EVM node (anvil from npm): backfill, following the head and
 * reorgs. Every check compares the store with the node's own truth: its Transfer logs and its
 * `balanceOf` / `totalSupply` state.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeTransferLog } from '../chains/evm/abi.js';
import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { encodeCall } from '../devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getBlockNumber, reorg } from '../devchain/chain.js';
import {
  balancesOf,
  burnToken,
  type DeployedToken,
  deployDemoTokens,
  mintToken,
  selector,
  totalSupply,
} from '../devchain/deploy.js';
import { SPRAY_GAS_LIMIT, sendTransfers, spray } from '../devchain/traffic.js';
import { FatalIndexerError } from '../internal/errors.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { IndexBatch, Store, StoreWriter, TransferRecord } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';

const ZERO = '0x0000000000000000000000000000000000000000';
const tmp = mkdtempSync(join(tmpdir(), 'tq-anvil-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const logger = silentLogger();

/**
 * Runs an in-process indexer on `url` into a fresh store until stopped. `writer` may stand in
 * front of the store's writer (a fault to inject).
 */
async function startIndexer(
  url: string,
  db: string,
  options: { finalityDepth: number; writer?: (writer: StoreWriter) => StoreWriter },
) {
  const store = await openSqliteStore({ path: join(tmp, db), logger });
  const controller = new AbortController();
  const source = createEvmSource({ rpc: createRpcClient({ url, logger, retryBaseMs: 5 }), logger });
  const running = createEvmIndexer({
    chain: {
      name: 'eth',
      rpcUrl: url,
      fromBlock: 0,
      finalityDepth: options.finalityDepth,
      pollIntervalMs: 20,
    },
    source,
    store: options.writer?.(store.writer) ?? store.writer,
    logger,
    signal: controller.signal,
    tty: false,
    supplyRefreshBlocks: 1,
  }).run();
  running.catch(() => {}); // inspected by the tests that expect a failure
  return {
    store,
    running,
    async stop() {
      controller.abort();
      await running.catch(() => {});
      await store.close();
    },
  };
}

/** Waits until the store's checkpoint is the node's head and every dirty supply has been re-read. */
async function caughtUp(store: Store, url: string): Promise<void> {
  await waitFor('the indexer to reach the head', async () => {
    const head = await getBlockNumber(url);
    return (
      (await store.writer.getCheckpoint('eth'))?.block === head &&
      (await store.writer.tokensNeedingSupply('eth', -1, 1)).length === 0
    );
  });
}

/** The node's truth, from its logs and state, for the given tokens. */
async function nodeTruth(url: string, tokens: readonly string[]) {
  const source = createEvmSource({ rpc: createRpcClient({ url, logger }), logger });
  const head = await source.blockNumber();
  const logs = await source.getTransferLogs(0, head);
  const transfers = logs.map((l) => decodeTransferLog(l, 0)).filter((t): t is TransferRecord => t !== null);
  const result = new Map<
    string,
    { transfers: TransferRecord[]; balances: Map<string, bigint>; supply: bigint }
  >();
  for (const token of tokens) {
    const mine = transfers.filter((t) => t.token === token);
    const holders = [...new Set(mine.flatMap((t) => [t.from, t.to]))].filter((a) => a !== ZERO);
    const balances = await balancesOf(url, token, holders);
    result.set(token, {
      transfers: mine,
      balances: new Map(holders.map((h, i) => [h, balances[i]!])),
      supply: await totalSupply(url, token),
    });
  }
  return result;
}

/** Asserts the store equals the node exactly: transfers, balances, holder and transfer counts, supply. */
async function assertStoreMatchesNode(store: Store, url: string, tokens: readonly string[]): Promise<void> {
  const truth = await nodeTruth(url, tokens);
  for (const [token, expected] of truth) {
    const stored = await store.reader.getToken('eth', token);
    if (expected.transfers.length === 0) {
      assert.equal(stored, null, `token ${token} has no transfers on the node but is stored`);
      continue;
    }
    assert.ok(stored, `token ${token} missing`);
    assert.equal(stored.transferCount, expected.transfers.length, `transfer count of ${token}`);
    const rows = await store.reader.listTransfers('eth', token, 0, stored.transferCount + 10);
    const key = (t: TransferRecord) =>
      `${t.blockNumber}/${t.logIndex}/${t.txHash}/${t.from}/${t.to}/${t.value}`;
    assert.deepEqual(rows.map(key).sort(), expected.transfers.map(key).sort(), `transfers of ${token}`);
    let holders = 0;
    for (const [holder, balance] of expected.balances) {
      assert.equal(
        await store.reader.getBalance('eth', token, holder),
        balance,
        `balance of ${holder} in ${token}`,
      );
      if (balance > 0n) holders++;
    }
    assert.equal(stored.holderCount, holders, `holder count of ${token}`);
    assert.equal(stored.totalSupply, expected.supply, `total supply of ${token}`);
  }
}

describe('indexer against a real anvil node', () => {
  let anvil: AnvilInstance;
  let tokens: DeployedToken[];
  let addresses: string[];

  before(async () => {
    anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
    tokens = await deployDemoTokens(anvil.url);
    addresses = tokens.map((t) => t.address);
    await spray(anvil.url, tokens[0]!, { transfers: 5_000, holders: 300, seed: 7, perTx: 1_000 });
    await sendTransfers(anvil.url, tokens, { count: 30, seed: 3 });
  });
  after(async () => {
    await anvil?.stop();
  });

  test('backfills, then follows new blocks, mints and burns exactly', async () => {
    const indexer = await startIndexer(anvil.url, 'follow.sqlite', { finalityDepth: 3 });
    try {
      await caughtUp(indexer.store, anvil.url);
      await assertStoreMatchesNode(indexer.store, anvil.url, addresses);

      const standard = tokens[0]!;
      await sendTransfers(anvil.url, tokens, { count: 12, seed: 11 });
      await mintToken(anvil.url, standard, {
        to: '0x00000000000000000000000000000000000000aa',
        amount: 5n * 10n ** 18n,
      });
      await burnToken(anvil.url, standard, { amount: 10n ** 18n });
      await caughtUp(indexer.store, anvil.url);
      await assertStoreMatchesNode(indexer.store, anvil.url, addresses);
      const status = await indexer.store.reader.getChainStatus('eth');
      assert.equal(status?.head, await getBlockNumber(anvil.url));
    } finally {
      await indexer.stop();
    }
  });

  test('a reorg inside the window is rolled back exactly, with no phantom transfers', async () => {
    const indexer = await startIndexer(anvil.url, 'reorg.sqlite', { finalityDepth: 10 });
    try {
      await sendTransfers(anvil.url, tokens, { count: 6, seed: 21 });
      await caughtUp(indexer.store, anvil.url);
      const before = await indexer.store.reader.getToken('eth', tokens[1]!.address);

      // Replace the newest 4 blocks (they hold transfers) with blocks holding one different transfer.
      const [sender] = (await balancesOf(anvil.url, tokens[1]!, [tokens[1]!.deployer])).map(
        () => tokens[1]!.deployer,
      );
      const data = encodeCall(selector('transfer(address,uint256)'), [
        { type: 'address', value: '0x00000000000000000000000000000000000000bb' },
        { type: 'uint256', value: 12345n },
      ]);
      await reorg(anvil.url, 4, [{ tx: { from: sender!, to: tokens[1]!.address, data }, blockOffset: 1 }]);
      await waitFor('the reorg to be noticed', async () => {
        const head = await getBlockNumber(anvil.url);
        const [headBlock] = await indexer.store.writer.getBlockRefs('eth', head, head);
        const node = await createEvmSource({
          rpc: createRpcClient({ url: anvil.url, logger }),
          logger,
        }).getHeaders([head]);
        return headBlock?.hash === node[0]?.hash;
      });
      await caughtUp(indexer.store, anvil.url);
      await assertStoreMatchesNode(indexer.store, anvil.url, addresses);
      assert.equal(
        await indexer.store.reader.getBalance(
          'eth',
          tokens[1]!.address,
          '0x00000000000000000000000000000000000000bb',
        ),
        12345n,
      );
      assert.ok(before, 'token existed before the reorg');
    } finally {
      await indexer.stop();
    }
  });

  test('a reorg deeper than the window stops the chain with a clear error instead of corrupting data', async () => {
    const indexer = await startIndexer(anvil.url, 'deep.sqlite', { finalityDepth: 2 });
    try {
      await caughtUp(indexer.store, anvil.url);
      const checkpoint = await indexer.store.writer.getCheckpoint('eth');
      await reorg(anvil.url, 6);
      await assert.rejects(indexer.running, (error: unknown) => {
        assert.ok(error instanceof FatalIndexerError);
        assert.match(error.shortMessage, /deeper than the unfinalized window/);
        return true;
      });
      const status = await indexer.store.reader.getChainStatus('eth');
      assert.match(status?.lastError ?? '', /deeper than the unfinalized window/);
      assert.deepEqual(
        await indexer.store.writer.getCheckpoint('eth'),
        checkpoint,
        'nothing was rolled back or written',
      );
    } finally {
      await indexer.stop();
    }
  });
});

describe('indexer on a nearly full disk', () => {
  test('a backfill whose batches do not fit goes on in smaller ones, and ends exact', async () => {
    // A chain of its own, short enough that the halvings (each after the loop's backoff) are few.
    const anvil = await startAnvil();
    const diskFull = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    // A disk with room for two blocks at a time: larger batches fail as SQLite fails on a full disk.
    const spans: { blocks: number; ok: boolean }[] = [];
    let indexer: Awaited<ReturnType<typeof startIndexer>> | undefined;
    try {
      const tokens = await deployDemoTokens(anvil.url);
      await sendTransfers(anvil.url, tokens, { count: 16, seed: 5 });
      indexer = await startIndexer(anvil.url, 'nearly-full.sqlite', {
        finalityDepth: 0,
        writer: (writer) =>
          new Proxy(writer, {
            get(target, key, receiver) {
              if (key !== 'applyBatch') return Reflect.get(target, key, receiver);
              return async (batch: IndexBatch) => {
                const blocks = batch.toBlock - batch.fromBlock + 1;
                spans.push({ blocks, ok: blocks <= 2 });
                if (blocks > 2) throw diskFull();
                await target.applyBatch(batch);
              };
            },
          }),
      });
      await caughtUp(indexer.store, anvil.url);
      await assertStoreMatchesNode(
        indexer.store,
        anvil.url,
        tokens.map((t) => t.address),
      );
      const refused = spans.filter((s) => !s.ok);
      assert.ok(refused.length >= 1, `no batch was refused: ${JSON.stringify(spans)}`);
      // Each refusal halves the span (never back up to the refused one before a success).
      for (let i = 1; i < spans.length; i++) {
        if (!spans[i - 1]!.ok && spans[i]!.blocks > 1)
          assert.ok(spans[i]!.blocks <= spans[i - 1]!.blocks / 2, `spans: ${JSON.stringify(spans)}`);
      }
    } finally {
      await indexer?.stop();
      await anvil.stop();
    }
  });
});

// Crashes (SIGKILL of the CLI at random moments, then resume) are covered by crash.chaos.test.ts.
