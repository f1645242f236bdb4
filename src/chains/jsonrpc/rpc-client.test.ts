import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../internal/logger.js';
import { type FixtureFault, type FixtureNode, startFixtureNode } from '../evm/testing/fixture-node.js';
import { loadEthereumEtlSet } from '../evm/testing/fixture-sets.js';
import { classifyRpcError, suggestedRangeOf } from './error-classification.js';
import { RpcResponseError, RpcTransportError } from './errors.js';
import { createRpcClient, RangeTooLargeError, type RpcClientOptions } from './rpc-client.js';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

function client(url: string, options: Partial<RpcClientOptions> = {}) {
  return createRpcClient({ url, logger: silentLogger(), retryBaseMs: 1, retryMaxMs: 20, ...options });
}

/** A fixture node over the real 17173049-17173050 recording, counting HTTP requests. */
async function realNode(limits?: { maxBlockRange?: number; maxResults?: number }) {
  let requests = 0;
  const authorization: (string | undefined)[] = [];
  const node = await startFixtureNode({
    ...loadEthereumEtlSet('stream_blocks_17173049_17173050'),
    limits,
    onRequest: ({ headers }) => {
      requests++;
      authorization.push(headers.authorization);
    },
  });
  return { node, requests: () => requests, authorization };
}

describe('rpc client: range refusals', () => {
  let node: FixtureNode;
  let requests: () => number;
  before(async () => {
    ({ node, requests } = await realNode({ maxBlockRange: 1, maxResults: 150 }));
  });
  after(() => node.close());

  test('a block range above the provider limit throws RangeTooLargeError at once, naming the limit', async () => {
    const rpc = client(node.url);
    const before = requests();
    const error = await rpc
      .request('eth_getLogs', [{ fromBlock: '0x1060a39', toBlock: '0x1060a3a', topics: [TRANSFER_TOPIC] }])
      .then(
        () => assert.fail('expected a refusal'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof RangeTooLargeError, String(error));
    assert.equal(error.suggestedRange, 1);
    assert.equal(requests() - before, 1, 'a range refusal is not retried');
  });

  test('too many results throws RangeTooLargeError, while a smaller query passes', async () => {
    const rpc = client(node.url);
    // Block 17173050 holds 177 Transfer logs, block 17173049 holds 114.
    await assert.rejects(
      rpc.request('eth_getLogs', [
        { fromBlock: '0x1060a3a', toBlock: '0x1060a3a', topics: [TRANSFER_TOPIC] },
      ]),
      (e: unknown) => e instanceof RangeTooLargeError && e.code === -32005,
    );
    const logs = await rpc.request<unknown[]>('eth_getLogs', [
      { fromBlock: '0x1060a39', toBlock: '0x1060a39', topics: [TRANSFER_TOPIC] },
    ]);
    assert.equal(logs.length, 114);
  });
});

describe('rpc client: error classification', () => {
  const ranges: [number, string][] = [
    [-32005, 'query returned more than 10000 results'],
    [-32005, 'query returned more than 10000 results. Try with this block range [0x1, 0x2710].'],
    [-32000, 'block range is too large'],
    [-32600, 'exceed maximum block range: 50000'],
    [-32602, 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range'],
    [-32000, 'range too large'],
    [-32000, 'requested too many blocks from 0 to 5000, maximum is set to 2048'],
    [-32000, 'response size should not greater than 10000000 bytes'],
    [-32614, 'eth_getLogs is limited to a 10,000 range'],
    [-32005, 'block range exceeds the limit (more than 1000 blocks)'],
    [-32000, 'query exceeds max results 20000, retry with the range 24383075-24383096'],
    [-32000, 'Block range limit exceeded.'],
  ];
  for (const [code, message] of ranges) {
    test(`"${message}" is a range refusal`, () => {
      assert.equal(classifyRpcError({ code, message }), 'range');
    });
  }

  test('rate limits and overloads are transient, not range refusals', () => {
    assert.equal(classifyRpcError({ code: -32005, message: 'rate limit exceeded' }), 'transient');
    assert.equal(classifyRpcError({ code: -32005, message: 'limit exceeded' }), 'transient');
    assert.equal(classifyRpcError({ code: -32000, message: 'Too Many Requests' }), 'transient');
    assert.equal(classifyRpcError({ code: 429, message: 'slow down' }), 'transient');
  });

  test('missing state, reverts and unknown methods are told apart', () => {
    assert.equal(classifyRpcError({ code: -32000, message: 'header not found' }), 'missing-state');
    assert.equal(
      classifyRpcError({ code: -32000, message: 'missing trie node abc (path )' }),
      'missing-state',
    );
    // A node behind the requested block: anvil (also while it unwinds a reorg), geth's eth_getLogs.
    assert.equal(
      classifyRpcError({
        code: -32602,
        message: 'BlockOutOfRangeError: block height is 70 but requested was 100',
      }),
      'missing-state',
    );
    assert.equal(
      classifyRpcError({ code: -32602, message: 'block range extends beyond current head block' }),
      'missing-state',
    );
    assert.equal(classifyRpcError({ code: -32000, message: 'execution reverted' }), 'other');
    assert.equal(classifyRpcError({ code: 3, message: 'execution reverted: no cap' }), 'other');
    assert.equal(classifyRpcError({ code: -32601, message: 'the method foo does not exist' }), 'other');
  });

  test('the suggested range is read from the provider message', () => {
    assert.equal(suggestedRangeOf('eth_getLogs is limited to a 10,000 range'), 10_000);
    assert.equal(suggestedRangeOf('requested too many blocks from 0 to 5000, maximum is set to 2048'), 2048);
    assert.equal(suggestedRangeOf('Try with this block range [0x10, 0x1f].'), 16);
    assert.equal(suggestedRangeOf('query returned more than 10000 results'), undefined);
  });
});

describe('rpc client: transient faults', () => {
  let node: FixtureNode;
  let requests: () => number;
  before(async () => {
    ({ node, requests } = await realNode());
  });
  after(() => node.close());

  const faults: [string, FixtureFault][] = [
    ['HTTP 429 with Retry-After', { type: 'status', status: 429, retryAfter: 0 }],
    ['HTTP 503', { type: 'status', status: 503 }],
    ['HTTP 502 with an HTML body', { type: 'status', status: 502, body: '<html>bad gateway</html>' }],
    ['a malformed JSON body', { type: 'malformed' }],
    ['a dropped connection', { type: 'drop' }],
    ['an answer slower than the timeout', { type: 'delay', ms: 1_000 }],
    ['a rate-limit JSON-RPC error', { type: 'rpc-error', code: -32005, message: 'rate limit exceeded' }],
    [
      '"header not found" from a node behind',
      { type: 'rpc-error', code: -32000, message: 'header not found' },
    ],
  ];
  for (const [name, fault] of faults) {
    test(`a request is retried after ${name}`, async () => {
      const rpc = client(node.url, { timeoutMs: 200 });
      node.injectFaults(fault, fault);
      const before = requests();
      assert.equal(await rpc.request('eth_blockNumber', []), '0x1060a3a');
      assert.equal(requests() - before, 3);
    });
  }

  test('a batch is retried after a non-array answer and after a dropped connection', async () => {
    const rpc = client(node.url);
    node.injectFaults({ type: 'body', body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}' }, { type: 'drop' });
    const answers = await rpc.batch([
      { method: 'eth_chainId', params: [] },
      { method: 'eth_blockNumber', params: [] },
    ]);
    assert.deepEqual(answers, [{ result: '0x1' }, { result: '0x1060a3a' }]);
  });

  test('only the rate-limited calls of a batch are sent again', async () => {
    const rpc = client(node.url);
    // The first answer rate-limits the second call only.
    node.injectFaults({
      type: 'rewrite',
      rewrite: (reply) =>
        (reply as { id: number }[]).map((item, i) =>
          i === 1
            ? { jsonrpc: '2.0', id: item.id, error: { code: -32005, message: 'rate limit exceeded' } }
            : item,
        ),
    });
    const before = node.calls.get('eth_getBlockByNumber') ?? 0;
    const answers = await rpc.batch([
      { method: 'eth_getBlockByNumber', params: ['0x1060a39', false] },
      { method: 'eth_getBlockByNumber', params: ['0x1060a3a', false] },
    ]);
    assert.deepEqual(
      answers.map((a) => ('result' in a ? (a.result as { number: string }).number : a)),
      ['0x1060a39', '0x1060a3a'],
    );
    assert.equal((node.calls.get('eth_getBlockByNumber') ?? 0) - before, 3);
  });
});

describe('rpc client: giving up', () => {
  let node: FixtureNode;
  let requests: () => number;
  let authorization: (string | undefined)[];
  before(async () => {
    ({ node, requests, authorization } = await realNode());
  });
  after(() => node.close());

  test('after the retries run out the error names the fault, never the URL or its credentials', async () => {
    const url = node.url.replace('http://', 'http://user:secret@') + 'v3/KEY123';
    const rpc = client(url, { maxRetries: 2 });
    node.injectFaults(...Array.from({ length: 3 }, (): FixtureFault => ({ type: 'status', status: 503 })));
    const before = requests();
    const error = await rpc.request('eth_blockNumber', []).then(
      () => assert.fail('expected failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof RpcTransportError);
    assert.equal(error.retryable, true);
    assert.equal(error.status, 503);
    assert.match(error.message, /eth_blockNumber failed after 3 attempts: HTTP 503/);
    assert.equal(requests() - before, 3);
    const text = `${String(error)} ${error.stack} ${JSON.stringify(error)} ${String(error.cause)}`;
    for (const secret of ['secret', 'KEY123', '127.0.0.1', 'user:'])
      assert.ok(!text.includes(secret), secret);
    // The credentials went to the node as Basic auth instead.
    assert.equal(authorization.at(-1), `Basic ${Buffer.from('user:secret').toString('base64')}`);
  });

  test('a refused connection gives up with a network error that names no address', async () => {
    const closed = await startFixtureNode();
    const url = closed.url.replace('http://', 'http://user:secret@');
    await closed.close();
    const rpc = client(url, { maxRetries: 1 });
    const error = await rpc.request('eth_chainId', []).then(
      () => assert.fail('expected failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof RpcTransportError);
    assert.match(error.message, /network error \(ECONNREFUSED\)/);
    assert.ok(!error.message.includes('secret') && !error.message.includes('127.0.0.1'));
  });

  test('an HTTP 401 is not retried', async () => {
    const rpc = client(node.url);
    node.injectFaults({ type: 'status', status: 401, body: 'unauthorized' });
    const before = requests();
    await assert.rejects(
      rpc.request('eth_blockNumber', []),
      (e: unknown) => e instanceof RpcTransportError && e.status === 401 && !e.retryable,
    );
    assert.equal(requests() - before, 1);
  });

  test('a JSON-RPC error that retrying cannot fix is thrown at once', async () => {
    const rpc = client(node.url);
    const before = requests();
    await assert.rejects(
      rpc.request('eth_nonsense', []),
      (e: unknown) => e instanceof RpcResponseError && e.code === -32601,
    );
    assert.equal(requests() - before, 1);
  });
});

describe('rpc client: batches', () => {
  let node: FixtureNode;
  let requests: () => number;
  before(async () => {
    ({ node, requests } = await realNode());
  });
  after(() => node.close());

  test('a batch above maxBatchSize is split and answered in call order', async () => {
    const rpc = client(node.url, { maxBatchSize: 3 });
    const tags = ['0x1060a3a', '0x1060a39', '0x1', '0x1060a39', '0x1060a3a', '0x1060a39', '0x2', '0x1060a3a'];
    const before = requests();
    const answers = await rpc.batch(
      tags.map((tag) => ({ method: 'eth_getBlockByNumber', params: [tag, false] })),
    );
    assert.equal(requests() - before, 3);
    assert.deepEqual(
      answers.map((a) =>
        'result' in a && a.result !== null ? (a.result as { number: string }).number : null,
      ),
      tags.map((tag) => (tag.length > 3 ? tag : null)),
    );
  });

  test('per-call errors come back as items, not exceptions', async () => {
    const rpc = client(node.url);
    const answers = await rpc.batch([
      { method: 'eth_call', params: [{ to: `0x${'1'.repeat(40)}`, data: '0x06fdde03' }, 'latest'] },
      { method: 'eth_chainId', params: [] },
    ]);
    assert.ok('error' in answers[0]! && /execution reverted/.test(answers[0].error.message));
    assert.deepEqual(answers[1], { result: '0x1' });
  });

  test('an empty batch sends nothing', async () => {
    const before = requests();
    assert.deepEqual(await client(node.url).batch([]), []);
    assert.equal(requests(), before);
  });
});
