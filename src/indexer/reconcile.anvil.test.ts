/**
 * Reconcile mode (`--reconcile`; indexer/reconcile.ts, docs/reliability.md "Reconcile mode")
 * against a real anvil node and the real indexer, with the test tokens of
 * contracts/NotExactTokens.sol (rebasing, shares, reflection, fee burning): with it on, every
 * address their logs name, every holder page and `holderCnt` equal `balanceOf` at the head, after
 * a backfill, while following the head through silent rebases and accruals, across an
 * `anvil_reorg`, and after a restart in which a correction's write "crashes" once it has
 * committed (nothing is applied twice). Without Multicall3 the reads are JSON-RPC batches; once
 * it has code, `aggregate3`. With it off, the same chain's index keeps the log sums and writes no
 * correction. And a round whose checkpoint moves between its read and its write has its
 * corrections refused, and the next round applies them once.
 *
 * On SQLite; on PostgreSQL too with `TOKENQUERY_CHAOS_BACKENDS=sqlite,postgres` and
 * `TOKENQUERY_CHAOS_POSTGRES_URL` (see `testing/chaos.ts`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createEvmSource } from '../chains/evm/source.js';
import type { EvmSource } from '../chains/evm/types.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { type AbiArg, encodeArgs, encodeCall } from '../devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getAccounts, getBlock, mine, reorg, sendTransaction, waitForReceipt } from '../devchain/chain.js';
import {
  type CompiledContract,
  FeeBurnToken,
  RebasingToken,
  ReflectionToken,
  SharesToken,
} from '../devchain/contracts.generated.js';
import { selector } from '../devchain/deploy.js';
import { silentLogger } from '../internal/logger.js';
import { waitFor } from '../internal/testing/wait.js';
import type { IndexBatch, Store, StoreWriter } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';
import { createReconcile, RECONCILE_LOG_INDEX_BASE } from './reconcile.js';
import { type ChaosBackend, chaosBackends, openAt } from './testing/chaos.js';
import { diffStoreAgainstNode, followedHead, readNodeTruth } from './testing/evm-truth.js';
import { deployMulticall3 } from './testing/multicall3.js';
import { verifyChain } from './verify.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-reconcile-'));
const logger = silentLogger();
const FINALITY = 4;
const units = (n: bigint): bigint => n * 10n ** 21n;

after(() => rmSync(tmp, { recursive: true, force: true }));

for (const backend of chaosBackends(tmp)) {
  describe(`reconcile mode against a real anvil node (${backend.name})`, () => {
    reconcileScenario(backend);
  });
  describe(`a reconcile round whose checkpoint moves between its read and its write (${backend.name})`, () => {
    test('the store refuses its corrections; the next round reads again at the new checkpoint, and nothing counts twice', async () => {
      await refusedRound(backend);
    });
  });
}

/**
 * Drives one reconcile (not the indexer's) over a store the indexer filled: a fee-burning token's
 * senders are off by the fees. The first read is followed, before its write, by a block committed
 * to the store: its batch must be refused, and the next round correct each sender once.
 */
async function refusedRound(backend: ChaosBackend): Promise<void> {
  const anvil = await startAnvil({ accounts: 4 });
  const target = await openAt(await backend.freshLocation('reconcile-refused'), logger);
  try {
    const url = anvil.url;
    const [owner, ...users] = await getAccounts(url);
    const token = (
      await waitForReceipt(
        url,
        await sendTransaction(url, {
          from: owner!,
          data: FeeBurnToken.bytecode + encodeArgs([{ type: 'uint256', value: 10n ** 24n }]),
          gas: 3_000_000,
        }),
      )
    ).contractAddress!;
    const transfer = encodeCall(selector('transfer(address,uint256)', FeeBurnToken), [
      { type: 'address', value: users[0]! },
      { type: 'uint256', value: units(1n) },
    ]);
    for (let i = 0; i < 3; i++)
      await waitForReceipt(
        url,
        await sendTransaction(url, { from: owner!, to: token, data: transfer, gas: 300_000 }),
      );
    const source = createEvmSource({ rpc: createRpcClient({ url, logger, retryBaseMs: 5 }), logger });
    const controller = new AbortController();
    const running = createEvmIndexer({
      chain: { name: 'eth', rpcUrl: url, fromBlock: 0, finalityDepth: FINALITY, pollIntervalMs: 20 },
      source,
      store: target.writer,
      logger,
      signal: controller.signal,
      tty: false,
    }).run();
    const head = await followedHead(target, url);
    controller.abort();
    await running.catch(() => {});
    // One more block on the node, committed by hand between the first round's read and write.
    await mine(url);
    const next = (await getBlock(url, head + 1))!;
    let interfered = false;
    const interfering: EvmSource = {
      ...source,
      async readBalancesAt(pairs, block, options) {
        const read = await source.readBalancesAt(pairs, block, options);
        if (!interfered) {
          interfered = true;
          await target.writer.applyBatch({
            chain: 'eth',
            fromBlock: head + 1,
            continues: head,
            toBlock: head + 1,
            toBlockHash: next.hash,
            transfers: [],
            tokens: [],
            blocks: [{ number: head + 1, hash: next.hash, parentHash: next.parentHash }],
            head: head + 1,
            pruneBlocksBelow: 0,
          });
        }
        return read;
      },
    };
    const reconcile = createReconcile({
      chain: 'eth',
      store: target.writer,
      source: interfering,
      logger,
      finalityDepth: FINALITY,
    });
    reconcile.adopt([token]);
    assert.equal(await reconcile.round(), true, 'refused: another round is wanted');
    assert.deepEqual([reconcile.stats.refused, reconcile.stats.corrections], [1, 0]);
    assert.equal(await corrections(target, token), 0, 'nothing written by the refused round');
    while (await reconcile.round()) {}
    // The owner paid 3 fees no log records: one correction, at the new checkpoint.
    assert.deepEqual([reconcile.stats.refused, reconcile.stats.corrections], [1, 1]);
    const truth = await readNodeTruth(url, head + 1);
    assert.deepEqual(await diffStoreAgainstNode(target, 'eth', truth, { views: true, supply: false }), []);
    const [fix] = (await target.scans.scanBalanceChanges('eth', token, null, 10)).filter(
      (c) => c.logIndex >= RECONCILE_LOG_INDEX_BASE,
    );
    assert.deepEqual(
      [fix?.blockNumber, fix?.holder, fix?.amount],
      [head + 1, owner, -3n * (units(1n) / 100n)],
    );
    // Rounds after it find nothing left to correct.
    assert.equal(await reconcile.round(), false);
    assert.equal(reconcile.stats.corrections, 1);
  } finally {
    await target.close();
    await anvil.stop();
  }
}

/** Corrections stored for `token` (balance changes with reconcile's log indexes). */
async function corrections(target: Store, token: string): Promise<number> {
  const changes = await target.scans.scanBalanceChanges('eth', token, null, 10_000);
  return changes.filter((c) => c.logIndex >= RECONCILE_LOG_INDEX_BASE).length;
}

type Kind = 'rebasing' | 'shares' | 'reflection' | 'feeBurn';
const CONTRACTS: Record<Kind, CompiledContract> = {
  rebasing: RebasingToken,
  shares: SharesToken,
  reflection: ReflectionToken,
  feeBurn: FeeBurnToken,
};

function reconcileScenario(backend: ChaosBackend): void {
  let anvil: AnvilInstance;
  let owner: string;
  let users: string[];
  let tokens: Record<Kind, string>;
  let store: Store;
  /** The index with reconcile off, beside it. */
  let plain: Store;
  const runs: { controller: AbortController; running: Promise<void> }[] = [];
  /** `readBalancesAt` calls of the reconciling indexers: whether each went through Multicall3. */
  const multicall: boolean[] = [];

  const send = async (from: string, to: string, data: string) =>
    waitForReceipt(anvil.url, await sendTransaction(anvil.url, { from, to, data, gas: 300_000 }));
  const call = (kind: Kind, signature: string, args: AbiArg[]) =>
    encodeCall(selector(signature, CONTRACTS[kind]), args);
  const transfer = (kind: Kind, from: string, to: string, amount: bigint) =>
    send(
      from,
      tokens[kind],
      call(kind, 'transfer(address,uint256)', [
        { type: 'address', value: to },
        { type: 'uint256', value: amount },
      ]),
    );
  /** What no log records: a rebase, accrued rewards. */
  const rebase = (supply: bigint) =>
    send(owner, tokens.rebasing, call('rebasing', 'rebase(uint256)', [{ type: 'uint256', value: supply }]));
  const accrue = (amount: bigint) =>
    send(owner, tokens.shares, call('shares', 'accrue(uint256)', [{ type: 'uint256', value: amount }]));

  /** Each token: one transfer from each of `senders` to the next user. */
  async function transfers(senders: readonly string[], amount: bigint): Promise<void> {
    for (const kind of Object.keys(tokens) as Kind[]) {
      for (const [i, from] of senders.entries())
        await transfer(kind, from, users[(i + 1) % users.length]!, amount);
    }
  }

  function startIndexer(target: Store, reconcile: boolean, writer: StoreWriter = target.writer): void {
    const source = createEvmSource({
      rpc: createRpcClient({ url: anvil.url, logger, retryBaseMs: 5 }),
      logger,
      invalidRetryBaseMs: 5,
    });
    const recording: EvmSource = {
      ...source,
      readBalancesAt(pairs, block, options) {
        if (reconcile) multicall.push(options.multicall);
        return source.readBalancesAt(pairs, block, options);
      },
    };
    const controller = new AbortController();
    const running = createEvmIndexer({
      chain: {
        name: 'eth',
        rpcUrl: anvil.url,
        fromBlock: 0,
        finalityDepth: FINALITY,
        pollIntervalMs: 20,
        ...(reconcile ? { reconcile: true } : {}),
      },
      source: recording,
      store: writer,
      logger,
      signal: controller.signal,
      tty: false,
      supplyRefreshBlocks: 1,
      initialRange: 5,
    }).run();
    runs.push({ controller, running });
  }

  async function stopIndexers(): Promise<void> {
    for (const { controller, running } of runs.splice(0)) {
      controller.abort();
      await running.catch(() => {});
    }
  }

  /**
   * Waits until `target` holds, for every address the four tokens' logs name, `balanceOf` at the
   * node's head, with every holder page and holderCnt (and the supply) to match.
   */
  async function touchedExact(when: string, target: Store = store): Promise<void> {
    let last: string[] = [];
    try {
      await waitFor(
        `every touched address to equal balanceOf (${when})`,
        async () => {
          const head = await followedHead(target, anvil.url);
          const truth = await readNodeTruth(anvil.url, head);
          last = await diffStoreAgainstNode(target, 'eth', truth, { views: true, max: 10 });
          return last.length === 0 && (await followedHead(target, anvil.url)) === head;
        },
        40_000,
        200,
      );
    } catch (error) {
      assert.fail(`${when}: ${(error as Error).message}\n${last.join('\n')}`);
    }
  }

  before(async () => {
    anvil = await startAnvil({ accounts: 6 });
    const accounts = await getAccounts(anvil.url);
    owner = accounts[0]!;
    users = accounts.slice(1);
    const deploy = async (contract: CompiledContract, args: AbiArg[] = []) =>
      (
        await waitForReceipt(
          anvil.url,
          await sendTransaction(anvil.url, {
            from: owner,
            data: contract.bytecode + encodeArgs(args),
            gas: 3_000_000,
          }),
        )
      ).contractAddress!;
    const supply: AbiArg = { type: 'uint256', value: 10n ** 24n };
    tokens = {
      rebasing: await deploy(RebasingToken, [supply]),
      shares: await deploy(SharesToken, [supply]),
      reflection: await deploy(ReflectionToken),
      feeBurn: await deploy(FeeBurnToken, [supply]),
    };
    for (const kind of Object.keys(tokens) as Kind[]) {
      for (const [i, user] of users.entries()) await transfer(kind, owner, user, units(BigInt(i + 1)));
    }
    await transfers(users.slice(0, 3), units(1n) / 10n);
    await rebase(3n * 10n ** 24n);
    await accrue(10n ** 23n);
    store = await openAt(await backend.freshLocation('reconcile'), logger);
    plain = await openAt(await backend.freshLocation('reconcile-off'), logger);
    startIndexer(store, true);
    startIndexer(plain, false);
  });

  after(async () => {
    await stopIndexers();
    await store?.close();
    await plain?.close();
    await anvil?.stop();
    await backend.cleanup();
  });

  test('after the backfill: every touched address equals balanceOf, through JSON-RPC batches (no Multicall3)', async () => {
    await touchedExact('after the backfill');
    for (const [kind, token] of Object.entries(tokens))
      assert.ok((await corrections(store, token)) > 0, `${kind}: corrected`);
    assert.ok(multicall.length > 0 && multicall.every((m) => !m), `reads: ${multicall}`);
    // The corrections make the tokens' supplies be read again; the check then finds each sum equal
    // to its totalSupply() (every holder is one a log names) and clears the marks.
    await waitFor(
      'the marks to clear',
      async () => Object.keys(await store.reader.countNotExact()).length === 0,
    );
  });

  test('with it off, the index keeps the log sums: no correction, and the silent changes show against the node', async () => {
    await followedHead(plain, anvil.url);
    const truth = await readNodeTruth(anvil.url, await followedHead(plain, anvil.url));
    const diff = await diffStoreAgainstNode(plain, 'eth', truth, { max: 100 });
    for (const [kind, token] of Object.entries(tokens)) {
      assert.equal(await corrections(plain, token), 0, `${kind}: no correction`);
      assert.ok(
        diff.some((line) => line.startsWith(`token ${token}: balance of`)),
        `${kind}: a balance differs from balanceOf`,
      );
    }
    // The exactness check marks those whose sum drifts, as without reconcile mode.
    await waitFor('the marks', async () =>
      (
        await Promise.all(
          ['rebasing', 'shares', 'feeBurn'].map((k) => plain.reader.getNotExact('eth', tokens[k as Kind])),
        )
      ).every((m) => m !== null),
    );
  });

  test('following the head: transfers, a silent rebase and accrual, all reconciled', async () => {
    await transfers(users.slice(1, 4), units(1n) / 7n);
    await touchedExact('after transfers at the head');
    // No log at all: the largest holders' balances move, which the next round sees.
    await rebase(2n * 10n ** 24n);
    await accrue(10n ** 22n);
    await mine(anvil.url);
    await touchedExact('after a silent rebase and accrual');
  });

  test('an anvil_reorg across transfers and rebases: the dropped corrections go with their blocks, all exact again', async () => {
    await transfers(users.slice(0, 2), units(1n) / 9n);
    await rebase(25n * 10n ** 23n);
    await touchedExact('before the reorg');
    // Corrections in the blocks the reorg replaces: the rollback must take them off.
    const top = await followedHead(store, anvil.url);
    let replaced = 0;
    for (const token of Object.values(tokens)) {
      const changes = await store.scans.scanBalanceChanges(
        'eth',
        token,
        { blockNumber: top - 3, logIndex: 2 ** 31 - 1 },
        1_000,
      );
      replaced += changes.filter((c) => c.logIndex >= RECONCILE_LOG_INDEX_BASE).length;
    }
    assert.ok(replaced > 0, 'corrections in the replaced blocks');
    await reorg(anvil.url, 3, [
      {
        tx: {
          from: users[2]!,
          to: tokens.feeBurn,
          data: call('feeBurn', 'transfer(address,uint256)', [
            { type: 'address', value: users[4]! },
            { type: 'uint256', value: units(1n) / 3n },
          ]),
          gas: 300_000,
        },
        blockOffset: 0,
      },
      {
        tx: {
          from: owner,
          to: tokens.rebasing,
          data: call('rebasing', 'rebase(uint256)', [{ type: 'uint256', value: 4n * 10n ** 24n }]),
          gas: 300_000,
        },
        blockOffset: 1,
      },
    ]);
    await mine(anvil.url);
    await touchedExact('after the reorg');
  });

  test('a restart, with Multicall3 deployed meanwhile and a correction whose write "crashes" after it committed: exact, nothing applied twice', async () => {
    await stopIndexers();
    await deployMulticall3(anvil.url, owner);
    // While nothing indexes: a rebase, accrued rewards, and transfers that name each token.
    await rebase(35n * 10n ** 23n);
    await accrue(10n ** 23n);
    await transfers(users.slice(2, 5), units(1n) / 11n);
    multicall.length = 0;
    // The first batch that adds no block commits, then the caller is told it failed (a crash
    // between the write and its acknowledgement): the next round must find nothing left to do.
    let crashed = 0;
    const crashing: StoreWriter = Object.assign(Object.create(store.writer) as StoreWriter, {
      applyBatch: async (batch: IndexBatch) => {
        await store.writer.applyBatch(batch);
        if (batch.toBlock === batch.fromBlock - 1 && crashed++ === 0) throw new Error('simulated crash');
      },
    });
    startIndexer(store, true, crashing);
    startIndexer(plain, false);
    await touchedExact('after the restart');
    await waitFor(
      'the marks to clear',
      async () => Object.keys(await store.reader.countNotExact()).length === 0,
    );
    // verify agrees: the stored balances are what the transfers and balance changes (corrections
    // among them) add up to, and the sampled ones are balanceOf. Each summed share-based balance
    // is rounded down by the token itself, so the sums may fall a few wei below totalSupply().
    const report = await verifyChain({
      store,
      chain: 'eth',
      source: createEvmSource({ rpc: createRpcClient({ url: anvil.url, logger }), logger }),
      logger,
      sample: 10,
    });
    assert.deepEqual([report.differences, report.notExact], [[], []]);
    for (const d of report.supplyDrift)
      assert.ok(d.summed <= d.totalSupply && d.totalSupply - d.summed < 10n, `rounding only: ${d.token}`);
    assert.ok(report.nodeChecks >= 10 && report.balanceChanges > 0, 'verify compared with the node');
    assert.ok(crashed >= 1, 'a correction batch was written and "crashed"');
    assert.ok(multicall.length > 0 && multicall.every((m) => m), `reads through Multicall3: ${multicall}`);
  });
}
