/**
 * A fake NEO 2.x node for tests: a small JSON-RPC server on 127.0.0.1 (random free port) that
 * replays recorded answers, single and batched, the way neo-cli with the ApplicationLogs
 * plugin answers: `getblockcount`, `getblock` (verbose, by height or hash),
 * `getapplicationlog`, `getrawtransaction` (verbose; every transaction of a served block
 * too), `getcontractstate`, `getassetstate`, `invokefunction`.
 *
 * Unknown blocks, transactions, contracts and assets answer neo-cli's -100 "Unknown …"
 * errors; an unrecorded invocation answers a FAULTed run (what a node does when the contract
 * does not exist). Faults are injected per HTTP request exactly as in the EVM fixture node.
 *
 * ```ts
 * const node = await startFakeNeoNode(loadNeoscanRecordings());
 * try { ... createRpcClient({ url: node.url, logger }) ... } finally { await node.close(); }
 * ```
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FixtureFault } from '../../evm/testing/fixture-node.js';
import type { RecordedApplicationLog, RecordedInvocation } from './recordings.js';

export type { FixtureFault } from '../../evm/testing/fixture-node.js';

export interface FakeNeoNodeOptions {
  /** Verbose `getblock` results (objects with `index`, `hash`, `tx`). */
  blocks?: readonly Record<string, unknown>[];
  applicationLogs?: readonly RecordedApplicationLog[];
  /** Verbose `getrawtransaction` results of transactions outside the served blocks. */
  transactions?: readonly Record<string, unknown>[];
  /** `getcontractstate` results, answered by their `hash`. */
  contracts?: readonly Record<string, unknown>[];
  /** `getassetstate` results, answered by their `id`. */
  assets?: readonly Record<string, unknown>[];
  invocations?: readonly RecordedInvocation[];
  /** Highest block served; `getblockcount` is `head + 1`. Default: the highest block given. */
  head?: number;
  /** Sees every HTTP request (headers and parsed body) before it is answered. */
  onRequest?: (request: { headers: IncomingHttpHeaders; body: unknown }) => void;
}

export interface FakeNeoNode {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** JSON-RPC method → calls answered (a batch counts each call; faulted requests are not counted). */
  calls: Map<string, number>;
  /** Queues faults; each one replaces the answer to the next HTTP request, in order. */
  injectFaults(...faults: FixtureFault[]): void;
  /** Moves the head: blocks above it (and their transactions and logs) become unknown. */
  setHead(head: number): void;
  close(): Promise<void>;
}

interface RpcErrorObject {
  code: number;
  message: string;
}

class RpcFailure extends Error {
  readonly error: RpcErrorObject;
  constructor(code: number, message: string) {
    super(message);
    this.error = { code, message };
  }
}

/** neo-cli's "Unknown …" answers. */
const unknown = (what: string) => new RpcFailure(-100, `Unknown ${what}`);

/** `0x` + lower-case hex for any hash a client sends (with or without `0x`). */
function key(value: unknown): string {
  if (typeof value !== 'string') throw new RpcFailure(-32602, 'Invalid params');
  const lower = value.toLowerCase();
  return lower.startsWith('0x') ? lower : `0x${lower}`;
}

/** Starts the node; close it with `close()`. */
export async function startFakeNeoNode(options: FakeNeoNodeOptions = {}): Promise<FakeNeoNode> {
  const blocksByIndex = new Map<number, Record<string, unknown>>();
  const blocksByHash = new Map<string, Record<string, unknown>>();
  /** txid → the block that holds it and the transaction. */
  const blockTxs = new Map<string, { block: Record<string, unknown>; tx: Record<string, unknown> }>();
  for (const block of options.blocks ?? []) {
    const index = block.index as number;
    blocksByIndex.set(index, block);
    blocksByHash.set(key(block.hash), block);
    for (const tx of (block.tx as Record<string, unknown>[] | undefined) ?? [])
      blockTxs.set(key(tx.txid), { block, tx });
  }
  const looseTxs = new Map((options.transactions ?? []).map((tx) => [key(tx.txid), tx]));
  const logs = new Map((options.applicationLogs ?? []).map((log) => [log.txid, log.result]));
  const contracts = new Map((options.contracts ?? []).map((c) => [key(c.hash), c]));
  const assets = new Map((options.assets ?? []).map((a) => [key(a.id), a]));
  const invocations = new Map(
    (options.invocations ?? []).map((i) => [invocationKey(i.contract, i.method, i.params), i.result]),
  );
  let head = options.head ?? Math.max(0, ...blocksByIndex.keys());
  const faults: FixtureFault[] = [];
  const counts = new Map<string, number>();

  const visible = (block: Record<string, unknown> | undefined) =>
    block !== undefined && (block.index as number) <= head ? block : undefined;

  function getBlock(params: unknown[]): unknown {
    const [id, verbose] = params;
    const block = visible(typeof id === 'number' ? blocksByIndex.get(id) : blocksByHash.get(key(id)));
    if (block === undefined) throw unknown('block');
    if (verbose !== 1 && verbose !== true) {
      throw new RpcFailure(-32602, 'Invalid params: this fake node serves verbose blocks only');
    }
    return { ...block, confirmations: head - (block.index as number) + 1 };
  }

  function getRawTransaction(params: unknown[]): unknown {
    const [id, verbose] = params;
    if (verbose !== 1 && verbose !== true) {
      throw new RpcFailure(-32602, 'Invalid params: this fake node serves verbose transactions only');
    }
    const txid = key(id);
    const inBlock = blockTxs.get(txid);
    if (inBlock !== undefined && visible(inBlock.block) !== undefined) {
      const index = inBlock.block.index as number;
      return {
        ...inBlock.tx,
        blockhash: inBlock.block.hash,
        confirmations: head - index + 1,
        blocktime: inBlock.block.time,
      };
    }
    const loose = looseTxs.get(txid);
    if (loose !== undefined) return loose;
    throw unknown('transaction');
  }

  function getApplicationLog(params: unknown[]): unknown {
    const txid = key(params[0]);
    const inBlock = blockTxs.get(txid);
    if (inBlock !== undefined && visible(inBlock.block) === undefined) throw unknown('transaction');
    const log = logs.get(txid);
    if (log === undefined) throw unknown('transaction');
    return log;
  }

  function invokeFunction(params: unknown[]): unknown {
    const [contract, method, args = []] = params;
    if (typeof method !== 'string' || !Array.isArray(args)) throw new RpcFailure(-32602, 'Invalid params');
    const recorded = invocations.get(invocationKey(key(contract), method, args));
    // A node runs the call against the contract; with no such contract the APPCALL faults.
    return recorded ?? { script: '', state: 'FAULT, BREAK', gas_consumed: '0', stack: [] };
  }

  function dispatch(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'getblockcount':
        return head + 1;
      case 'getblock':
        return getBlock(params);
      case 'getrawtransaction':
        return getRawTransaction(params);
      case 'getapplicationlog':
        return getApplicationLog(params);
      case 'getcontractstate': {
        const state = contracts.get(key(params[0]));
        if (state === undefined) throw unknown('contract');
        return state;
      }
      case 'getassetstate': {
        const state = assets.get(key(params[0]));
        if (state === undefined) throw unknown('asset');
        return state;
      }
      case 'invokefunction':
        return invokeFunction(params);
      default:
        throw new RpcFailure(-32601, 'Method not found');
    }
  }

  function answer(call: unknown, fault: Extract<FixtureFault, { type: 'rpc-error' }> | undefined): unknown {
    if (typeof call !== 'object' || call === null || Array.isArray(call)) {
      return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } };
    }
    const { id = null, method, params = [] } = call as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof method !== 'string' || !Array.isArray(params)) {
      return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid Request' } };
    }
    if (fault !== undefined)
      return { jsonrpc: '2.0', id, error: { code: fault.code, message: fault.message } };
    counts.set(method, (counts.get(method) ?? 0) + 1);
    try {
      return { jsonrpc: '2.0', id, result: dispatch(method, params) };
    } catch (error) {
      if (error instanceof RpcFailure) return { jsonrpc: '2.0', id, error: error.error };
      return { jsonrpc: '2.0', id, error: { code: -32603, message: 'Internal error' } };
    }
  }

  const server = createServer((req, res) => {
    res.on('error', () => {}); // a client that gave up must not crash the test process
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
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
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end('{"jsonrpc":"2.0","result":{"tx":[{"txid');
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
          reply = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
        else if (Array.isArray(body)) {
          reply =
            body.length === 0
              ? { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } }
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

function invocationKey(contract: string, method: string, params: unknown[]): string {
  return `${contract}|${method}|${JSON.stringify(params)}`;
}
