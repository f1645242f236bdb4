/**
 * What the operator surface tells whom: anonymous `/status` and dashboard data give an error class
 * only (no host, pid, URL, user name or raw text), a valid key sees everything; `/status` and
 * `/healthz` read the store a bounded number of times however many requests arrive; reading
 * `/metrics` changes no figure; and `/metrics`, the dashboard and the docs can move to a listener
 * of their own, or go.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../internal/logger.js';
import { createExposition } from '../internal/prometheus.js';
import { parsePrometheusText, sampleValue } from '../internal/testing/prometheus.js';
import type { ChainStatus, Store } from '../store/types.js';
import { createProcessMetrics } from './metrics.js';
import { STATUS_MAX_AGE_MS } from './routes/health.js';
import { type ApiServer, startApiServer } from './server.js';
import { type ApiFixture, startApiFixture, USDC } from './testing/fixture.js';
import { call } from './testing/http.js';

/** What a PostgreSQL driver and the writer election would put in a status row. */
const RAW_ERROR = 'connect ECONNREFUSED 10.1.2.3:5432 user=admin';
const WRITER_ID = 'db-host-7.internal:4242';
const SECRETS = ['10.1.2.3', '5432', 'admin', 'ECONNREFUSED', 'db-host-7', '4242', 'connect '];

let fx: ApiFixture;
/** Store reads of chain statuses made through {@link counted}. */
let statusReads = 0;
let counted: Store;

before(async () => {
  fx = await startApiFixture();
  await fx.store.writer.setChainStatus('eth', { lastError: RAW_ERROR });
  const { reader } = fx.store;
  const withWriter = (s: ChainStatus): ChainStatus =>
    s.chain === 'eth' ? { ...s, writer: { id: WRITER_ID, epoch: 3, since: 1_700_000_000_000 } } : s;
  counted = {
    ...fx.store,
    reader: {
      ...reader,
      async getChainStatus(chain) {
        const s = await reader.getChainStatus(chain);
        return s === null ? null : withWriter(s);
      },
      async listChainStatuses() {
        statusReads++;
        return (await reader.listChainStatuses()).map(withWriter);
      },
    },
  };
});
after(() => fx?.close());

async function serve(options: Partial<Parameters<typeof startApiServer>[0]> = {}): Promise<ApiServer> {
  return startApiServer({
    store: counted,
    logger: silentLogger(),
    chains: ['eth', 'bsc', 'movr'],
    host: '127.0.0.1',
    port: 0,
    ...options,
  });
}

function assertNoSecrets(text: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${JSON.stringify(secret)} in ${text}`);
}

describe('/status', () => {
  let server: ApiServer;
  before(async () => {
    server = await serve();
  });
  after(() => server?.close());

  test('anonymous: only an error class, and no writer host or pid', async () => {
    const answer = await call(server.url, '/status');
    assert.equal(answer.status, 200, answer.text);
    assertNoSecrets(answer.text);
    const eth = (JSON.parse(answer.text) as { chains: Record<string, Record<string, unknown>> }).chains.eth!;
    assert.equal(eth.lastError, 'database unreachable');
    assert.deepEqual(eth.writer, { epoch: 3, since: 1_700_000_000_000 });
  });

  test('anonymous dashboard data: only an error class too', async () => {
    const answer = await call(server.url, '/dashboard/data');
    assert.equal(answer.status, 200, answer.text);
    assertNoSecrets(answer.text);
  });

  test('with a valid key: the full error and the writer', async () => {
    const answer = await call(server.url, `/status?apikey=${fx.key}`);
    assert.equal(answer.status, 200, answer.text);
    const eth = (JSON.parse(answer.text) as { chains: Record<string, Record<string, unknown>> }).chains.eth!;
    assert.equal(eth.lastError, RAW_ERROR);
    assert.deepEqual(eth.writer, { id: WRITER_ID, epoch: 3, since: 1_700_000_000_000 });
  });

  test('with a wrong key: refused, and nothing shown', async () => {
    const answer = await call(server.url, '/status?apikey=wrong');
    assert.equal(answer.status, 401, answer.text);
    assertNoSecrets(answer.text);
  });

  test('a burst of /status and /healthz requests reads the store a bounded number of times', async () => {
    // Past the tracker's first reading and any cached snapshot.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = statusReads;
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(server.url, i % 2 === 0 ? '/status' : '/healthz')),
    );
    for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    // One shared read per 250 ms, plus the progress tracker's own once a second (and one each
    // for a reading that straddles the start or the end), however many requests came.
    const ms = Date.now() - started;
    const bound = Math.floor(ms / STATUS_MAX_AGE_MS) + Math.floor(ms / 1000) + 4;
    const reads = statusReads - before;
    assert.ok(reads <= bound, `${reads} store reads for 100 requests in ${ms} ms`);
    assert.ok(bound < 50, `the burst took ${ms} ms: too slow to tell`);
  });
});

describe('/metrics', () => {
  test('reading the event-loop figures does not reset them', async () => {
    const metrics = createProcessMetrics({ windowMs: 100 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const read = () => {
        const out = createExposition();
        metrics.write(out);
        return out
          .text()
          .split('\n')
          .filter((line) => line.startsWith('nodejs_eventloop_delay'));
      };
      const first = read();
      const second = read();
      assert.equal(first.length, 3);
      for (const line of first) assert.ok(!line.endsWith('NaN'), line);
      assert.deepEqual(second, first);
    } finally {
      metrics.close();
    }
  });

  test('two scrapes in a row give the same event-loop figures', async () => {
    const server = await serve();
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const figures = async () => {
        const families = parsePrometheusText((await call(server.url, '/metrics')).text);
        return [
          sampleValue(families, 'nodejs_eventloop_delay_seconds', { quantile: '0.99' }),
          sampleValue(families, 'nodejs_eventloop_delay_max_seconds', {}),
        ];
      };
      const first = await figures();
      const second = await figures();
      // A scrape empties nothing: figures seen once stay figures.
      for (const value of [...first, ...second]) assert.ok(Number.isFinite(value), `${first} ${second}`);
    } finally {
      await server.close();
    }
  });
});

describe('operator listener', () => {
  const OPERATOR_PATHS = ['/metrics', '/', '/dashboard/data', '/dashboard/assets/dashboard.js', '/docs'];

  test('a separate listener serves metrics, dashboard and docs; the API listener does not', async () => {
    const server = await serve({ operatorListen: { host: '127.0.0.1', port: 0 } });
    try {
      assert.ok(server.operatorUrl !== undefined && server.operatorUrl !== server.url);
      for (const path of OPERATOR_PATHS) {
        assert.equal((await call(server.operatorUrl!, path)).status, 200, path);
        const onApi = await call(server.url, path);
        assert.equal(onApi.status, 404, path);
        assert.equal(JSON.parse(onApi.text).code, 404, onApi.text);
      }
      // The docs page there loads the document from its own origin.
      assert.equal((await call(server.operatorUrl!, '/openapi.json')).status, 200);
      // The API keeps its own routes.
      for (const path of ['/status', '/healthz', '/openapi.json']) {
        assert.equal((await call(server.url, path)).status, 200, path);
      }
      assert.equal((await call(server.url, `/vipapi/eth/token/${USDC}?apikey=${fx.key}`)).status, 200);
    } finally {
      await server.close();
    }
  });

  test('off: metrics, dashboard and docs are served nowhere', async () => {
    const server = await serve({ operatorListen: 'off' });
    try {
      assert.equal(server.operatorUrl, undefined);
      for (const path of OPERATOR_PATHS) assert.equal((await call(server.url, path)).status, 404, path);
      for (const path of ['/status', '/healthz', '/openapi.json']) {
        assert.equal((await call(server.url, path)).status, 200, path);
      }
    } finally {
      await server.close();
    }
  });

  test('same (the default): everything on the API listener', async () => {
    const server = await serve();
    try {
      assert.equal(server.operatorUrl, undefined);
      for (const path of OPERATOR_PATHS) assert.equal((await call(server.url, path)).status, 200, path);
    } finally {
      await server.close();
    }
  });
});
