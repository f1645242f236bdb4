/**
 * Exact balances for tokens that move balances without a `Transfer` log (issue #18), against a
 * real local node (anvil from npm) and the real indexer: WETH9's canonical bytecode (deposits,
 * withdrawals, and deposits before its first `Transfer`), a Tether-style token built with solc
 * 0.4.17 (issue and redeem crediting whoever `owner()` is as ownership moves without a log,
 * blacklisted funds destroyed), a vault that logs a `Deposit` and a `Transfer` mint for one change,
 * and a staking pool that logs WETH9's `Deposit` without being a token. After a backfill, after
 * following the head, and after an `anvil_reorg` across those events: every address's balance,
 * every holder page and `holderCnt` equal `balanceOf` at the head, through the store and over
 * HTTP; `transferCnt` and the transfer lists hold the `Transfer` logs only; `verify` finds
 * nothing. Then a late start, whose holders are seeded, is exact too.
 *
 * On SQLite; on PostgreSQL too with `TOKENQUERY_CHAOS_BACKENDS=sqlite,postgres` and
 * `TOKENQUERY_CHAOS_POSTGRES_URL` (see `testing/chaos.ts`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ApiServer, startApiServer } from '../api/server.js';
import { BALANCE_EVENT_TOPICS } from '../chains/evm/abi.js';
import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { encodeCall } from '../devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import {
  getAccounts,
  getBlockNumber,
  mine,
  reorg,
  sendTransaction,
  waitForReceipt,
} from '../devchain/chain.js';
import { DepositVault, TetherStyleToken } from '../devchain/contracts.generated.js';
import { selector, totalSupply } from '../devchain/deploy.js';
import { rpc, toQuantity } from '../devchain/rpc.js';
import { ZERO_ADDRESS } from '../internal/chains.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import { createTestApiKey } from '../store/testing/api-key.js';
import type { IndexBatch, Store, StoreWriter } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';
import { diffApiAddressViews } from './testing/api-address-view.js';
import { type ChaosBackend, chaosBackends, openAt } from './testing/chaos.js';
import {
  diffStoreAgainstNode,
  followedHead,
  type NodeTruth,
  nodeBalances,
  nodeTransfers,
} from './testing/evm-truth.js';
import { deployExactContracts, type ExactTraffic, exactTraffic } from './testing/exact-traffic.js';
import { verifyChain } from './verify.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-exact-balances-'));
const logger = silentLogger();
const FINALITY = 8;

after(() => rmSync(tmp, { recursive: true, force: true }));

for (const backend of chaosBackends(tmp)) {
  describe(`exact balances without Transfer logs against a real anvil node (${backend.name})`, () => {
    exactScenario(backend);
  });
}

/** Logs of each balance event on the node in `0..head`, by kind. */
async function eventCounts(url: string, head: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [kind, topic] of Object.entries(BALANCE_EVENT_TOPICS)) {
    const logs = await rpc<unknown[]>(url, 'eth_getLogs', [
      { fromBlock: '0x0', toBlock: toQuantity(head), topics: [topic] },
    ]);
    out[kind] = logs.length;
  }
  return out;
}

function exactScenario(backend: ChaosBackend): void {
  let anvil: AnvilInstance;
  let traffic: ExactTraffic;
  let store: Store;
  let controller: AbortController;
  let running: Promise<void>;
  let server: ApiServer;
  let key: string;
  /** The block the late start begins at (the first block of the second round of traffic). */
  let lateFrom = 0;

  const startIndexer = (
    target: Store,
    fromBlock: number,
    signal: AbortSignal,
    options: { writer?: StoreWriter; commitAtOnce?: boolean } = {},
  ) =>
    createEvmIndexer({
      chain: { name: 'eth', rpcUrl: anvil.url, fromBlock, finalityDepth: FINALITY, pollIntervalMs: 20 },
      source: createEvmSource({ rpc: createRpcClient({ url: anvil.url, logger, retryBaseMs: 5 }), logger }),
      store: options.writer ?? target.writer,
      logger,
      signal,
      tty: false,
      supplyRefreshBlocks: 1,
      // Small batches: the backfill's ranges split the events among several commits.
      initialRange: 7,
      ...(options.commitAtOnce ? { minBatchTransfers: 1, maxBatchWaitMs: 0 } : {}),
    }).run();

  before(async () => {
    anvil = await startAnvil({ accounts: 12 });
    traffic = exactTraffic(anvil.url, await deployExactContracts(anvil.url));
    // The first round is indexed by the backfill; its first calls are WETH9 deposits, before any
    // WETH9 Transfer.
    await traffic.run(140, 18, 4);
    store = await openAt(await backend.freshLocation('exact'), logger);
    controller = new AbortController();
    running = startIndexer(store, 0, controller.signal);
    key = (await createTestApiKey(store, 'exact')).key;
    server = await startApiServer({ store, logger, chains: ['eth'], host: '127.0.0.1', port: 0 });
  });

  after(async () => {
    await server?.close();
    controller?.abort();
    await running?.catch(() => {});
    await store?.close();
    await anvil?.stop();
    await backend.cleanup();
  });

  const followed = (target: Store = store): Promise<number> => followedHead(target, anvil.url);

  /**
   * The node's truth at `head` for the three tokens, as an index starting at `fromBlock` sees it:
   * their Transfer logs from then on, and `balanceOf` of every address the traffic touched from
   * then on (from the start: every account and contract).
   */
  async function nodeTruth(head: number, fromBlock = 0): Promise<NodeTruth> {
    const { weth, tether, vault, accounts } = traffic.contracts;
    const transfers = (await nodeTransfers(anvil.url, head)).filter((t) => t.blockNumber >= fromBlock);
    const tokens: NodeTruth['tokens'] = new Map();
    for (const token of [weth, tether, vault]) {
      const named =
        fromBlock === 0
          ? [...accounts, weth, tether, vault]
          : [
              ...new Set([
                ...traffic.touched
                  .filter((t) => t.token === token && t.block >= fromBlock)
                  .map((t) => t.address),
                ...transfers.filter((t) => t.token === token).flatMap((t) => [t.from, t.to]),
              ]),
            ].filter((address) => address !== ZERO_ADDRESS);
      tokens.set(token, {
        transfers: transfers.filter((t) => t.token === token),
        balances: await nodeBalances(anvil.url, token, named, head),
        supply: await totalSupply(anvil.url, token, head),
      });
    }
    return { head, tokens };
  }

  /**
   * `verify` of `target`, with the node: the largest holders compared with `balanceOf`, and the
   * summed balances with `totalSupply()`, at the checkpoint.
   */
  const verifyWithNode = (target: Store) =>
    verifyChain({
      store: target,
      chain: 'eth',
      source: createEvmSource({ rpc: createRpcClient({ url: anvil.url, logger }), logger }),
      logger,
      sample: 20,
    });

  /** Every balance, holder list and count of `target` against the node, through the store and the API. */
  async function assertExact(
    truth: NodeTruth,
    when: string,
    target: Store = store,
    api = true,
  ): Promise<void> {
    assert.deepEqual(await diffStoreAgainstNode(target, 'eth', truth, { views: true, max: 40 }), [], when);
    if (api) {
      const supplies = new Map([...truth.tokens].map(([token, t]) => [token, t.supply]));
      assert.deepEqual(
        await diffApiAddressViews(server.url, key, 'eth', truth.tokens, { supplies, max: 40 }),
        [],
        `${when}, through the API`,
      );
    }
    // The staking pool logs WETH9's Deposit but is no token.
    assert.equal(await target.reader.getToken('eth', traffic.contracts.pool), null, `${when}: the pool`);
    const report = await verifyChain({ store: target, chain: 'eth', source: null, logger });
    assert.deepEqual(report.differences, [], `${when}: verify`);
    assert.ok(report.balanceChanges > 0, `${when}: verify saw the balance changes`);
    if (api) {
      // A whole index: the summed balances are every token's totalSupply() too.
      const withNode = await verifyWithNode(target);
      assert.deepEqual(
        [withNode.differences, withNode.supplyDrift],
        [[], []],
        `${when}: verify with the node`,
      );
      assert.ok(withNode.nodeChecks > 10, `${when}: balances compared with the node`);
    }
  }

  test('after the backfill: every balance, holder page and holderCnt equals balanceOf; transfers are Transfer logs only', async () => {
    const head = await followed();
    const counts = await eventCounts(anvil.url, head);
    // The traffic has what it is meant to have, on the node itself.
    for (const kind of ['deposit', 'withdrawal', 'issue', 'redeem', 'destroyedBlackFunds'])
      assert.ok((counts[kind] ?? 0) > 0, `${kind} logs: ${JSON.stringify(counts)}`);
    const truth = await nodeTruth(head);
    const { weth, tether, vault } = traffic.contracts;
    const wethRecord = await store.reader.getToken('eth', weth);
    assert.equal(wethRecord?.transferCount, truth.tokens.get(weth)!.transfers.length, 'WETH transferCnt');
    assert.ok(wethRecord!.holderCount > 3, 'WETH holders');
    // WETH9's first events were deposits, before its first Transfer log: its first block is theirs.
    const firstTransfer = Math.min(...truth.tokens.get(weth)!.transfers.map((t) => t.blockNumber));
    assert.ok(wethRecord!.firstBlock < firstTransfer, 'WETH first seen at its first deposit');
    for (const token of [tether, vault])
      assert.ok((await store.reader.getToken('eth', token))!.holderCount > 1);
    await assertExact(truth, 'after the backfill');
  });

  test('following the head: issue after an ownership move, blacklist burns, vault deposits, all exact', async () => {
    lateFrom = (await getBlockNumber(anvil.url)) + 1;
    await traffic.run(60, 1818);
    await assertExact(await nodeTruth(await followed()), 'after following the head');
  });

  test('an anvil_reorg across deposits, withdrawals, issues and burns: once followed, all exact again', async () => {
    // Blocks with events, the newest 5 of which the reorg replaces.
    await traffic.run(12, 181818);
    const top = await followed();
    const beforeReorg = await nodeTruth(top);
    await assertExact(beforeReorg, 'before the reorg', store, false);
    const { weth, tether, vault, accounts } = traffic.contracts;
    const newcomer = accounts[accounts.length - 1]!;
    const issue = encodeCall(selector('issue(uint256)', TetherStyleToken), [
      { type: 'uint256', value: 7n ** 30n },
    ]);
    await reorg(anvil.url, 5, [
      {
        tx: { from: newcomer, to: weth, data: '0xd0e30db0', value: 3n * 10n ** 18n, gas: 100_000 },
        blockOffset: 0,
      },
      { tx: { from: traffic.owner, to: tether, data: issue, gas: 100_000 }, blockOffset: 1 },
      {
        tx: {
          from: newcomer,
          to: vault,
          data: encodeCall(selector('depositTwice()', DepositVault)),
          value: 10n ** 18n,
          gas: 200_000,
        },
        blockOffset: 3,
      },
    ]);
    // What the late start's truth names: the replaced blocks' calls are gone, the new ones are in.
    traffic.touched = traffic.touched.filter((t) => t.block <= top - 5);
    traffic.touched.push(
      { token: weth, address: newcomer, block: top },
      { token: tether, address: traffic.owner, block: top },
      { token: vault, address: newcomer, block: top },
    );
    const afterReorg = await nodeTruth(await followed());
    // The newcomer's deposit is the largest WETH balance now, on the node and in the store.
    assert.equal(afterReorg.tokens.get(weth)!.balances.get(newcomer), 3n * 10n ** 18n);
    assert.deepEqual((await store.reader.listHolders('eth', weth, 0, 1))[0], {
      address: newcomer,
      balance: 3n * 10n ** 18n,
    });
    await assertExact(afterReorg, 'after the reorg');
  });

  test('a crash mid-backfill: another connection resumes from the checkpoint, and all is exact', async () => {
    const location = await backend.freshLocation('exact-crash');
    const crashed = await openAt(location, logger);
    // The store "crashes" at the backfill's second commit: every write after it fails, and the
    // store is never closed, so on SQLite the balances the first batches deferred (deposits and
    // issues among them) are lost, as in a crash.
    let commits = 0;
    const failing: StoreWriter = Object.assign(Object.create(crashed.writer) as StoreWriter, {
      applyBatch: (b: IndexBatch) =>
        ++commits >= 2 ? Promise.reject(new Error('simulated crash')) : crashed.writer.applyBatch(b),
    });
    const crashController = new AbortController();
    const crashRun = startIndexer(crashed, 0, crashController.signal, {
      writer: failing,
      commitAtOnce: true,
    });
    let resumed: Store | null = null;
    try {
      await waitFor('the simulated crash', async () => commits >= 2);
      crashController.abort();
      await crashRun.catch(() => {});
      const stopped = await crashed.reader.getChainStatus('eth');
      const head = await getBlockNumber(anvil.url);
      assert.ok(
        (stopped?.indexed ?? 0) < head - FINALITY,
        `stopped mid-backfill (${stopped?.indexed} of ${head})`,
      );
      if (backend.name === 'sqlite')
        assert.ok(stopped?.balancesBlock !== undefined, 'balances were deferred');
      resumed = await openAt(location, logger);
      const controller = new AbortController();
      const run = startIndexer(resumed, 0, controller.signal);
      try {
        await assertExact(await nodeTruth(await followed(resumed)), 'resumed after a crash', resumed, false);
      } finally {
        controller.abort();
        await run.catch(() => {});
      }
    } finally {
      await resumed?.close();
      await crashed.close();
    }
  });

  test('a late start: holders named from its first block on are seeded, and exact', async () => {
    const late = await openAt(await backend.freshLocation('exact-late'), logger);
    const lateController = new AbortController();
    const lateRun = startIndexer(late, lateFrom, lateController.signal);
    try {
      const head = await followed(late);
      await assertExact(await nodeTruth(head, lateFrom), 'a late start', late, false);
    } finally {
      lateController.abort();
      await lateRun.catch(() => {});
      await late.close();
    }
  });

  test('ether forced into WETH9 raises its totalSupply(): verify names the drift, its balances stay exact and it is not marked', async () => {
    const { weth } = traffic.contracts;
    // Exact so far: the check that follows the head marked none of these tokens.
    assert.deepEqual(await store.reader.countNotExact(), {});
    // A stale mark, as an earlier check could have left: the check after the forced ether must
    // clear it (the sum drifts, the sample is exact), not keep or renew it.
    await store.writer.setExactness('eth', [
      { address: weth, mark: { atBlock: 1, supplyDrift: 1n, sampled: 1, differing: 1 } },
    ]);
    const forced = 5n * 10n ** 18n;
    const held = BigInt(await rpc<string>(anvil.url, 'eth_getBalance', [weth, 'latest']));
    await rpc(anvil.url, 'anvil_setBalance', [weth, toQuantity(held + forced)]);
    await mine(anvil.url);
    const head = await followed();
    const report = await verifyWithNode(store);
    assert.deepEqual(report.differences, [], 'the sampled balances equal balanceOf');
    assert.deepEqual(
      report.supplyDrift.map((d) => [d.token, d.totalSupply - d.summed, d.block]),
      [[weth, forced, head]],
    );
    // Forced ether logs nothing, so nothing asks for WETH9's supply yet: a deposit does, and the
    // check after that read finds the sum off by the forced ether and the sample exact.
    const [depositor] = await getAccounts(anvil.url);
    const deposit = 10n ** 18n;
    await waitForReceipt(
      anvil.url,
      await sendTransaction(anvil.url, { from: depositor!, to: weth, value: deposit }),
    );
    await followed();
    await waitFor(
      'the exactness check to clear the stale mark of WETH9',
      async () => (await store.reader.getNotExact('eth', weth)) === null,
    );
    assert.equal(
      (await store.reader.getToken('eth', weth))?.totalSupply,
      report.supplyDrift[0]!.totalSupply + deposit,
    );
    assert.deepEqual(await store.reader.countNotExact(), {});
  });
}
