import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type FakeNeoNode, startFakeNeoNode } from './fake-neo-node.js';
import { loadNeoscanRecordings } from './recordings.js';
import { fillWindow, RPX_DEPLOY_BLOCK, rpxDeployWindow, synthesizePrevouts } from './synthetic.js';

const recordings = loadNeoscanRecordings();
const RPX_CALL = '0xc920b2192e74eda4ca6140510813aa40fef1767d00c152aa6f8027c24bdf14f2';

type Answer = {
  id: number;
  result?: Record<string, unknown> & { index?: number };
  error?: { code: number; message: string };
};

async function rpc(node: FakeNeoNode, body: unknown): Promise<Answer | Answer[]> {
  const response = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as Answer | Answer[];
}

async function call(node: FakeNeoNode, method: string, params: unknown[]): Promise<Answer> {
  return (await rpc(node, { jsonrpc: '2.0', id: 1, method, params })) as Answer;
}

async function withNode(
  options: Parameters<typeof startFakeNeoNode>[0],
  run: (node: FakeNeoNode) => Promise<void>,
) {
  const node = await startFakeNeoNode(options);
  try {
    await run(node);
  } finally {
    await node.close();
  }
}

describe('fake NEO node', () => {
  test('serves recorded blocks by height and hash, unknown ones as neo-cli does', async () => {
    await withNode(recordings, async (node) => {
      assert.equal((await call(node, 'getblockcount', [])).result, 2120070);
      const byHeight = await call(node, 'getblock', [RPX_DEPLOY_BLOCK, 1]);
      const byHash = await call(node, 'getblock', [(byHeight.result!.hash as string).slice(2), 1]);
      assert.deepEqual(byHash.result, byHeight.result);
      assert.equal((byHeight.result!.tx as unknown[]).length, 38);
      assert.equal(byHeight.result!.confirmations, 2120069 - RPX_DEPLOY_BLOCK + 1);
      assert.deepEqual((await call(node, 'getblock', [5, 1])).error, {
        code: -100,
        message: 'Unknown block',
      });
      assert.equal((await call(node, 'getblock', [0, 0])).error?.code, -32602);
      assert.deepEqual((await call(node, 'getpeers', [])).error, {
        code: -32601,
        message: 'Method not found',
      });
    });
  });

  test('a batch answers each call; a transaction of a served block comes with its block', async () => {
    await withNode(recordings, async (node) => {
      const answers = (await rpc(node, [
        { jsonrpc: '2.0', id: 1, method: 'getapplicationlog', params: [RPX_CALL.slice(2)] },
        { jsonrpc: '2.0', id: 2, method: 'getrawtransaction', params: [RPX_CALL, 1] },
        { jsonrpc: '2.0', id: 3, method: 'getrawtransaction', params: [`0x${'00'.repeat(32)}`, 1] },
        {
          jsonrpc: '2.0',
          id: 4,
          method: 'getcontractstate',
          params: ['0xECC6B20D3CCAC1EE9EF109AF5A7CDB85706B1DF9'],
        },
        { jsonrpc: '2.0', id: 5, method: 'getassetstate', params: [`0x${'11'.repeat(32)}`] },
      ])) as Answer[];
      assert.equal(answers[0]!.result!.txid, RPX_CALL);
      assert.equal(answers[1]!.result!.blocktime, 1507466032);
      assert.equal(
        answers[1]!.result!.blockhash,
        '0xc38a8b9a4ef4b8ff2dea5d6137448b53e57e6d038c1618f580ef9b2d8ed79a97',
      );
      assert.deepEqual(answers[2]!.error, { code: -100, message: 'Unknown transaction' });
      assert.equal(answers[3]!.result!.name, 'RPX Sale');
      assert.deepEqual(answers[4]!.error, { code: -100, message: 'Unknown asset' });
      assert.equal(node.calls.get('getrawtransaction'), 2);
    });
  });

  test('invokefunction replays recordings; anything else is a FAULTed run', async () => {
    await withNode(recordings, async (node) => {
      const nex = await call(node, 'invokefunction', [
        '0x3A4ACD3647086E7C44398AAC0349802E6A171129',
        'symbol',
        [],
      ]);
      assert.equal(nex.result!.state, 'HALT, BREAK');
      const missing = await call(node, 'invokefunction', [
        '3a4acd3647086e7c44398aac0349802e6a171129',
        'totalSupply',
        [],
      ]);
      assert.equal(missing.result!.state, 'FAULT, BREAK');
    });
  });

  test('the head hides higher blocks, their transactions and logs', async () => {
    await withNode(recordings, async (node) => {
      node.setHead(RPX_DEPLOY_BLOCK - 1);
      assert.equal((await call(node, 'getblockcount', [])).result, RPX_DEPLOY_BLOCK);
      assert.equal((await call(node, 'getblock', [RPX_DEPLOY_BLOCK, 1])).error?.code, -100);
      assert.equal((await call(node, 'getapplicationlog', [RPX_CALL])).error?.message, 'Unknown transaction');
      assert.equal(
        (await call(node, 'getrawtransaction', [RPX_CALL, 1])).error?.message,
        'Unknown transaction',
      );
    });
  });

  test('faults replace the answer of the next requests, in order', async () => {
    await withNode(recordings, async (node) => {
      node.injectFaults(
        { type: 'status', status: 503 },
        { type: 'rpc-error', code: -32603, message: 'busy' },
        { type: 'rewrite', rewrite: () => ({ jsonrpc: '2.0', id: 1, result: 'changed' }) },
      );
      const first = await fetch(node.url, { method: 'POST', body: '{}' });
      assert.equal(first.status, 503);
      assert.equal((await call(node, 'getblockcount', [])).error?.message, 'busy');
      assert.equal((await call(node, 'getblockcount', [])).result, 'changed');
      assert.equal((await call(node, 'getblockcount', [])).result, 2120070);
    });
  });
});

describe('synthetic scaffolding around the recordings', () => {
  const real = recordings.blocks.find((b) => b.index === RPX_DEPLOY_BLOCK)!;

  test('fillers chain to the real block through the hashes it records', () => {
    const blocks = fillWindow([real], RPX_DEPLOY_BLOCK - 2, RPX_DEPLOY_BLOCK + 2);
    assert.deepEqual(
      blocks.map((b) => b.index),
      [0, 1, 2, 3, 4].map((i) => RPX_DEPLOY_BLOCK - 2 + i),
    );
    for (let i = 1; i < blocks.length; i++) assert.equal(blocks[i]!.previousblockhash, blocks[i - 1]!.hash);
    assert.equal(blocks[2], real);
    assert.equal(blocks[1]!.hash, real.previousblockhash);
    assert.equal(blocks[3]!.hash, real.nextblockhash);
    assert.ok(blocks.filter((b) => b !== real).every((b) => b.synthetic === true));
  });

  test('prevouts balance each spending transaction and belong to its witness', () => {
    const prevouts = synthesizePrevouts([real]);
    const vins = (real.tx as { vin: unknown[] }[]).flatMap((tx) => tx.vin);
    assert.equal(vins.length, 26);
    assert.equal(prevouts.length, 26);
    assert.ok(prevouts.every((tx) => tx.synthetic === true));
    // The RPX call paid 0.001 GAS of network fee out of a 40 GAS input: 39.999 came back.
    const rpxInput = prevouts.find(
      (tx) => tx.txid === '0xc8c9696476091fd63f4b0214715abe3eb10f4882a2959d4592c1f3cace800c24',
    )!;
    assert.deepEqual(rpxInput.vout, [
      {
        n: 0,
        asset: '0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7',
        value: '40',
        address: 'AQcxz3gj42aZ74ymenykJuiMKBZqarFX6y',
      },
    ]);
  });

  test('the RPX window serves 5 consecutive blocks with the deploy block in the middle', async () => {
    await withNode(rpxDeployWindow(), async (node) => {
      assert.equal((await call(node, 'getblockcount', [])).result, RPX_DEPLOY_BLOCK + 3);
      const answers = (await rpc(
        node,
        [-2, -1, 0, 1, 2].map((d, i) => ({
          jsonrpc: '2.0',
          id: i,
          method: 'getblock',
          params: [RPX_DEPLOY_BLOCK + d, 1],
        })),
      )) as Answer[];
      assert.deepEqual(
        answers.map((a) => a.result?.index),
        [-2, -1, 0, 1, 2].map((d) => RPX_DEPLOY_BLOCK + d),
      );
      const gas = await call(node, 'getassetstate', [
        '0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7',
      ]);
      assert.equal(gas.result!.type, 'UtilityToken');
    });
  });
});
