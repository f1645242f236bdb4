/**
 * The HTTP and JSON-RPC half of the fake nodes tests run against (`evm/testing/fixture-node.ts`,
 * `neo/testing/fake-neo-node.ts`): a server on 127.0.0.1 (random free port) that parses single
 * and batched JSON-RPC requests, counts the calls, and answers each through a family's own
 * `dispatch`, or with a fault injected for the next HTTP request (HTTP 429/5xx, malformed bodies,
 * dropped connections, slow answers, JSON-RPC errors, rewritten answers).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { sleep } from '../../../internal/async.js';
import { startLocalHttpServer } from '../../../internal/testing/net.js';

/** A fault applied to one whole HTTP request, instead of the normal answer. */
export type RpcFault =
  /** Answer this HTTP status with a plain-text body (optionally with `Retry-After` seconds). */
  | { type: 'status'; status: number; body?: string; retryAfter?: number }
  /** Answer HTTP 200 with a body that is not JSON. */
  | { type: 'malformed' }
  /** Close the connection without an answer. */
  | { type: 'drop' }
  /** Wait, then answer normally. */
  | { type: 'delay'; ms: number }
  /** Answer every call of the request with this JSON-RPC error. */
  | { type: 'rpc-error'; code: number; message: string }
  /** Answer exactly this body (HTTP 200 unless `status` is given). */
  | { type: 'body'; body: string; status?: number }
  /** Compute the normal JSON answer (single or batch), then answer what `rewrite` makes of it. */
  | { type: 'rewrite'; rewrite: (reply: unknown) => unknown };

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Thrown by a `dispatch` to answer the call with this JSON-RPC error. */
export class RpcFailure extends Error {
  readonly error: RpcErrorObject;
  constructor(error: RpcErrorObject) {
    super(error.message);
    this.error = error;
  }
}

/** How a node words the protocol's own errors, and what its answers look like cut short. */
export interface RpcDialect {
  /** -32700, for a body that is not JSON. */
  parseError: string;
  /** -32600, for a call that is not a JSON-RPC request. */
  invalidRequest: string;
  /** -32600, for an empty batch. */
  emptyBatch: string;
  /** -32603, for a `dispatch` that threw something other than an `RpcFailure`. */
  internalError: string;
  /** The body of the `malformed` fault: the start of one of this node's answers, cut off. */
  truncatedAnswer: string;
}

export interface FakeRpcServerOptions {
  /** Answers one call: returns its result or throws an `RpcFailure`. */
  dispatch: (method: string, params: unknown[]) => unknown;
  dialect: RpcDialect;
  /** Sees every HTTP request (headers and parsed body) before it is answered. */
  onRequest?: (request: { headers: IncomingHttpHeaders; body: unknown }) => void;
}

export interface FakeRpcServer {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** JSON-RPC method → calls answered (a batch counts each call; faulted requests are not counted). */
  calls: Map<string, number>;
  /** Queues faults; each one replaces the answer to the next HTTP request, in order. */
  injectFaults(...faults: RpcFault[]): void;
  close(): Promise<void>;
}

/** Starts the server; close it with `close()`. */
export async function startFakeRpcServer(options: FakeRpcServerOptions): Promise<FakeRpcServer> {
  const { dispatch, dialect } = options;
  const faults: RpcFault[] = [];
  const counts = new Map<string, number>();

  function answer(call: unknown, fault: Extract<RpcFault, { type: 'rpc-error' }> | undefined): unknown {
    if (typeof call !== 'object' || call === null || Array.isArray(call)) {
      return { jsonrpc: '2.0', id: null, error: { code: -32600, message: dialect.invalidRequest } };
    }
    const { id = null, method, params = [] } = call as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof method !== 'string' || !Array.isArray(params)) {
      return { jsonrpc: '2.0', id, error: { code: -32600, message: dialect.invalidRequest } };
    }
    if (fault !== undefined)
      return { jsonrpc: '2.0', id, error: { code: fault.code, message: fault.message } };
    counts.set(method, (counts.get(method) ?? 0) + 1);
    try {
      return { jsonrpc: '2.0', id, result: dispatch(method, params) };
    } catch (error) {
      if (error instanceof RpcFailure) return { jsonrpc: '2.0', id, error: error.error };
      return { jsonrpc: '2.0', id, error: { code: -32603, message: dialect.internalError } };
    }
  }

  const server = await startLocalHttpServer((req, res, text) => {
    void (async () => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      options.onRequest?.({ headers: req.headers, body });
      const fault = faults.shift();
      if (fault?.type === 'drop') {
        req.socket.destroy();
        return;
      }
      if (fault?.type === 'status') {
        const headers: Record<string, string> = { 'content-type': 'text/plain' };
        if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
        res.writeHead(fault.status, headers).end(fault.body ?? `HTTP ${fault.status}`);
        return;
      }
      if (fault?.type === 'malformed') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(dialect.truncatedAnswer);
        return;
      }
      if (fault?.type === 'body') {
        res.writeHead(fault.status ?? 200, { 'content-type': 'application/json' }).end(fault.body);
        return;
      }
      if (fault?.type === 'delay') await sleep(fault.ms);
      const rpcFault = fault?.type === 'rpc-error' ? fault : undefined;
      let reply: unknown;
      if (body === undefined)
        reply = { jsonrpc: '2.0', id: null, error: { code: -32700, message: dialect.parseError } };
      else if (Array.isArray(body)) {
        reply =
          body.length === 0
            ? { jsonrpc: '2.0', id: null, error: { code: -32600, message: dialect.emptyBatch } }
            : body.map((call) => answer(call, rpcFault));
      } else reply = answer(body, rpcFault);
      if (fault?.type === 'rewrite') reply = fault.rewrite(reply);
      if (res.destroyed) return; // the client gave up (timeout)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    })();
  });

  return {
    url: server.url,
    calls: counts,
    injectFaults: (...more) => {
      faults.push(...more);
    },
    close: server.close,
  };
}
