import { redactUrls, TokenqueryError } from '../internal/errors.js';

/**
 * A failure of the local dev chain: anvil missing or not starting, a JSON-RPC error, a reverted or
 * lost transaction. The devchain keeps its own tiny JSON-RPC client on purpose: it serves the demo,
 * tests and benchmarks of the indexer, so it must not share (and hide bugs in) the indexer's client.
 */
export class DevchainError extends TokenqueryError {
  override name = 'DevchainError';
}

/** A JSON-RPC error object as the node returned it. */
export class RpcResponseError extends DevchainError {
  override name = 'RpcResponseError';
  readonly code: number;
  readonly data: unknown;

  constructor(method: string, error: { code: number; message: string; data?: unknown }) {
    super(`${method} failed: ${error.message}`, {
      details:
        error.data === undefined
          ? `code ${error.code}`
          : `code ${error.code}, data ${JSON.stringify(error.data)}`,
    });
    this.code = error.code;
    this.data = error.data;
  }
}

interface JsonRpcResponse {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

let nextId = 1;

async function post(url: string, body: unknown, what: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (cause) {
    throw new DevchainError(`${what}: cannot reach ${redactUrls(url)}`, { cause });
  }
  const text = await response.text();
  if (!response.ok) {
    throw new DevchainError(`${what}: HTTP ${response.status} from ${redactUrls(url)}`, {
      details: text.slice(0, 500),
    });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new DevchainError(`${what}: the node answered invalid JSON`, {
      cause,
      details: text.slice(0, 500),
    });
  }
}

/** Calls one JSON-RPC method and returns its `result`; a JSON-RPC error becomes an `RpcResponseError`. */
export async function rpc<T = unknown>(
  url: string,
  method: string,
  params: readonly unknown[] = [],
): Promise<T> {
  const id = nextId++;
  const body = (await post(url, { jsonrpc: '2.0', id, method, params }, method)) as JsonRpcResponse;
  if (body.error) throw new RpcResponseError(method, body.error);
  return body.result as T;
}

/**
 * Sends several calls in one JSON-RPC batch and returns their results in call order.
 * Any error in the batch fails the whole call.
 */
export async function rpcBatch<T = unknown>(
  url: string,
  calls: readonly { method: string; params: readonly unknown[] }[],
): Promise<T[]> {
  if (calls.length === 0) return [];
  const first = nextId;
  nextId += calls.length;
  const requests = calls.map((c, i) => ({
    jsonrpc: '2.0',
    id: first + i,
    method: c.method,
    params: c.params,
  }));
  const body = await post(url, requests, `batch of ${calls.length} ${calls[0]!.method}`);
  if (!Array.isArray(body)) throw new DevchainError('the node did not answer a JSON-RPC batch with an array');
  const byId = new Map<number, JsonRpcResponse>();
  for (const item of body as JsonRpcResponse[]) byId.set(item.id, item);
  return calls.map((c, i) => {
    const item = byId.get(first + i);
    if (!item) throw new DevchainError(`${c.method}: missing from the batch answer`);
    if (item.error) throw new RpcResponseError(c.method, item.error);
    return item.result as T;
  });
}

/** `0x`-prefixed hex quantity, as JSON-RPC expects. */
export function toQuantity(value: number | bigint): string {
  return `0x${value.toString(16)}`;
}

/** Parses a hex quantity (`0x1a`) as a safe integer. */
export function quantityToNumber(hex: string): number {
  const n = Number.parseInt(hex, 16);
  if (!Number.isSafeInteger(n)) throw new DevchainError(`not a safe integer quantity: ${hex}`);
  return n;
}
