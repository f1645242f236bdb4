/**
 * `/metrics`: Prometheus text (prometheus.ts) of what an operator watches: HTTP requests and
 * latency by route and status, each chain's progress and throughput (chain-progress.ts), the
 * store's size, the indexer's RPC calls (when it runs in this process), and the process itself.
 *
 * Requests are counted per route id, the route's URL pattern (`/vipapi/:chain/token/:address`),
 * never the raw URL, so addresses cannot multiply the series; paths no route matches count as
 * `unmatched`. Recording is an `onResponse` hook attached to each route when it is registered,
 * holding that route's series: a request costs one map lookup (method and status) and a
 * histogram observation, with no allocation once its series exists. Cache hits answered before
 * routing (fast-path.ts) are recorded in their route's series through `recorder`, their latency
 * taken from the request's arrival to the answer's hand-over to the socket.
 */
import { METHODS } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, onResponseHookHandler, RouteOptions } from 'fastify';
import {
  createExposition,
  createHistogramSeries,
  type Exposition,
  type HistogramSeries,
  LATENCY_BUCKETS,
  labelText,
  observe,
} from '../internal/prometheus.js';
import { type RpcSeriesSnapshot, writeRpcMetrics } from '../internal/rpc-metrics.js';
import type { ChainProgressTracker } from './chain-progress.js';

/** The route label of requests no route matched (404s). */
export const UNMATCHED_ROUTE = 'unmatched';

interface HttpSeries {
  labels: string;
  requests: number;
  latency: HistogramSeries;
}

/** One route's series, by method and status. */
interface RouteSeries {
  route: string;
  byKey: Map<number, HttpSeries>;
}

const METHOD_INDEX = new Map(METHODS.map((method, i) => [method, i]));
const OTHER_METHOD = 63;

function record(route: RouteSeries, method: string, status: number, seconds: number): void {
  // status·64 + method: one number, so the lookup builds no string.
  const key = status * 64 + (METHOD_INDEX.get(method) ?? OTHER_METHOD);
  let series = route.byKey.get(key);
  if (series === undefined) {
    series = {
      labels: labelText({
        route: route.route,
        method: METHOD_INDEX.has(method) ? method : 'other',
        code: String(status),
      }),
      requests: 0,
      latency: createHistogramSeries(LATENCY_BUCKETS),
    };
    route.byKey.set(key, series);
  }
  series.requests++;
  observe(series.latency, LATENCY_BUCKETS, seconds);
}

export interface HttpMetrics {
  write(out: Exposition): void;
  /** Records answers of route `route` (its URL pattern) made outside fastify's hooks (fast-path.ts). */
  recorder(route: string): (method: string, status: number, seconds: number) => void;
}

/**
 * Starts counting the requests of every route registered from now on (call it before the
 * routes), and of requests no route matches.
 */
export function instrumentHttp(app: FastifyInstance): HttpMetrics {
  const routes = new Map<string, RouteSeries>();
  const seriesOf = (route: string): RouteSeries => {
    let series = routes.get(route);
    if (series === undefined) {
      series = { route, byKey: new Map() };
      routes.set(route, series);
    }
    return series;
  };
  const ours = new WeakSet<onResponseHookHandler>();

  app.addHook('onRoute', (options: RouteOptions) => {
    const existing = options.onResponse === undefined ? [] : [options.onResponse].flat();
    // fastify derives a HEAD route from each GET route's options, ours included: one is enough.
    if (existing.some((hook) => ours.has(hook))) return;
    const series = seriesOf(options.url);
    const hook: onResponseHookHandler = (request, reply, done) => {
      record(series, request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    ours.add(hook);
    options.onResponse = [...existing, hook];
  });

  const unmatched = seriesOf(UNMATCHED_ROUTE);
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) record(unmatched, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  return {
    recorder(route) {
      const series = seriesOf(route);
      return (method, status, seconds) => record(series, method, status, seconds);
    },
    write(out) {
      const all = [...routes.values()].flatMap((route) => [...route.byKey.values()]);
      out.family(
        'tokenquery_http_requests_total',
        'counter',
        'HTTP requests answered, by route, method and status code.',
      );
      for (const s of all) out.sample('tokenquery_http_requests_total', s.labels, s.requests);
      out.family(
        'tokenquery_http_request_duration_seconds',
        'histogram',
        'Time from receiving a request to sending its answer, by route, method and status code.',
      );
      for (const s of all)
        out.histogram('tokenquery_http_request_duration_seconds', s.labels, LATENCY_BUCKETS, s.latency);
    },
  };
}

/** Each chain's figures and the store's size. */
export function writeChainMetrics(out: Exposition, progress: ChainProgressTracker, storeKind: string): void {
  const chains = progress
    .current()
    .map((figures) => ({ figures, labels: labelText({ chain: figures.chain }) }));
  const gauge = (
    name: string,
    help: string,
    value: (f: (typeof chains)[number]['figures']) => number | null,
  ) => {
    out.family(name, 'gauge', help);
    for (const { figures, labels } of chains) {
      const v = value(figures);
      if (v !== null) out.sample(name, labels, v);
    }
  };
  gauge('tokenquery_chain_head_block', 'Newest block seen on the chain node.', (f) => f.head);
  gauge(
    'tokenquery_chain_indexed_block',
    'Newest block fully indexed and visible in the API.',
    (f) => f.indexed,
  );
  gauge('tokenquery_chain_lag_blocks', 'Blocks between the node head and the indexed block.', (f) => f.lag);
  gauge(
    'tokenquery_chain_blocks_per_second',
    'Blocks indexed per second over the last 10 seconds.',
    (f) => f.blocksPerSecond,
  );
  gauge(
    'tokenquery_chain_transfers_per_second',
    'Transfers indexed per second over the last 10 seconds.',
    (f) => f.transfersPerSecond,
  );
  gauge(
    'tokenquery_chain_transfers_indexed',
    'Transfers in the index (a reorg takes rolled-back ones off).',
    (f) => f.transfers,
  );
  gauge(
    'tokenquery_chain_indexer_error',
    "1 while the chain's indexer reports an error (see /status for the message), else 0.",
    (f) => (f.lastError === null ? 0 : 1),
  );
  gauge(
    'tokenquery_chain_status_updated_timestamp_seconds',
    "Unix time of the chain status's last update by its indexer.",
    (f) => (f.updatedAt === 0 ? null : f.updatedAt / 1000),
  );
  out.family(
    'tokenquery_store_size_bytes',
    'gauge',
    'Bytes the store takes (SQLite: file and WAL; PostgreSQL: database).',
  );
  const bytes = progress.storageBytes();
  if (bytes !== null) out.sample('tokenquery_store_size_bytes', labelText({ backend: storeKind }), bytes);
}

export interface ProcessMetrics {
  write(out: Exposition): void;
  close(): void;
}

/** Event-loop delay figures are taken over windows of this length. */
export const EVENT_LOOP_WINDOW_MS = 10_000;

interface DelayFigures {
  p50: number;
  p99: number;
  max: number;
}

/**
 * CPU, memory and event-loop delay of this process. The delay is measured over fixed windows
 * ({@link EVENT_LOOP_WINDOW_MS}) that a timer closes, not a scrape: reading `/metrics` changes
 * nothing, so anyone's scrape cannot empty the figures another scraper (or an alert) relies on.
 */
export function createProcessMetrics(options: { windowMs?: number } = {}): ProcessMetrics {
  const started = Date.now() / 1000 - process.uptime();
  const windowMs = options.windowMs ?? EVENT_LOOP_WINDOW_MS;
  const resolutionMs = 20;
  const delay = monitorEventLoopDelay({ resolution: resolutionMs });
  delay.enable();
  // Node records the whole time between its timer's ticks; the delay is what exceeds the period.
  const seconds = (nanoseconds: number) =>
    Number.isFinite(nanoseconds) ? Math.max(0, nanoseconds / 1e9 - resolutionMs / 1000) : Number.NaN;
  const figures = (): DelayFigures =>
    delay.count > 0
      ? { p50: seconds(delay.percentile(50)), p99: seconds(delay.percentile(99)), max: seconds(delay.max) }
      : { p50: Number.NaN, p99: Number.NaN, max: Number.NaN };
  /** The last closed window's figures; null during the first window (the running one is shown then). */
  let closed: DelayFigures | null = null;
  const timer = setInterval(() => {
    closed = figures();
    delay.reset();
  }, windowMs);
  timer.unref();
  return {
    write(out) {
      const cpu = process.cpuUsage();
      const memory = process.memoryUsage();
      out.family('process_cpu_seconds_total', 'counter', 'User and system CPU time spent, in seconds.');
      out.sample('process_cpu_seconds_total', '', (cpu.user + cpu.system) / 1e6);
      out.family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.');
      out.sample('process_resident_memory_bytes', '', memory.rss);
      out.family(
        'process_start_time_seconds',
        'gauge',
        'Start time of the process since the Unix epoch, in seconds.',
      );
      out.sample('process_start_time_seconds', '', Math.round(started));
      out.family('nodejs_heap_used_bytes', 'gauge', 'V8 heap in use, in bytes.');
      out.sample('nodejs_heap_used_bytes', '', memory.heapUsed);
      const window = `over the last ${windowMs / 1000} s window (since start during the first)`;
      const current = closed ?? figures();
      out.family(
        'nodejs_eventloop_delay_seconds',
        'gauge',
        `Event-loop delay percentiles ${window}, in seconds.`,
      );
      out.sample('nodejs_eventloop_delay_seconds', labelText({ quantile: '0.5' }), current.p50);
      out.sample('nodejs_eventloop_delay_seconds', labelText({ quantile: '0.99' }), current.p99);
      out.family(
        'nodejs_eventloop_delay_max_seconds',
        'gauge',
        `Longest event-loop delay ${window}, in seconds.`,
      );
      out.sample('nodejs_eventloop_delay_max_seconds', '', current.max);
    },
    close() {
      clearInterval(timer);
      delay.disable();
    },
  };
}

export interface MetricsSources {
  http: HttpMetrics;
  progress: ChainProgressTracker;
  storeKind: string;
  /** The indexer's RPC figures when it runs in this process (`start`). */
  rpc?: () => readonly RpcSeriesSnapshot[];
  process: ProcessMetrics;
}

/** The whole `/metrics` text. */
export function metricsText(sources: MetricsSources): string {
  const out = createExposition();
  sources.http.write(out);
  writeChainMetrics(out, sources.progress, sources.storeKind);
  writeRpcMetrics(out, sources.rpc === undefined ? [] : [sources.rpc()]);
  sources.process.write(out);
  return out.text();
}
