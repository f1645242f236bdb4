import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type FixtureNode, type FixtureNodeOptions, startFixtureNode } from './fixture-node.js';
import { loadEthereumEtlSet, loadExpectedTransfers, parseCsv, parseJsonBigIntSafe } from './fixture-sets.js';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

async function rpc(node: FixtureNode, body: unknown): Promise<unknown> {
  const response = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.json();
}

async function withNode(options: FixtureNodeOptions, run: (node: FixtureNode) => Promise<void>) {
  const node = await startFixtureNode(options);
  try {
    await run(node);
  } finally {
    await node.close();
  }
}

describe('fixture node', () => {
  const set = loadEthereumEtlSet('stream_blocks_17173049_17173050');

  test('eth_getLogs filters the recorded logs by range, address and topic', async () => {
    await withNode(set, async (node) => {
      const weth = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
      const all = (await rpc(node, {
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [{ fromBlock: '0x1060a39', toBlock: '0x1060a3a' }],
      })) as { result: { address: string; topics: string[]; blockNumber: string }[] };
      assert.equal(all.result.length, set.logs.length);
      const filtered = (await rpc(node, {
        jsonrpc: '2.0',
        id: 2,
        method: 'eth_getLogs',
        params: [{ fromBlock: '0x1060a39', toBlock: '0x1060a39', address: weth, topics: [TRANSFER_TOPIC] }],
      })) as { result: { address: string; topics: string[]; blockNumber: string }[] };
      const expected = all.result.filter(
        (l) => l.address === weth && l.topics[0] === TRANSFER_TOPIC && l.blockNumber === '0x1060a39',
      );
      assert.ok(expected.length > 0);
      assert.deepEqual(filtered.result, expected);
    });
  });

  test('blocks: false strips transactions to hashes, latest is the head, above the head is null', async () => {
    await withNode(set, async (node) => {
      const [full, light, latest] = (await rpc(node, [
        { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x1060a39', true] },
        { jsonrpc: '2.0', id: 2, method: 'eth_getBlockByNumber', params: ['0x1060a39', false] },
        { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByNumber', params: ['latest', false] },
      ])) as { id: number; result: { number: string; transactions: unknown[] } }[];
      assert.equal(typeof full!.result.transactions[0], 'object');
      assert.deepEqual(
        light!.result.transactions,
        full!.result.transactions.map((tx) => (tx as { hash: string }).hash),
      );
      assert.equal(latest!.result.number, '0x1060a3a');
      node.setHead(17173049);
      const hidden = (await rpc(node, {
        jsonrpc: '2.0',
        id: 4,
        method: 'eth_getBlockByNumber',
        params: ['0x1060a3a', false],
      })) as { result: unknown };
      assert.equal(hidden.result, null);
      assert.equal(node.calls.get('eth_getBlockByNumber'), 4);
    });
  });

  test('an unrecorded eth_call reverts like a node does', async () => {
    await withNode({}, async (node) => {
      const answer = await rpc(node, {
        jsonrpc: '2.0',
        id: 7,
        method: 'eth_call',
        params: [{ to: `0x${'12'.repeat(20)}`, data: '0x06fdde03' }, 'latest'],
      });
      assert.deepEqual(answer, {
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32000, message: 'execution reverted' },
      });
    });
  });
});

describe('fixture readers', () => {
  test('integers beyond 2^53 are read exactly, digits inside strings untouched', () => {
    const parsed = parseJsonBigIntSafe(
      '{"a": 150188698577042438264952193024, "b": [12, 9007199254740993], "c": "x, 12345678901234567890]"}',
    ) as { a: string; b: [number, string]; c: string };
    assert.equal(BigInt(parsed.a), 150188698577042438264952193024n);
    assert.deepEqual(parsed.b, [12, '9007199254740993']);
    assert.equal(parsed.c, 'x, 12345678901234567890]');
  });

  test('expected transfers keep their exact values', () => {
    const rows = loadExpectedTransfers(
      'ethereum-etl/stream_blocks_17173049_17173050/expected_erc20_only_token_transfers.json',
    );
    assert.ok(rows.some((r) => r.value === 150188698577042438264952193024n));
  });

  test('CSV fields may be quoted and hold commas', () => {
    assert.deepEqual(parseCsv('a,b\n1,"x,y"\n2,"say ""hi"""\n'), [
      { a: '1', b: 'x,y' },
      { a: '2', b: 'say "hi"' },
    ]);
  });
});
