/**
 * A fault-injecting JSON-RPC proxy, for reliability tests: it sits between the indexer and a real
 * node (anvil) and makes that node look like a bad provider behind a bad load balancer.
 *
 * Per HTTP request it may, at random (seeded) rates: answer HTTP 429 (with `Retry-After`) or 503,
 * drop the connection before answering or halfway through the body, answer slowly, answer a body
 * that is not JSON, refuse an `eth_getLogs` with "query returned more than 10000 results" or
 * "block range is too large", or mark single calls of a batch as rate-limited. It can also enforce
 * fixed provider limits (a maximum `eth_getLogs` span or result count, as real providers do), and
 * it can make the head go backwards: requests then alternate between the current view and a
 * lagging one (a node some blocks behind), where `eth_blockNumber` is lower, newer blocks are
 * `null` and `eth_getLogs` leaves out the newer blocks without saying so — as reth and anvil do
 * when `toBlock` is past their head.
 *
 * ```ts
 * const proxy = await startChaosProxy({ target: anvil.url, seed: 42, faults: MIXED_FAULTS });
 * try { ... index proxy.url ... proxy.stats ... } finally { await proxy.close(); }
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { seededRandom } from '../../../internal/random.js';
import { startLocalHttpServer } from '../../../internal/testing/net.js';

/** Probabilities (0..1) per HTTP request; at most one fault is applied to a request. */
export interface ChaosFaultRates {
  /** HTTP 429 with `Retry-After: 0`. */
  http429?: number;
  /** HTTP 503 with a plain-text body. */
  http503?: number;
  /** The connection is closed before any answer. */
  drop?: number;
  /** Headers and half of the body are sent, then the connection is closed. */
  dropMidBody?: number;
  /** The answer is held back for `slowMs` (default 300 ms) and then sent normally. */
  slow?: number;
  /** HTTP 200 with a body that is not JSON. */
  malformed?: number;
  /** An `eth_getLogs` (alone or in a batch) is refused with -32005 "query returned more than 10000 results". */
  tooManyResults?: number;
  /** An `eth_getLogs` is refused with -32000 "block range is too large". */
  rangeTooLarge?: number;
  /** Each call of a batch is refused alone with -32005 "rate limit exceeded" (per call, this rate). */
  batchItemRateLimit?: number;
}

/** Fixed limits, applied to every request like a real provider's. */
export interface ChaosLimits {
  /** `eth_getLogs` spanning more blocks is refused: "block range is too large (maximum is N blocks)". */
  maxBlockRange?: number;
  /** `eth_getLogs` answering more logs is refused: "query returned more than N results". */
  maxResults?: number;
}

/** A node behind the load balancer that lags: every other request (or a random share) is answered from it. */
export interface ChaosLag {
  /** How many blocks behind the lagging view is. */
  blocks: number;
  /** Share of requests answered by the lagging view. Default 0.5. */
  share?: number;
}

export interface ChaosProxyOptions {
  /** The real node's JSON-RPC URL. */
  target: string;
  /** PRNG seed for every random decision. Default 1. */
  seed?: number;
  faults?: ChaosFaultRates;
  limits?: ChaosLimits;
  lag?: ChaosLag;
  /** Delay of a `slow` answer. Default 300 ms. */
  slowMs?: number;
  /**
   * Per JSON-RPC method, a delay added after the node has answered and before the answer is sent
   * (a request holding several methods waits for the longest): answers computed from the node's
   * state at one moment arrive when that state may be gone (a reorg in between).
   */
  methodDelays?: Readonly<Record<string, number>>;
}

/** Counts of what the proxy did, by kind. */
export interface ChaosStats {
  /** HTTP requests received. */
  requests: number;
  /** Requests answered normally (possibly from the lagging view). */
  passed: number;
  /** Requests answered from the lagging view. */
  lagged: number;
  /** Faults injected, by fault name (`http429`, `limit:maxBlockRange`, `outage`...). */
  faults: Record<string, number>;
  /** JSON-RPC calls received, by method (batched calls counted one by one). */
  methods: Record<string, number>;
}

export interface ChaosProxy {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly stats: ChaosStats;
  /** Replaces the fault rates (`{}` turns random faults off). */
  setFaults(faults: ChaosFaultRates): void;
  /** Replaces the lagging view (`null` turns it off). */
  setLag(lag: ChaosLag | null): void;
  /** While on, every request is answered HTTP 503 (the node is down). */
  setOutage(on: boolean): void;
  /** Total of all injected faults. */
  faultCount(): number;
  close(): Promise<void>;
}

/** A mix of every random fault at rates an indexer must survive (about one request in four is hit). */
export const MIXED_FAULTS: Readonly<ChaosFaultRates> = Object.freeze({
  http429: 0.04,
  http503: 0.04,
  drop: 0.03,
  dropMidBody: 0.03,
  slow: 0.04,
  malformed: 0.03,
  tooManyResults: 0.03,
  rangeTooLarge: 0.03,
  batchItemRateLimit: 0.02,
});

interface Call {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

type Answer = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: { code: number; message: string } };

const hex = (n: number) => `0x${n.toString(16)}`;

function quantity(value: unknown): number | undefined {
  return typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value) ? Number.parseInt(value, 16) : undefined;
}

/** Starts the proxy on 127.0.0.1 and a free port. */
export async function startChaosProxy(options: ChaosProxyOptions): Promise<ChaosProxy> {
  const random = seededRandom(options.seed ?? 1);
  let faults: ChaosFaultRates = { ...(options.faults ?? {}) };
  let lag: ChaosLag | null = options.lag ?? null;
  let outage = false;
  const limits = options.limits ?? {};
  const slowMs = options.slowMs ?? 300;
  const stats: ChaosStats = { requests: 0, passed: 0, lagged: 0, faults: {}, methods: {} };
  const count = (name: string) => {
    stats.faults[name] = (stats.faults[name] ?? 0) + 1;
  };

  async function upstream(body: unknown): Promise<unknown> {
    const response = await fetch(options.target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return JSON.parse(await response.text()) as unknown;
  }

  async function upstreamHead(): Promise<number> {
    const answer = (await upstream({
      jsonrpc: '2.0',
      id: 0,
      method: 'eth_blockNumber',
      params: [],
    })) as Answer;
    return quantity(answer.result) ?? 0;
  }

  /** A refusal of the whole request, when an `eth_getLogs` in it draws one. */
  function randomRefusal(calls: Call[]): { code: number; message: string; name: string } | null {
    if (!calls.some((c) => c.method === 'eth_getLogs')) return null;
    if (random() < (faults.tooManyResults ?? 0))
      return { code: -32005, message: 'query returned more than 10000 results', name: 'tooManyResults' };
    if (random() < (faults.rangeTooLarge ?? 0))
      return { code: -32000, message: 'block range is too large', name: 'rangeTooLarge' };
    return null;
  }

  /** The fixed provider limits: span checked before the call, result count after. */
  function spanRefusal(call: Call): { code: number; message: string } | null {
    if (call.method !== 'eth_getLogs' || limits.maxBlockRange === undefined) return null;
    const filter = (Array.isArray(call.params) ? call.params[0] : undefined) as
      | { fromBlock?: unknown; toBlock?: unknown }
      | undefined;
    const from = quantity(filter?.fromBlock);
    const to = quantity(filter?.toBlock);
    if (from === undefined || to === undefined || to - from + 1 <= limits.maxBlockRange) return null;
    count('limit:maxBlockRange');
    return { code: -32000, message: `block range is too large (maximum is ${limits.maxBlockRange} blocks)` };
  }

  /**
   * Rewrites one call for the lagging view (before it is sent) and returns how to fix its answer
   * (after): what a node `lagBlocks` behind would have said.
   */
  function lagCall(call: Call, laggingHead: number): { call: Call; fix: (answer: Answer) => Answer } {
    const keep = { call, fix: (a: Answer) => a };
    const params = Array.isArray(call.params) ? call.params : [];
    switch (call.method) {
      case 'eth_blockNumber':
        return { call, fix: (a) => ({ ...a, result: hex(laggingHead) }) };
      case 'eth_getBlockByNumber': {
        const n = params[0] === 'latest' ? laggingHead : quantity(params[0]);
        if (n === undefined) return keep;
        return {
          call: { ...call, params: [hex(Math.min(n, laggingHead)), ...params.slice(1)] },
          fix: (a) => (n > laggingHead ? { ...a, result: null } : a),
        };
      }
      case 'eth_getLogs': {
        // Like reth and anvil: a range past the head is answered up to the head, silently.
        const filter = params[0] as { toBlock?: unknown } | undefined;
        const to = filter?.toBlock === 'latest' ? laggingHead : quantity(filter?.toBlock);
        if (filter === undefined || to === undefined || to <= laggingHead) return keep;
        return {
          call: { ...call, params: [{ ...filter, toBlock: hex(laggingHead) }, ...params.slice(1)] },
          fix: (a) => a,
        };
      }
      case 'eth_call': {
        const tag = params[1];
        const n = tag === 'latest' || tag === undefined ? laggingHead : quantity(tag);
        if (n === undefined) return keep;
        if (n > laggingHead) {
          return {
            call: { ...call, method: 'eth_chainId', params: [] },
            fix: (a) => ({ jsonrpc: '2.0', id: a.id, error: { code: -32000, message: 'header not found' } }),
          };
        }
        return { call: { ...call, params: [params[0], hex(n), ...params.slice(2)] }, fix: (a) => a };
      }
      default:
        return keep;
    }
  }

  async function answer(body: unknown): Promise<unknown> {
    const single = !Array.isArray(body);
    const calls = (single ? [body] : body) as Call[];
    const refusal = randomRefusal(calls);
    if (refusal !== null) {
      count(refusal.name);
      const error = { code: refusal.code, message: refusal.message };
      const answers = calls.map((c) => ({ jsonrpc: '2.0', id: c.id ?? null, error }));
      return single ? answers[0] : answers;
    }
    const lagging = lag !== null && random() < (lag.share ?? 0.5);
    let laggingHead = 0;
    if (lagging) {
      laggingHead = Math.max(0, (await upstreamHead()) - lag!.blocks);
      stats.lagged++;
    }
    // Calls refused by a limit are answered here; the others go upstream in one request.
    const out = new Array<unknown>(calls.length);
    const sent: { index: number; call: Call; fix: (a: Answer) => Answer }[] = [];
    calls.forEach((call, index) => {
      const refused = spanRefusal(call);
      if (refused !== null) {
        out[index] = { jsonrpc: '2.0', id: call.id ?? null, error: refused };
        return;
      }
      if (!single && random() < (faults.batchItemRateLimit ?? 0)) {
        count('batchItemRateLimit');
        out[index] = {
          jsonrpc: '2.0',
          id: call.id ?? null,
          error: { code: -32005, message: 'rate limit exceeded' },
        };
        return;
      }
      const lagged = lagging ? lagCall(call, laggingHead) : { call, fix: (a: Answer) => a };
      sent.push({ index, ...lagged });
    });
    if (sent.length > 0) {
      const replies = (await upstream(sent.map((s) => s.call))) as Answer[];
      const byId = new Map(replies.map((r) => [r.id, r]));
      for (const s of sent) {
        let reply = byId.get(s.call.id) ?? {
          jsonrpc: '2.0' as const,
          id: s.call.id,
          error: { code: -32603, message: 'internal error' },
        };
        reply = s.fix(reply);
        if (
          limits.maxResults !== undefined &&
          s.call.method === 'eth_getLogs' &&
          Array.isArray(reply.result) &&
          reply.result.length > limits.maxResults
        ) {
          count('limit:maxResults');
          reply = {
            jsonrpc: '2.0',
            id: reply.id,
            error: { code: -32005, message: `query returned more than ${limits.maxResults} results` },
          };
        }
        out[s.index] = reply;
      }
    }
    return single ? out[0] : out;
  }

  function methodDelay(body: unknown): number {
    const delays = options.methodDelays;
    if (delays === undefined) return 0;
    const calls = (Array.isArray(body) ? body : [body]) as Call[];
    return Math.max(0, ...calls.map((c) => (typeof c.method === 'string' ? (delays[c.method] ?? 0) : 0)));
  }

  /** Picks at most one transport fault for this request, by the configured rates. */
  function transportFault(): string | null {
    const roll = random();
    let edge = 0;
    for (const name of ['http429', 'http503', 'drop', 'dropMidBody', 'slow', 'malformed'] as const) {
      edge += faults[name] ?? 0;
      if (roll < edge) return name;
    }
    return null;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, text: string): Promise<void> {
    stats.requests++;
    if (outage) {
      count('outage');
      res.writeHead(503, { 'content-type': 'text/plain' }).end('node is down');
      return;
    }
    const fault = transportFault();
    if (fault !== null) count(fault);
    switch (fault) {
      case 'http429':
        res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '0' }).end('Too Many Requests');
        return;
      case 'http503':
        res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
        return;
      case 'drop':
        req.socket.destroy();
        return;
      case 'malformed':
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"jsonrpc":"2.0","id":1,"result":[{"addr');
        return;
      default:
        break;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
      for (const call of (Array.isArray(body) ? body : [body]) as Call[]) {
        const method = typeof call?.method === 'string' ? call.method : '?';
        stats.methods[method] = (stats.methods[method] ?? 0) + 1;
      }
    } catch {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
      return;
    }
    if (fault === 'slow') await new Promise((resolve) => setTimeout(resolve, slowMs));
    const reply = JSON.stringify(await answer(body));
    const held = methodDelay(body);
    if (held > 0) await new Promise((resolve) => setTimeout(resolve, held));
    if (res.destroyed) return; // the client gave up (its timeout)
    if (fault === 'dropMidBody') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(reply.length) });
      res.write(reply.slice(0, Math.floor(reply.length / 2)), () => req.socket.destroy());
      return;
    }
    stats.passed++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
  }

  const server = await startLocalHttpServer((req, res, body) => {
    handle(req, res, body).catch(() => {
      // The node itself failed (stopped at the end of a test): answer like a broken gateway.
      if (!res.headersSent && !res.destroyed) res.writeHead(502).end('bad gateway');
    });
  });

  return {
    url: server.url,
    stats,
    setFaults(next) {
      faults = { ...next };
    },
    setLag(next) {
      lag = next;
    },
    setOutage(on) {
      outage = on;
    },
    faultCount: () => Object.values(stats.faults).reduce((sum, n) => sum + n, 0),
    close: () => server.close().catch(() => {}),
  };
}
