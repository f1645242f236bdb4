/**
 * What the indexer's RPC clients did, per chain and JSON-RPC method: calls, failed round trips by
 * kind, and round-trip latency. Counted where the clients run (the indexer's worker thread in
 * `start`, the process itself in `index`) and exposed as plain snapshots, which the API's
 * `/metrics` (or `index --metrics-port`) writes out.
 */
import {
  createExposition,
  createHistogramSeries,
  type Exposition,
  type HistogramSeries,
  LATENCY_BUCKETS,
  labelText,
  mergeHistogram,
  observe,
} from './prometheus.js';

/** Why a round trip to a node failed. */
export type RpcFailure =
  /** No complete answer within the timeout. */
  | 'timeout'
  /** Connection refused or reset, DNS failure. */
  | 'network'
  /** An HTTP error status (429, 5xx, or a refusal). */
  | 'http'
  /** A JSON-RPC error object (rate limits and reverts included). */
  | 'rpc'
  /** The node refused the range or the answer size (the caller splits the request). */
  | 'range'
  /** Not a usable JSON-RPC answer. */
  | 'malformed';

export const RPC_FAILURES: readonly RpcFailure[] = [
  'timeout',
  'network',
  'http',
  'rpc',
  'range',
  'malformed',
];

/**
 * Told of every HTTP round trip an RPC client makes: the method (a batch's method when all its
 * calls share one, else `mixed`), how many JSON-RPC calls it carried, how long it took, and how
 * it failed (null: it answered).
 */
export type RpcObserver = (
  method: string,
  calls: number,
  seconds: number,
  failure: RpcFailure | null,
) => void;

/** One chain and method's figures, as plain data. */
export interface RpcSeriesSnapshot {
  chain: string;
  method: string;
  /** JSON-RPC calls sent (a batch of 100 counts 100; a retried call counts again). */
  calls: number;
  /** Failed round trips by kind. */
  failures: Partial<Record<RpcFailure, number>>;
  /** Round-trip latency, in seconds, over {@link LATENCY_BUCKETS}. */
  latency: HistogramSeries;
}

export interface RpcMetrics {
  /** The observer to give the RPC client of `chain`. */
  forChain(chain: string): RpcObserver;
  /** A copy of every series. */
  snapshot(): RpcSeriesSnapshot[];
  /** Moves with every observation, so a reader can tell whether a new snapshot is worth taking. */
  version(): number;
}

/** Distinct (chain, method) series kept; past it, new methods are counted as `other`. Methods come from code, so this is only a guard. */
const MAX_SERIES = 256;

export function createRpcMetrics(): RpcMetrics {
  const series = new Map<string, RpcSeriesSnapshot>();
  let version = 0;
  const seriesFor = (chain: string, method: string): RpcSeriesSnapshot => {
    const key = `${chain}\n${method}`;
    let s = series.get(key);
    if (s === undefined) {
      if (series.size >= MAX_SERIES && method !== 'other') return seriesFor(chain, 'other');
      s = { chain, method, calls: 0, failures: {}, latency: createHistogramSeries(LATENCY_BUCKETS) };
      series.set(key, s);
    }
    return s;
  };
  return {
    forChain(chain) {
      return (method, calls, seconds, failure) => {
        const s = seriesFor(chain, method);
        s.calls += calls;
        if (failure !== null) s.failures[failure] = (s.failures[failure] ?? 0) + 1;
        observe(s.latency, LATENCY_BUCKETS, seconds);
        version++;
      };
    },
    snapshot() {
      return [...series.values()].map((s) => ({
        chain: s.chain,
        method: s.method,
        calls: s.calls,
        failures: { ...s.failures },
        latency: { counts: [...s.latency.counts], sum: s.latency.sum, count: s.latency.count },
      }));
    },
    version: () => version,
  };
}

/**
 * Writes the RPC families. Several snapshots (say, of successive indexer runs) are added up per
 * chain and method. Written even when empty, so that the families are always announced.
 */
export function writeRpcMetrics(out: Exposition, snapshots: readonly (readonly RpcSeriesSnapshot[])[]): void {
  const merged = new Map<string, RpcSeriesSnapshot>();
  for (const snapshot of snapshots) {
    for (const s of snapshot) {
      const key = `${s.chain}\n${s.method}`;
      const into = merged.get(key);
      if (into === undefined) {
        merged.set(key, {
          ...s,
          failures: { ...s.failures },
          latency: { counts: [...s.latency.counts], sum: s.latency.sum, count: s.latency.count },
        });
        continue;
      }
      into.calls += s.calls;
      for (const kind of RPC_FAILURES) {
        const n = s.failures[kind];
        if (n !== undefined) into.failures[kind] = (into.failures[kind] ?? 0) + n;
      }
      mergeHistogram(into.latency, s.latency);
    }
  }
  const all = [...merged.values()].sort((a, b) =>
    a.chain === b.chain ? a.method.localeCompare(b.method) : a.chain.localeCompare(b.chain),
  );
  out.family(
    'tokenquery_rpc_calls_total',
    'counter',
    'JSON-RPC calls sent to chain nodes, by chain and method.',
  );
  for (const s of all)
    out.sample('tokenquery_rpc_calls_total', labelText({ chain: s.chain, method: s.method }), s.calls);
  out.family(
    'tokenquery_rpc_errors_total',
    'counter',
    'Failed round trips to chain nodes (each retry counts), by chain, method and kind: timeout, network, http, rpc, range, malformed.',
  );
  for (const s of all) {
    for (const kind of RPC_FAILURES) {
      const n = s.failures[kind];
      if (n !== undefined) {
        out.sample('tokenquery_rpc_errors_total', labelText({ chain: s.chain, method: s.method, kind }), n);
      }
    }
  }
  out.family(
    'tokenquery_rpc_request_duration_seconds',
    'histogram',
    'Round-trip time of HTTP requests to chain nodes (one request may carry a batch of calls), by chain and method.',
  );
  for (const s of all) {
    out.histogram(
      'tokenquery_rpc_request_duration_seconds',
      labelText({ chain: s.chain, method: s.method }),
      LATENCY_BUCKETS,
      s.latency,
    );
  }
}

/** The RPC families alone, as a whole exposition text. */
export function rpcMetricsText(snapshot: readonly RpcSeriesSnapshot[]): string {
  const out = createExposition();
  writeRpcMetrics(out, [snapshot]);
  return out.text();
}
