/**
 * The RPC client's figures for `/metrics`, against a real JSON-RPC server (the fixture node):
 * every round trip is counted with its method and number of calls, and each way of failing
 * under its own kind. The text they become parses as Prometheus text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../internal/logger.js';
import {
  createRpcMetrics,
  type RpcMetrics,
  type RpcSeriesSnapshot,
  rpcMetricsText,
} from '../../internal/rpc-metrics.js';
import { parsePrometheusText, sampleValue } from '../../internal/testing/prometheus.js';
import { type FixtureNode, startFixtureNode } from '../evm/testing/fixture-node.js';
import { createRpcClient, type RpcClient } from './rpc-client.js';

let node: FixtureNode;
before(async () => {
  node = await startFixtureNode({ head: 100, limits: { maxBlockRange: 10 } });
});
after(() => node?.close());

function client(metrics: RpcMetrics, options: { timeoutMs?: number; maxRetries?: number } = {}): RpcClient {
  return createRpcClient({
    url: node.url,
    logger: silentLogger(),
    retryBaseMs: 1,
    retryMaxMs: 5,
    observe: metrics.forChain('eth'),
    ...options,
  });
}

function series(metrics: RpcMetrics, method: string): RpcSeriesSnapshot {
  const found = metrics.snapshot().find((s) => s.chain === 'eth' && s.method === method);
  assert.ok(found, `no series for ${method}: ${JSON.stringify(metrics.snapshot())}`);
  return found;
}

describe('rpc metrics', () => {
  test('each round trip counts once with its calls; a batch counts every call under its method', async () => {
    const metrics = createRpcMetrics();
    const rpc = client(metrics);
    for (let i = 0; i < 3; i++) await rpc.request('eth_blockNumber', []);
    await rpc.batch(
      Array.from({ length: 5 }, (_, i) => ({ method: 'eth_getBlockByNumber', params: [`0x${i}`, false] })),
    );
    await rpc.batch([
      { method: 'eth_chainId', params: [] },
      { method: 'eth_blockNumber', params: [] },
    ]);
    const blockNumber = series(metrics, 'eth_blockNumber');
    assert.equal(blockNumber.calls, 3);
    assert.equal(blockNumber.latency.count, 3);
    assert.deepEqual(blockNumber.failures, {});
    assert.ok(blockNumber.latency.sum > 0 && blockNumber.latency.sum < 5);
    const blocks = series(metrics, 'eth_getBlockByNumber');
    assert.equal(blocks.calls, 5);
    assert.equal(blocks.latency.count, 1);
    assert.equal(series(metrics, 'mixed').calls, 2);
    assert.equal(node.calls.get('eth_getBlockByNumber'), 5);
  });

  test('failures are counted by kind, every failed attempt of a retried call too', async () => {
    const metrics = createRpcMetrics();
    const rpc = client(metrics, { timeoutMs: 300 });
    node.injectFaults(
      { type: 'status', status: 503 },
      { type: 'malformed' },
      { type: 'drop' },
      { type: 'delay', ms: 1000 },
    );
    // Four failed attempts, then the answer.
    assert.equal(await rpc.request('eth_chainId', []), '0x1');
    const chainId = series(metrics, 'eth_chainId');
    assert.deepEqual(chainId.failures, { http: 1, malformed: 1, network: 1, timeout: 1 });
    assert.equal(chainId.calls, 5);
    assert.equal(chainId.latency.count, 5);

    // A JSON-RPC error the client does not retry, and a range refusal.
    await assert.rejects(rpc.request('eth_noSuchMethod', []));
    assert.deepEqual(series(metrics, 'eth_noSuchMethod').failures, { rpc: 1 });
    await assert.rejects(rpc.request('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x50' }]), /range/i);
    assert.deepEqual(series(metrics, 'eth_getLogs').failures, { range: 1 });
  });

  test('the figures are valid Prometheus text with the same values', async () => {
    const metrics = createRpcMetrics();
    const rpc = client(metrics);
    await rpc.request('eth_blockNumber', []);
    node.injectFaults({ type: 'status', status: 429 });
    await rpc.request('eth_blockNumber', []);
    const families = parsePrometheusText(rpcMetricsText(metrics.snapshot()));
    const labels = { chain: 'eth', method: 'eth_blockNumber' };
    assert.equal(families.get('tokenquery_rpc_calls_total')?.type, 'counter');
    assert.equal(sampleValue(families, 'tokenquery_rpc_calls_total', labels), 3);
    assert.equal(sampleValue(families, 'tokenquery_rpc_errors_total', { ...labels, kind: 'http' }), 1);
    assert.equal(sampleValue(families, 'tokenquery_rpc_request_duration_seconds_count', labels), 3);
    assert.equal(
      sampleValue(families, 'tokenquery_rpc_request_duration_seconds_bucket', { ...labels, le: '+Inf' }),
      3,
    );
  });

  test('a client without an observer works as before', async () => {
    const rpc = createRpcClient({ url: node.url, logger: silentLogger() });
    assert.equal(await rpc.request('eth_blockNumber', []), '0x64');
  });
});
