/**
 * The address and holder views against a real local EVM node (anvil from npm), indexed by the real
 * indexer: a few thousand real ERC-20 calls (mints, burns, self-transfers, zero values, ordinary
 * transfers) among a few dozen addresses across three tokens. For every address, its balance
 * entries and holdings equal `balanceOf` at the head (and its transfer counts and lists the node's
 * logs); every token's holder list equals its holders sorted by `balanceOf` descending, then
 * address ascending. Then a reorg that moves a holder's rank: once the indexer has followed it,
 * every list is right again. Each check reads the store and, through the real HTTP API, the
 * address operations and Token Holders (page by page, as a client would).
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
import { createEvmSource } from '../chains/evm/source.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { encodeCall } from '../devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { reorg } from '../devchain/chain.js';
import { type DeployedToken, deployDemoTokens, selector } from '../devchain/deploy.js';
import { SPRAY_GAS_LIMIT } from '../devchain/traffic.js';
import { silentLogger } from '../internal/logger.js';
import { createTestApiKey } from '../store/testing/api-key.js';
import type { Store } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';
import { addressTraffic } from './testing/address-traffic.js';
import { expectedHolders } from './testing/address-views.js';
import { diffApiAddressViews } from './testing/api-address-view.js';
import { type ChaosBackend, chaosBackends, openAt } from './testing/chaos.js';
import { diffStoreAgainstNode, followedHead, type NodeTruth, readNodeTruth } from './testing/evm-truth.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-address-views-'));
const logger = silentLogger();
const FINALITY = 10;
const CALLS = 3_000;

after(() => rmSync(tmp, { recursive: true, force: true }));

for (const backend of chaosBackends(tmp)) {
  describe(`address and holder views against a real anvil node (${backend.name})`, () => {
    viewsScenario(backend);
  });
}

function viewsScenario(backend: ChaosBackend): void {
  let anvil: AnvilInstance;
  let tokens: DeployedToken[];
  let store: Store;
  let controller: AbortController;
  let running: Promise<void>;
  let server: ApiServer;
  let key: string;

  before(async () => {
    anvil = await startAnvil({ accounts: 30, gasLimit: SPRAY_GAS_LIMIT });
    // Three of the demo tokens move; the capped one (whose cap the mints would reach) holds its
    // initial mint only.
    tokens = (await deployDemoTokens(anvil.url)).filter((t) => t.kind !== 'capped');
    const traffic = await addressTraffic(anvil.url, tokens, { calls: CALLS, seed: 16 });
    assert.ok(traffic.addresses.length >= 36, `${traffic.addresses.length} addresses`);

    store = await openAt(await backend.freshLocation('views'), logger);
    controller = new AbortController();
    running = createEvmIndexer({
      chain: { name: 'eth', rpcUrl: anvil.url, fromBlock: 0, finalityDepth: FINALITY, pollIntervalMs: 20 },
      source: createEvmSource({ rpc: createRpcClient({ url: anvil.url, logger, retryBaseMs: 5 }), logger }),
      store: store.writer,
      logger,
      signal: controller.signal,
      tty: false,
      supplyRefreshBlocks: 1,
    }).run();
    key = (await createTestApiKey(store, 'views')).key;
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

  const followed = (): Promise<number> => followedHead(store, anvil.url);

  /** Every view compared with the node: every address's holdings and lists, every holder list. */
  async function assertViewsMatchNode(truth: NodeTruth, when: string): Promise<void> {
    assert.deepEqual(await diffStoreAgainstNode(store, 'eth', truth, { views: true, max: 40 }), [], when);
    const supplies = new Map([...truth.tokens].map(([token, t]) => [token, t.supply]));
    assert.deepEqual(
      await diffApiAddressViews(server.url, key, 'eth', truth.tokens, { supplies, max: 40 }),
      [],
      `${when}, through the API`,
    );
  }

  test('after a backfill of thousands of calls, every address and holder list equals balanceOf at the head', async () => {
    const head = await followed();
    const truth = await readNodeTruth(anvil.url, head);
    const moved = tokens.map((t) => truth.tokens.get(t.address)!);
    const logs = moved.reduce((n, t) => n + t.transfers.length, 0);
    // Every call made its log (none reverted): three initial mints and the calls.
    assert.equal(logs, CALLS + 3, 'Transfer logs of the three tokens');
    // The traffic has what it is meant to have, on the node itself.
    const all = moved.flatMap((t) => t.transfers);
    const zero = '0x0000000000000000000000000000000000000000';
    assert.ok(all.filter((t) => t.from === zero).length > 100, 'mints');
    assert.ok(all.filter((t) => t.to === zero).length > 100, 'burns');
    assert.ok(all.filter((t) => t.from === t.to).length > 100, 'self-transfers');
    assert.ok(all.filter((t) => t.value === 0n).length > 100, 'zero values');
    for (const token of moved)
      assert.ok(expectedHolders(token.balances).length >= 25, 'holders of each token');
    await assertViewsMatchNode(truth, 'after the backfill');
  });

  test('a reorg that moves a holder to the top: once followed, every list is right again', async () => {
    // Blocks above the last ones to be replaced, with transfers the reorg will drop.
    await addressTraffic(anvil.url, tokens, { calls: 60, perBlock: 20, seed: 61 });
    const before = await readNodeTruth(anvil.url, await followed());
    await assertViewsMatchNode(before, 'before the reorg');

    const token = tokens[0]!;
    const holders = expectedHolders(before.tokens.get(token.address)!.balances);
    const last = holders[holders.length - 1]!;
    const listed = await store.reader.listHolders('eth', token.address, holders.length - 1, 1);
    assert.deepEqual(listed, [last], 'the smallest holder is last before the reorg');

    // The newest 3 blocks are replaced by ones holding a mint that lifts the last holder above the
    // first: twice the supply, more than anyone held before the dropped blocks either.
    const lift = 2n * before.tokens.get(token.address)!.supply;
    const data = encodeCall(selector('mint(address,uint256)'), [
      { type: 'address', value: last.address },
      { type: 'uint256', value: lift },
    ]);
    await reorg(anvil.url, 3, [
      { tx: { from: token.deployer, to: token.address, data, gas: 120_000 }, blockOffset: 1 },
    ]);
    const after = await readNodeTruth(anvil.url, await followed());
    const now = expectedHolders(after.tokens.get(token.address)!.balances);
    assert.equal(now[0]?.address, last.address, 'on the node, the lifted holder is first');
    assert.deepEqual((await store.reader.listHolders('eth', token.address, 0, 1))[0], now[0]);
    assert.notEqual(holders[0]!.address, last.address);
    await assertViewsMatchNode(after, 'after the reorg');
  });
}
