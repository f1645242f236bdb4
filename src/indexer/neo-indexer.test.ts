/**
 * The NEO indexer in-process against the fake NEO node: the window around mainnet block
 * 1444843 (RPX `deploy`, a method call minting 3 balances), the genesis blocks (NEO and GAS
 * registered, NEO issued), resolution of inputs from the output table, following new blocks,
 * transient node faults, and the errors that must stop it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { createNeoSource } from '../chains/neo/source.js';
import { type FakeNeoNode, startFakeNeoNode } from '../chains/neo/testing/fake-neo-node.js';
import { loadNeoscanRecordings } from '../chains/neo/testing/recordings.js';
import {
  fillWindow,
  RPX_DEPLOY_BLOCK,
  RPX_HASH,
  rpxDeployWindow,
  synthesizeAssetState,
} from '../chains/neo/testing/synthetic.js';
import { GAS_ASSET_ID, NEO_ASSET_ID } from '../chains/neo/utxo.js';
import { FatalIndexerError } from '../internal/errors.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { indexBatch } from '../store/testing/batches.js';
import type { Store } from '../store/types.js';
import { createNeoIndexer } from './neo-indexer.js';
import { assertStoreMatchesTruth, holdersOf, neoExpectedViews, neoWindowTruth } from './testing/neo-truth.js';
import {
  EXTRAS_BLOCK,
  neoIndexerWindow,
  PUBLISH_TXID,
  SPEND_RECIPIENT,
  SPEND_TXID,
  SPENT_OWNER,
} from './testing/neo-window.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-neo-indexer-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const logger = silentLogger();
let dbs = 0;

interface Running {
  store: Store;
  running: Promise<void>;
  stop(): Promise<void>;
}

async function startIndexer(
  node: FakeNeoNode,
  options: { fromBlock: number; rangeBlocks?: number; db?: string },
): Promise<Running> {
  const store = await openSqliteStore({ path: options.db ?? join(tmp, `neo-${++dbs}.sqlite`), logger });
  const controller = new AbortController();
  const rpc = createRpcClient({ url: node.url, logger, retryBaseMs: 5, signal: controller.signal });
  const running = createNeoIndexer({
    chain: {
      name: 'neo',
      rpcUrl: node.url,
      fromBlock: options.fromBlock,
      finalityDepth: 0,
      pollIntervalMs: 20,
    },
    source: createNeoSource({ rpc, logger, invalidRetryBaseMs: 5 }),
    store: store.writer,
    logger,
    signal: controller.signal,
    tty: false,
    supplyRefreshBlocks: 1,
    ...(options.rangeBlocks === undefined ? {} : { rangeBlocks: options.rangeBlocks }),
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

/** Checkpoint at `head` and every supply read. */
async function caughtUp(store: Store, head: number): Promise<void> {
  await waitFor(`the indexer to reach block ${head}`, async () => {
    return (
      (await store.writer.getCheckpoint('neo'))?.block === head &&
      (await store.writer.tokensNeedingSupply('neo', -1, 1)).length === 0
    );
  });
}

describe('NEO indexer over the window around block 1444843', () => {
  const from = RPX_DEPLOY_BLOCK - 3;
  const to = EXTRAS_BLOCK + 2;

  test('backfills exactly: RPX mints, asset transfers, holders from outputs, the deployment', async () => {
    const node = await startFakeNeoNode(neoIndexerWindow(from, to));
    const indexer = await startIndexer(node, { fromBlock: from, rangeBlocks: 2 });
    try {
      await caughtUp(indexer.store, to);
      const truth = await neoWindowTruth(node.url, from, to);
      await assertStoreMatchesTruth(indexer.store, truth);
      // Holders of both kinds are there to compare: RPX's from its mints, NEO's and GAS's from outputs.
      const views = neoExpectedViews(truth);
      assert.equal(views.get(RPX_HASH)?.transfers.length, 3);
      assert.ok(holdersOf(truth, NEO_ASSET_ID) >= 2, 'NEO holders in the window');
      assert.ok(holdersOf(truth, GAS_ASSET_ID) >= 1, 'GAS holders in the window');

      // The recorded data the truth must contain, so that the comparison above means something.
      assert.equal(truth.rpxMints.length, 3);
      assert.ok(
        truth.assetTransfers
          .get(NEO_ASSET_ID)
          ?.some(
            (t) =>
              t.txHash === SPEND_TXID &&
              t.from === SPENT_OWNER &&
              t.to === SPEND_RECIPIENT &&
              t.value === 200n,
          ),
      );
      assert.deepEqual(
        truth.deployments.map((d) => [d.txHash, d.name, d.blockNumber]),
        [[PUBLISH_TXID, 'AgencyContract', EXTRAS_BLOCK]],
      );

      // RPX's metadata is not recorded: the fake node answers its calls as a node answers a
      // contract without those methods (FAULT), which reads as "", "", 0 and no supply.
      const rpx = await indexer.store.neo.getNeoToken('neo', RPX_HASH);
      assert.deepEqual(
        { name: rpx?.name, symbol: rpx?.symbol, decimals: rpx?.decimals, totalSupply: rpx?.totalSupply },
        { name: '', symbol: '', decimals: 0, totalSupply: null },
      );
      // RPX was deployed long before the window: no creation time, no creator.
      assert.equal(rpx?.category, 'NEP5');
      assert.equal(rpx?.createdAt, null);
      assert.equal(rpx?.creator, null);

      // Assets: names as docs/api.md#neo-names gives them, supplies from the (recorded /
      // synthetic) asset states.
      const neo = await indexer.store.neo.getNeoToken('neo', NEO_ASSET_ID);
      assert.equal(neo?.name, 'NEO');
      assert.equal(neo?.symbol, 'NEO');
      assert.equal(neo?.decimals, 0);
      assert.equal(neo?.category, 'GoverningToken');
      const neoState = loadNeoscanRecordings().assets.find((a) => a.id === NEO_ASSET_ID)!;
      assert.equal(neo?.totalSupply, BigInt(neoState.available as string));
      assert.equal(neo?.cap, BigInt(neoState.amount as string));
      const gas = await indexer.store.neo.getNeoToken('neo', GAS_ASSET_ID);
      assert.equal(gas?.category, 'UtilityToken');
      assert.equal(gas?.symbol, 'GAS');
      assert.equal(gas?.decimals, 8);

      const status = await indexer.store.reader.getChainStatus('neo');
      assert.equal(status?.head, to);
      assert.equal(status?.indexed, to);
      assert.equal(status?.lastError, null);
    } finally {
      await indexer.stop();
      await node.close();
    }
  });

  test('an input spending an earlier range is resolved from the output table, not the node', async () => {
    const node = await startFakeNeoNode(neoIndexerWindow(from, to));
    const db = join(tmp, 'table.sqlite');
    node.setHead(RPX_DEPLOY_BLOCK);
    let indexer = await startIndexer(node, { fromBlock: from, db });
    try {
      await caughtUp(indexer.store, RPX_DEPLOY_BLOCK);
      await indexer.stop();
      const before = node.calls.get('getrawtransaction') ?? 0;
      node.setHead(to);
      indexer = await startIndexer(node, { fromBlock: from, db });
      await caughtUp(indexer.store, to);
      // Only the PublishTransaction's own (older) input went to the node.
      assert.equal((node.calls.get('getrawtransaction') ?? 0) - before, 1);
      await assertStoreMatchesTruth(indexer.store, await neoWindowTruth(node.url, from, to));
      const outputs = await indexer.store.writer.getNeoOutputs('neo', [
        { txid: SPEND_TXID, n: 0 },
        { txid: '0xafef3f6d901bfab3a70e4a1a05bb403a2e067d543fc05717fcb1827db25b17bc', n: 0 },
      ]);
      assert.deepEqual(
        outputs.map((o) => [o.txid, o.n, o.address, o.value]),
        [[SPEND_TXID, 0, SPEND_RECIPIENT, 200n * 100_000_000n]],
        'the spent output left the table, the new one is in it',
      );
    } finally {
      await indexer.stop();
      await node.close();
    }
  });

  test('follows new blocks as the node produces them', async () => {
    const node = await startFakeNeoNode(neoIndexerWindow(from, to));
    node.setHead(RPX_DEPLOY_BLOCK - 1);
    const indexer = await startIndexer(node, { fromBlock: from });
    try {
      await caughtUp(indexer.store, RPX_DEPLOY_BLOCK - 1);
      assert.equal(await indexer.store.neo.getNeoToken('neo', RPX_HASH), null);
      for (let head = RPX_DEPLOY_BLOCK; head <= to; head++) {
        node.setHead(head);
        await caughtUp(indexer.store, head);
      }
      await assertStoreMatchesTruth(indexer.store, await neoWindowTruth(node.url, from, to));
      assert.equal((await indexer.store.reader.getChainStatus('neo'))?.head, to);
    } finally {
      await indexer.stop();
      await node.close();
    }
  });

  test('transient node faults are retried and change nothing', async () => {
    const node = await startFakeNeoNode(neoIndexerWindow(from, to));
    node.injectFaults(
      { type: 'status', status: 503 },
      { type: 'drop' },
      { type: 'malformed' },
      { type: 'rpc-error', code: -32603, message: 'internal error' },
      { type: 'status', status: 500 },
      { type: 'delay', ms: 50 },
      { type: 'drop' },
    );
    const indexer = await startIndexer(node, { fromBlock: from, rangeBlocks: 1 });
    try {
      await caughtUp(indexer.store, to);
      await assertStoreMatchesTruth(indexer.store, await neoWindowTruth(node.url, from, to));
    } finally {
      await indexer.stop();
      await node.close();
    }
  });
});

describe('NEO indexer over the genesis blocks', () => {
  test('NEO and GAS registrations give creation time and creator; the NEO issue is a mint', async () => {
    const recordings = loadNeoscanRecordings();
    const real = recordings.blocks.filter((b) => (b.index as number) <= 2);
    const genesis = real[0]!;
    const gasRegistration = (genesis.tx as Record<string, unknown>[]).find((tx) => tx.txid === GAS_ASSET_ID)!;
    const node = await startFakeNeoNode({
      blocks: fillWindow(real, 0, 4),
      assets: [...recordings.assets, synthesizeAssetState(gasRegistration, '0')],
      head: 4,
    });
    const indexer = await startIndexer(node, { fromBlock: 0 });
    try {
      await caughtUp(indexer.store, 4);
      const issue = (genesis.tx as Record<string, unknown>[]).find((tx) => tx.type === 'IssueTransaction')!;
      const issued = (issue.vout as { address: string; value: string }[])[0]!;
      const neoRegistration = (genesis.tx as Record<string, unknown>[]).find(
        (tx) => tx.txid === NEO_ASSET_ID,
      )!;
      const neo = await indexer.store.neo.getNeoToken('neo', NEO_ASSET_ID);
      assert.equal(neo?.category, 'GoverningToken');
      assert.equal(neo?.createdAt, genesis.time);
      // Genesis transactions carry no witness: the registration's admin stands for the registrar.
      assert.equal(neo?.creator, (neoRegistration.asset as { admin: string }).admin);
      assert.equal(neo?.holderCount, 1);
      assert.equal(neo?.transferCount, 1);
      const [mint] = await indexer.store.reader.listTransfers('neo', NEO_ASSET_ID, 0, 10);
      assert.deepEqual(mint && [mint.blockNumber, mint.txHash, mint.from, mint.to, mint.value], [
        0,
        issue.txid,
        '',
        issued.address,
        BigInt(issued.value),
      ]);
      // GAS is registered but no output of it exists yet: not a token of the index.
      assert.equal(await indexer.store.neo.getNeoToken('neo', GAS_ASSET_ID), null);
      assert.deepEqual((await indexer.store.neo.listNeoTokens('neo', 0, 10)).total, 1);
    } finally {
      await indexer.stop();
      await node.close();
    }
  });
});

describe('NEO indexer failures', () => {
  test('a node without application logs stops the chain with a clear error', async () => {
    const window = rpxDeployWindow(RPX_DEPLOY_BLOCK - 1, RPX_DEPLOY_BLOCK + 1);
    const node = await startFakeNeoNode({ ...window, applicationLogs: [] });
    const indexer = await startIndexer(node, { fromBlock: RPX_DEPLOY_BLOCK - 1 });
    try {
      await assert.rejects(indexer.running, (error: unknown) => {
        assert.ok(error instanceof FatalIndexerError);
        assert.match(error.shortMessage, /ApplicationLogs plugin/);
        return true;
      });
      assert.match(
        (await indexer.store.reader.getChainStatus('neo'))?.lastError ?? '',
        /ApplicationLogs plugin/,
      );
      assert.equal(await indexer.store.neo.getNeoToken('neo', RPX_HASH), null);
    } finally {
      await indexer.stop();
      await node.close();
    }
  });

  test('a node whose chain does not continue the stored checkpoint stops the chain, writing nothing', async () => {
    const node = await startFakeNeoNode(rpxDeployWindow(RPX_DEPLOY_BLOCK - 2, RPX_DEPLOY_BLOCK + 1));
    const db = join(tmp, 'other-chain.sqlite');
    // A store that indexed block 1444841 of some other chain.
    const other = await openSqliteStore({ path: db, logger });
    await other.writer.applyBatch(
      indexBatch({
        chain: 'neo',
        fromBlock: RPX_DEPLOY_BLOCK - 2,
        toBlock: RPX_DEPLOY_BLOCK - 2,
        toBlockHash: `0x${'ab'.repeat(32)}`,
        pruneBlocksBelow: RPX_DEPLOY_BLOCK - 1,
      }),
    );
    await other.close();
    const indexer = await startIndexer(node, { fromBlock: 0, db });
    try {
      await assert.rejects(indexer.running, (error: unknown) => {
        assert.ok(error instanceof FatalIndexerError);
        assert.match(error.shortMessage, /another chain/);
        return true;
      });
      assert.equal((await indexer.store.writer.getCheckpoint('neo'))?.block, RPX_DEPLOY_BLOCK - 2);
      assert.equal(await indexer.store.neo.getNeoToken('neo', RPX_HASH), null);
    } finally {
      await indexer.stop();
      await node.close();
    }
  });

  test('outputs the node cannot resolve are retried, never skipped', async () => {
    const window = rpxDeployWindow(RPX_DEPLOY_BLOCK - 1, RPX_DEPLOY_BLOCK);
    // The synthetic prevouts gone: the inputs of block 1444843 cannot be resolved.
    const node = await startFakeNeoNode({ ...window, transactions: [] });
    const indexer = await startIndexer(node, { fromBlock: RPX_DEPLOY_BLOCK - 1, rangeBlocks: 1 });
    try {
      await waitFor('the error to be recorded', async () =>
        /cannot be resolved/.test((await indexer.store.reader.getChainStatus('neo'))?.lastError ?? ''),
      );
      assert.equal((await indexer.store.writer.getCheckpoint('neo'))?.block, RPX_DEPLOY_BLOCK - 1);
      assert.equal(await indexer.store.neo.getNeoToken('neo', RPX_HASH), null);
    } finally {
      await indexer.stop();
      await node.close();
    }
  });
});
