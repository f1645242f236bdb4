import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AnvilInstance, startAnvil } from './anvil.js';
import { getAccounts, getBlock, getBlockNumber, mine, reorg } from './chain.js';
import { deployDemoTokens } from './deploy.js';
import { rpc } from './rpc.js';
import { sendTransfers } from './traffic.js';

describe('chain control', () => {
  let anvil: AnvilInstance;
  before(async () => {
    anvil = await startAnvil();
  });
  after(() => anvil.stop());

  test('mine(n) adds n blocks, each the child of the one before', async () => {
    const start = await getBlockNumber(anvil.url);
    await mine(anvil.url, 5);
    assert.equal(await getBlockNumber(anvil.url), start + 5);
    for (let n = start + 1; n <= start + 5; n++) {
      assert.equal((await getBlock(anvil.url, n))!.parentHash, (await getBlock(anvil.url, n - 1))!.hash);
    }
  });

  test('reorg of depth 3 replaces exactly the last 3 blocks and drops their transfers', async () => {
    const [token] = await deployDemoTokens(anvil.url);
    await mine(anvil.url, 2);
    const sent = await sendTransfers(anvil.url, [token!], { count: 3, seed: 2 });
    const head = await getBlockNumber(anvil.url);
    const before = await Promise.all([head - 3, head - 2, head - 1, head].map((n) => getBlock(anvil.url, n)));

    await reorg(anvil.url, 3);

    assert.equal(await getBlockNumber(anvil.url), head, 'the height stays the same');
    const afterReorg = await Promise.all(
      [head - 3, head - 2, head - 1, head].map((n) => getBlock(anvil.url, n)),
    );
    assert.equal(afterReorg[0]!.hash, before[0]!.hash, 'the block below the reorg is untouched');
    for (let i = 1; i <= 3; i++)
      assert.notEqual(afterReorg[i]!.hash, before[i]!.hash, `block ${head - 3 + i}`);
    assert.equal(afterReorg[1]!.parentHash, before[0]!.hash);
    assert.equal(afterReorg[2]!.parentHash, afterReorg[1]!.hash);
    // The three transfers were each alone in one of the replaced blocks; they are gone.
    for (const s of sent) assert.equal(await rpc(anvil.url, 'eth_getTransactionReceipt', [s.hash]), null);
  });

  test('reorg can place given transactions into the new blocks', async () => {
    const [, a, b] = await getAccounts(anvil.url);
    await mine(anvil.url, 3);
    const head = await getBlockNumber(anvil.url);
    await reorg(anvil.url, 3, [
      { tx: { from: a!, to: b!, value: 1n }, blockOffset: 0 },
      { tx: { from: a!, to: b!, value: 2n }, blockOffset: 2 },
    ]);
    const counts = await Promise.all(
      [head - 2, head - 1, head].map(async (n) => {
        const block = await rpc<{ transactions: string[] }>(anvil.url, 'eth_getBlockByNumber', [
          `0x${n.toString(16)}`,
          false,
        ]);
        return block.transactions.length;
      }),
    );
    assert.deepEqual(counts, [1, 0, 1]);
  });

  test('reorg refuses a transaction placed at or beyond its depth', async () => {
    const [, a, b] = await getAccounts(anvil.url);
    await assert.rejects(reorg(anvil.url, 2, [{ tx: { from: a!, to: b! }, blockOffset: 2 }]), /blockOffset/);
  });
});
