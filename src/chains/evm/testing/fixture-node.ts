/**
 * A small JSON-RPC node that replays recorded chain data, for tests.
 *
 * It serves what an EVM indexer asks for (`eth_chainId`, `eth_blockNumber`, `eth_getLogs`,
 * `eth_getBlockByNumber`, `eth_getBlockByHash`, `eth_call`, `eth_getCode`) from plain arrays of recorded
 * RPC objects, single and batched, on 127.0.0.1 with a random free port. It can imitate a
 * provider's limits (range / result-count refusals, pruned state) and inject transport faults
 * (HTTP 429/5xx, malformed bodies, dropped connections, slow answers).
 *
 * Typical use, with the recorded sets of `fixture-sets.ts`:
 *
 * ```ts
 * const node = await startFixtureNode(loadEthereumEtlSet('stream_blocks_17173049_17173050'));
 * try { ... createRpcClient({ url: node.url, logger }) ... } finally { await node.close(); }
 * ```
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A log as a node returns it (hex quantities), as in a recorded `eth_getLogs` answer. */
export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
  [field: string]: unknown;
}

/** A block as a node returns it from `eth_getBlockByNumber(n, true)` or `(n, false)`. */
export interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  transactions?: unknown[];
  [field: string]: unknown;
}

/** A recorded `eth_call`: the answer to `{ to, data }` at any block. */
export interface FixtureCall {
  to: string;
  data: string;
  /** Hex result. */
  result?: string;
  /** Or a JSON-RPC error to answer instead. */
  error?: { code: number; message: string; data?: unknown };
}

/** Provider-like limits. */
export interface FixtureLimits {
  /** `eth_getLogs` over more blocks answers "block range is too large (maximum is N blocks)". */
  maxBlockRange?: number;
  /** `eth_getLogs` with more matches answers -32005 "query returned more than N results". */
  maxResults?: number;
  /** `eth_call` at a block number below this answers "missing trie node" (a pruned node). */
  oldestStateBlock?: number;
}

/** A fault applied to one whole HTTP request, instead of the normal answer. */
export type FixtureFault =
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

export interface FixtureNodeOptions {
  logs?: readonly RawLog[];
  blocks?: readonly RawBlock[];
  calls?: readonly FixtureCall[];
  /** Default 1. */
  chainId?: number;
  /** `eth_blockNumber`; default the highest block among `blocks` and `logs`. Blocks and logs above it are hidden. */
  head?: number;
  limits?: FixtureLimits;
  /** Adds `blockTimestamp` to logs whose block is known, as newer geth/reth/anvil do. Default false. */
  logTimestamps?: boolean;
  /** Sees every HTTP request (headers and parsed body) before it is answered. */
  onRequest?: (request: { headers: IncomingHttpHeaders; body: unknown }) => void;
}

export interface FixtureNode {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** JSON-RPC method → calls answered (a batch counts each call; faulted requests are not counted). */
  calls: Map<string, number>;
  /** Queues faults; each one replaces the answer to the next HTTP request, in order. */
  injectFaults(...faults: FixtureFault[]): void;
  /** Moves the node's head (blocks and logs above it become invisible). */
  setHead(head: number): void;
  close(): Promise<void>;
}

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

class RpcFailure extends Error {
  readonly error: RpcError;
  constructor(error: RpcError) {
    super(error.message);
    this.error = error;
  }
}

const hexToNumber = (hex: string): number => Number.parseInt(hex, 16);
const toHex = (n: number): string => `0x${n.toString(16)}`;

/** Starts the node; close it with `close()`. */
export async function startFixtureNode(options: FixtureNodeOptions = {}): Promise<FixtureNode> {
  const logs = [...(options.logs ?? [])].sort(
    (a, b) =>
      hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) ||
      hexToNumber(a.logIndex) - hexToNumber(b.logIndex),
  );
  const blocksByNumber = new Map<number, RawBlock>();
  const blocksByHash = new Map<string, RawBlock>();
  for (const block of options.blocks ?? []) {
    blocksByNumber.set(hexToNumber(block.number), block);
    blocksByHash.set(block.hash.toLowerCase(), block);
  }
  const callAnswers = new Map<string, FixtureCall>();
  for (const call of options.calls ?? []) callAnswers.set(callKey(call.to, call.data), call);
  /** Addresses with recorded calls: `eth_getCode` says they have code (at any block). */
  const contracts = new Set((options.calls ?? []).map((call) => call.to.toLowerCase()));
  const limits = options.limits ?? {};
  const chainId = options.chainId ?? 1;
  let head =
    options.head ?? Math.max(0, ...blocksByNumber.keys(), ...logs.map((log) => hexToNumber(log.blockNumber)));
  const faults: FixtureFault[] = [];
  const counts = new Map<string, number>();

  function blockTag(tag: unknown): number {
    if (tag === undefined || tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized') {
      return head;
    }
    if (tag === 'earliest') return 0;
    if (typeof tag === 'string' && /^0x[0-9a-fA-F]+$/.test(tag)) return hexToNumber(tag);
    throw new RpcFailure({ code: -32602, message: `invalid block tag ${JSON.stringify(tag)}` });
  }

  function blockResult(block: RawBlock | undefined, full: boolean): RawBlock | null {
    if (block === undefined || hexToNumber(block.number) > head) return null;
    if (full || block.transactions === undefined) return block;
    const transactions = block.transactions.map((tx) =>
      typeof tx === 'object' && tx !== null && 'hash' in tx ? (tx as { hash: unknown }).hash : tx,
    );
    return { ...block, transactions };
  }

  function getLogs(filter: unknown): RawLog[] {
    if (typeof filter !== 'object' || filter === null) {
      throw new RpcFailure({ code: -32602, message: 'invalid filter' });
    }
    const f = filter as {
      fromBlock?: unknown;
      toBlock?: unknown;
      address?: unknown;
      topics?: unknown;
      blockHash?: unknown;
    };
    let from: number;
    let to: number;
    if (typeof f.blockHash === 'string') {
      const block = blocksByHash.get(f.blockHash.toLowerCase());
      if (block === undefined) throw new RpcFailure({ code: -32000, message: 'unknown block' });
      from = to = hexToNumber(block.number);
    } else {
      from = blockTag(f.fromBlock);
      to = Math.min(blockTag(f.toBlock), head);
    }
    if (limits.maxBlockRange !== undefined && to - from + 1 > limits.maxBlockRange) {
      throw new RpcFailure({
        code: -32000,
        message: `block range is too large (maximum is ${limits.maxBlockRange} blocks)`,
      });
    }
    const addresses = toList(f.address)?.map((a) => a.toLowerCase());
    const topics = Array.isArray(f.topics) ? f.topics : [];
    const matches = logs.filter((log) => {
      const n = hexToNumber(log.blockNumber);
      if (n < from || n > to) return false;
      if (addresses !== undefined && !addresses.includes(log.address.toLowerCase())) return false;
      return topics.every((wanted, i) => {
        const options = toList(wanted)?.map((t) => t.toLowerCase());
        return options === undefined || options.includes(log.topics[i]?.toLowerCase() ?? '');
      });
    });
    if (limits.maxResults !== undefined && matches.length > limits.maxResults) {
      throw new RpcFailure({
        code: -32005,
        message: `query returned more than ${limits.maxResults} results`,
      });
    }
    if (!options.logTimestamps) return matches;
    return matches.map((log) => {
      const block = blocksByNumber.get(hexToNumber(log.blockNumber));
      return block === undefined ? log : { ...log, blockTimestamp: block.timestamp };
    });
  }

  /** Throws what a node without the state at `tag` answers, as geth words it. */
  function checkState(tag: unknown): void {
    const at = blockTag(tag);
    if (at > head) throw new RpcFailure({ code: -32000, message: 'header not found' });
    if (limits.oldestStateBlock !== undefined && at < limits.oldestStateBlock) {
      throw new RpcFailure({
        code: -32000,
        message: `missing trie node ${'0'.repeat(64)} (path ) state is not available`,
      });
    }
  }

  function ethCall(params: unknown[]): string {
    const [tx, tag] = params as [{ to?: unknown; data?: unknown; input?: unknown } | undefined, unknown];
    const to = typeof tx?.to === 'string' ? tx.to : '';
    const data = typeof tx?.data === 'string' ? tx.data : typeof tx?.input === 'string' ? tx.input : '0x';
    checkState(tag);
    const recorded = callAnswers.get(callKey(to, data));
    if (recorded?.error !== undefined) throw new RpcFailure(recorded.error);
    if (recorded?.result !== undefined) return recorded.result;
    throw new RpcFailure({ code: -32000, message: 'execution reverted' });
  }

  function dispatch(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'eth_chainId':
        return toHex(chainId);
      case 'net_version':
        return String(chainId);
      case 'eth_blockNumber':
        return toHex(head);
      case 'eth_getLogs':
        return getLogs(params[0]);
      case 'eth_getBlockByNumber':
        return blockResult(blocksByNumber.get(blockTag(params[0])), params[1] === true);
      case 'eth_getBlockByHash':
        return blockResult(
          typeof params[0] === 'string' ? blocksByHash.get(params[0].toLowerCase()) : undefined,
          params[1] === true,
        );
      case 'eth_call':
        return ethCall(params);
      case 'eth_getCode': {
        checkState(params[1]);
        // A stand-in runtime (INVALID): what matters is that there is code; calls are recorded.
        return typeof params[0] === 'string' && contracts.has(params[0].toLowerCase()) ? '0xfe' : '0x';
      }
      default:
        throw new RpcFailure({
          code: -32601,
          message: `the method ${method} does not exist/is not available`,
        });
    }
  }

  function answer(call: unknown, fault: Extract<FixtureFault, { type: 'rpc-error' }> | undefined): unknown {
    if (typeof call !== 'object' || call === null || Array.isArray(call)) {
      return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } };
    }
    const { id = null, method, params = [] } = call as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof method !== 'string' || !Array.isArray(params)) {
      return { jsonrpc: '2.0', id, error: { code: -32600, message: 'invalid request' } };
    }
    if (fault !== undefined)
      return { jsonrpc: '2.0', id, error: { code: fault.code, message: fault.message } };
    counts.set(method, (counts.get(method) ?? 0) + 1);
    try {
      return { jsonrpc: '2.0', id, result: dispatch(method, params) };
    } catch (error) {
      if (error instanceof RpcFailure) return { jsonrpc: '2.0', id, error: error.error };
      return { jsonrpc: '2.0', id, error: { code: -32603, message: 'internal error' } };
    }
  }

  const server = createServer((req, res) => {
    res.on('error', () => {}); // a client that gave up must not crash the test process
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString('utf8');
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
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","result":[{"addr');
          return;
        }
        if (fault?.type === 'body') {
          res.writeHead(fault.status ?? 200, { 'content-type': 'application/json' }).end(fault.body);
          return;
        }
        if (fault?.type === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
        const rpcFault = fault?.type === 'rpc-error' ? fault : undefined;
        let reply: unknown;
        if (body === undefined)
          reply = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } };
        else if (Array.isArray(body)) {
          reply =
            body.length === 0
              ? { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } }
              : body.map((call) => answer(call, rpcFault));
        } else reply = answer(body, rpcFault);
        if (fault?.type === 'rewrite') reply = fault.rewrite(reply);
        if (res.destroyed) return; // the client gave up (timeout)
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      })();
    });
  });
  // The client may abort mid-answer; that must not crash the test process.
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/`,
    calls: counts,
    injectFaults: (...more) => {
      faults.push(...more);
    },
    setHead: (n) => {
      head = n;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function callKey(to: string, data: string): string {
  return `${to.toLowerCase()}|${data.toLowerCase()}`;
}

function toList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return undefined;
}
