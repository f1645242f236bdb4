/**
 * A fake NEO 2.x node for tests: a small JSON-RPC server on 127.0.0.1 (random free port) that
 * replays recorded answers, single and batched, the way neo-cli with the ApplicationLogs
 * plugin answers: `getblockcount`, `getblock` (verbose, by height or hash),
 * `getapplicationlog`, `getrawtransaction` (verbose; every transaction of a served block
 * too), `getcontractstate`, `getassetstate`, `invokefunction`.
 *
 * Unknown blocks, transactions, contracts and assets answer neo-cli's -100 "Unknown …"
 * errors; an unrecorded invocation answers a FAULTed run (what a node does when the contract
 * does not exist). Faults are injected per HTTP request by the shared fake server
 * (`jsonrpc/testing/fake-rpc-server.ts`), as in the EVM fixture node.
 *
 * ```ts
 * const node = await startFakeNeoNode(loadNeoscanRecordings());
 * try { ... createRpcClient({ url: node.url, logger }) ... } finally { await node.close(); }
 * ```
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  type FakeRpcServer,
  type RpcDialect,
  RpcFailure,
  startFakeRpcServer,
} from '../../jsonrpc/testing/fake-rpc-server.js';
import type { RecordedApplicationLog, RecordedInvocation } from './recordings.js';

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

export interface FakeNeoNode extends FakeRpcServer {
  /** Moves the head: blocks above it (and their transactions and logs) become unknown. */
  setHead(head: number): void;
}

/** How neo-cli words the protocol's errors; a truncated `getblock` answer. */
const NEO_CLI_DIALECT: RpcDialect = {
  parseError: 'Parse error',
  invalidRequest: 'Invalid Request',
  emptyBatch: 'Invalid Request',
  internalError: 'Internal error',
  truncatedAnswer: '{"jsonrpc":"2.0","result":{"tx":[{"txid',
};

/** A JSON-RPC error answer. */
const failure = (code: number, message: string) => new RpcFailure({ code, message });

/** neo-cli's "Unknown …" answers. */
const unknown = (what: string) => failure(-100, `Unknown ${what}`);

/** `0x` + lower-case hex for any hash a client sends (with or without `0x`). */
function key(value: unknown): string {
  if (typeof value !== 'string') throw failure(-32602, 'Invalid params');
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

  const visible = (block: Record<string, unknown> | undefined) =>
    block !== undefined && (block.index as number) <= head ? block : undefined;

  function getBlock(params: unknown[]): unknown {
    const [id, verbose] = params;
    const block = visible(typeof id === 'number' ? blocksByIndex.get(id) : blocksByHash.get(key(id)));
    if (block === undefined) throw unknown('block');
    if (verbose !== 1 && verbose !== true) {
      throw failure(-32602, 'Invalid params: this fake node serves verbose blocks only');
    }
    return { ...block, confirmations: head - (block.index as number) + 1 };
  }

  function getRawTransaction(params: unknown[]): unknown {
    const [id, verbose] = params;
    if (verbose !== 1 && verbose !== true) {
      throw failure(-32602, 'Invalid params: this fake node serves verbose transactions only');
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
    if (typeof method !== 'string' || !Array.isArray(args)) throw failure(-32602, 'Invalid params');
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
        throw failure(-32601, 'Method not found');
    }
  }

  const server = await startFakeRpcServer({
    dispatch,
    dialect: NEO_CLI_DIALECT,
    onRequest: options.onRequest,
  });
  return {
    ...server,
    setHead: (n) => {
      head = n;
    },
  };
}

function invocationKey(contract: string, method: string, params: unknown[]): string {
  return `${contract}|${method}|${JSON.stringify(params)}`;
}
