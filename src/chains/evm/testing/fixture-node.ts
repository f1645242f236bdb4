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
import type { IncomingHttpHeaders } from 'node:http';
import {
  type FakeRpcServer,
  type RpcDialect,
  RpcFailure,
  type RpcFault,
  startFakeRpcServer,
} from '../../jsonrpc/testing/fake-rpc-server.js';

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

/** A fault applied to one whole HTTP request, instead of the normal answer (see `RpcFault`). */
export type FixtureFault = RpcFault;

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

export interface FixtureNode extends FakeRpcServer {
  /** Moves the node's head (blocks and logs above it become invisible). */
  setHead(head: number): void;
}

/** How geth words the protocol's errors; a truncated `eth_getLogs` answer. */
const GETH_DIALECT: RpcDialect = {
  parseError: 'parse error',
  invalidRequest: 'invalid request',
  emptyBatch: 'empty batch',
  internalError: 'internal error',
  truncatedAnswer: '{"jsonrpc":"2.0","result":[{"addr',
};

const hexToNumber = (hex: string): number => Number.parseInt(hex, 16);
const toHex = (n: number): string => `0x${n.toString(16)}`;

/** Starts the node; close it with `close()`. */
export async function startFixtureNode(options: FixtureNodeOptions = {}): Promise<FixtureNode> {
  const logs = [...(options.logs ?? [])].sort(
    (a, b) =>
      hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) ||
      hexToNumber(a.logIndex) - hexToNumber(b.logIndex),
  );
  // Logs by address, in chain order: an import asks for one token's logs at a time, and a scan of
  // every log per question made a 20,000-token benchmark wait on this node, not on the import.
  const logsByAddress = new Map<string, RawLog[]>();
  for (const log of logs) {
    const address = log.address.toLowerCase();
    const list = logsByAddress.get(address);
    if (list === undefined) logsByAddress.set(address, [log]);
    else list.push(log);
  }
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
    const candidates =
      addresses === undefined
        ? logs
        : addresses.length === 1
          ? (logsByAddress.get(addresses[0]!) ?? [])
          : logs;
    const matches = candidates.filter((log) => {
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

  const server = await startFakeRpcServer({ dispatch, dialect: GETH_DIALECT, onRequest: options.onRequest });
  return {
    ...server,
    setHead: (n) => {
      head = n;
    },
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
