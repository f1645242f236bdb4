/**
 * `/metrics` of a running API over a real store: strict Prometheus text, no key needed,
 * request counters that move with traffic by route id (never by raw URL), each chain's figures
 * as `/status` and the store say, and the indexer's RPC figures when it runs in the process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../internal/logger.js';
import { createRpcMetrics } from '../internal/rpc-metrics.js';
import { type Family, parsePrometheusText, sampleValue } from '../internal/testing/prometheus.js';
import { type ApiServer, startApiServer } from './server.js';
import {
  ALICE,
  type ApiFixture,
  BSC_ERROR,
  ETH_HEAD,
  ETH_INDEXED,
  ETH_TRANSFERS,
  startApiFixture,
  USDC,
} from './testing/fixture.js';
import { assertError, call } from './testing/http.js';

let fx: ApiFixture;
before(async () => {
  fx = await startApiFixture();
});
after(() => fx?.close());

async function scrape(base = fx.url): Promise<{ text: string; families: Map<string, Family> }> {
  const answer = await call(base, '/metrics');
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return { text: answer.text, families: parsePrometheusText(answer.text) };
}

const requests = (families: Map<string, Family>, labels: Record<string, string>) =>
  sampleValue(families, 'tokenquery_http_requests_total', labels) ?? 0;
const durations = (families: Map<string, Family>, labels: Record<string, string>) =>
  sampleValue(families, 'tokenquery_http_request_duration_seconds_count', labels) ?? 0;

describe('/metrics', () => {
  test('is strict Prometheus text, needs no key, and announces every family with its type', async () => {
    const { families } = await scrape();
    const types: Record<string, string> = {
      tokenquery_http_requests_total: 'counter',
      tokenquery_http_request_duration_seconds: 'histogram',
      tokenquery_chain_head_block: 'gauge',
      tokenquery_chain_indexed_block: 'gauge',
      tokenquery_chain_lag_blocks: 'gauge',
      tokenquery_chain_blocks_per_second: 'gauge',
      tokenquery_chain_transfers_per_second: 'gauge',
      tokenquery_chain_transfers_indexed: 'gauge',
      tokenquery_store_size_bytes: 'gauge',
      tokenquery_rpc_calls_total: 'counter',
      tokenquery_rpc_errors_total: 'counter',
      tokenquery_rpc_request_duration_seconds: 'histogram',
      process_cpu_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
    };
    for (const [name, type] of Object.entries(types)) {
      assert.equal(families.get(name)?.type, type, name);
      assert.ok(families.get(name)!.help.length > 0, `${name} has no help`);
    }
  });

  test('request counters move with traffic, by route id and status; addresses never become labels', async () => {
    const before = (await scrape()).families;
    const tokenInfo = { route: '/vipapi/:chain/token/:address', method: 'GET' };
    const ok = { ...tokenInfo, code: '200' };
    const refused = { ...tokenInfo, code: '401' };
    const unmatched = { route: 'unmatched', method: 'GET', code: '404' };
    const probe = `0x${'9d'.repeat(20)}`;
    for (let i = 0; i < 7; i++) {
      assert.equal((await call(fx.url, `/vipapi/eth/token/${USDC}?apikey=${fx.key}`)).status, 200);
    }
    for (let i = 0; i < 3; i++) {
      assertError(await call(fx.url, `/vipapi/eth/token/${probe}?apikey=wrong`), {
        http: 401,
        code: 50003,
        msg: 'invalid apikey',
      });
    }
    await call(fx.url, `/vipapi/eth/nothing/${probe}`);
    await call(fx.url, `/${ALICE}`);
    assert.equal(
      (await call(fx.url, `/vipapi/eth/token/${USDC}?apikey=${fx.key}`, { method: 'HEAD' })).status,
      200,
    );

    const { text, families: after } = await scrape();
    assert.equal(requests(after, ok) - requests(before, ok), 7);
    assert.equal(durations(after, ok) - durations(before, ok), 7);
    assert.equal(requests(after, refused) - requests(before, refused), 3);
    assert.equal(requests(after, unmatched) - requests(before, unmatched), 2);
    const head = { ...tokenInfo, method: 'HEAD', code: '200' };
    assert.equal(requests(after, head) - requests(before, head), 1);
    // The scrape before this one was counted once it was answered.
    const metrics = { route: '/metrics', method: 'GET', code: '200' };
    assert.equal(requests(after, metrics) - requests(before, metrics), 1);
    for (const address of [probe, ALICE, USDC])
      assert.ok(!text.includes(address.slice(2)), `${address} in /metrics`);
    assert.ok(!text.includes(fx.key), 'the API key in /metrics');
    // Seven answers took some time, and no more than the test did.
    const sum = (f: Map<string, Family>) =>
      sampleValue(f, 'tokenquery_http_request_duration_seconds_sum', ok) ?? 0;
    assert.ok(sum(after) > sum(before) && sum(after) - sum(before) < 10);
  });

  test("each chain's figures are what /status and the store say", async () => {
    const { families } = await scrape();
    const eth = { chain: 'eth' };
    assert.equal(sampleValue(families, 'tokenquery_chain_head_block', eth), ETH_HEAD);
    assert.equal(sampleValue(families, 'tokenquery_chain_indexed_block', eth), ETH_INDEXED);
    assert.equal(sampleValue(families, 'tokenquery_chain_lag_blocks', eth), ETH_HEAD - ETH_INDEXED);
    assert.equal(sampleValue(families, 'tokenquery_chain_transfers_indexed', eth), ETH_TRANSFERS.length);
    assert.equal(sampleValue(families, 'tokenquery_chain_blocks_per_second', eth), 0);
    assert.equal(sampleValue(families, 'tokenquery_chain_indexer_error', eth), 0);
    // bsc's indexer reported an error: a flag, the message stays in /status.
    assert.equal(sampleValue(families, 'tokenquery_chain_indexer_error', { chain: 'bsc' }), 1);
    assert.ok(!(await scrape()).text.includes(BSC_ERROR));
    // movr is configured and never indexed.
    assert.equal(sampleValue(families, 'tokenquery_chain_indexed_block', { chain: 'movr' }), 0);
    const bytes = sampleValue(families, 'tokenquery_store_size_bytes', { backend: 'sqlite' });
    assert.ok(bytes !== undefined && bytes > 0, `store size ${bytes}`);
  });

  test('other methods answer 405', async () => {
    assertError(await call(fx.url, '/metrics', { method: 'POST' }), {
      http: 405,
      code: 10001,
      msg: /method not allowed/,
    });
  });
});

describe('/metrics with the indexer in the process', () => {
  let server: ApiServer;
  const rpc = createRpcMetrics();
  before(async () => {
    server = await startApiServer({
      store: fx.store,
      logger: silentLogger(),
      chains: ['eth'],
      host: '127.0.0.1',
      port: 0,
      rpcMetrics: () => rpc.snapshot(),
    });
  });
  after(() => server?.close());

  test('shows the RPC figures it is given, as they move', async () => {
    const observe = rpc.forChain('eth');
    observe('eth_getLogs', 1, 0.2, null);
    observe('eth_getLogs', 1, 3, 'timeout');
    observe('eth_getBlockByNumber', 100, 0.05, null);
    const labels = { chain: 'eth', method: 'eth_getLogs' };
    let { families } = await scrape(server.url);
    assert.equal(sampleValue(families, 'tokenquery_rpc_calls_total', labels), 2);
    assert.equal(sampleValue(families, 'tokenquery_rpc_errors_total', { ...labels, kind: 'timeout' }), 1);
    assert.equal(
      sampleValue(families, 'tokenquery_rpc_request_duration_seconds_bucket', { ...labels, le: '0.25' }),
      1,
    );
    assert.equal(
      sampleValue(families, 'tokenquery_rpc_request_duration_seconds_bucket', { ...labels, le: '5' }),
      2,
    );
    assert.equal(
      sampleValue(families, 'tokenquery_rpc_calls_total', { chain: 'eth', method: 'eth_getBlockByNumber' }),
      100,
    );
    observe('eth_getLogs', 1, 0.1, null);
    ({ families } = await scrape(server.url));
    assert.equal(sampleValue(families, 'tokenquery_rpc_calls_total', labels), 3);
  });
});
