import { createNewHeadsNotifier } from '../chains/evm/new-heads.js';
import { createEvmSource } from '../chains/evm/source.js';
import { RpcResponseError } from '../chains/jsonrpc/errors.js';
import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import { createNeoSource } from '../chains/neo/source.js';
import type { ChainConfig } from '../config/types.js';
import { errorMessage, UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { RpcMetrics } from '../internal/rpc-metrics.js';
import type { Store, StoreWriter, WriterRole } from '../store/types.js';
import { runAsElectedWriter } from './elected.js';
import { createEvmIndexer } from './evm-indexer.js';
import { createNeoIndexer } from './neo-indexer.js';

export interface RunIndexersOptions {
  chains: readonly ChainConfig[];
  store: Store;
  logger: Logger;
  signal: AbortSignal;
  tty?: boolean;
  /** Told when this process becomes a chain's elected writer or a standby (PostgreSQL; see elected.ts). */
  onRole?: (chain: string, role: WriterRole) => void;
  /** Counts the RPC clients' round trips, for `/metrics`. */
  rpcMetrics?: RpcMetrics;
}

/**
 * Runs one indexer per configured chain until `signal` aborts. A chain that stops on a fatal
 * error (its reason is in `/status`) does not stop the others; the promise settles when all have ended.
 * On a store shared by several processes (PostgreSQL), a chain's indexer runs only while this
 * process is the chain's elected writer, and stands by otherwise (elected.ts).
 */
export async function runIndexers(options: RunIndexersOptions): Promise<void> {
  const runs = options.chains.map((chain) =>
    runAsElectedWriter(
      {
        store: options.store,
        chain: chain.name,
        logger: options.logger,
        signal: options.signal,
        ...(options.onRole === undefined ? {} : { onRole: options.onRole }),
      },
      (writer, signal) => runChain(chain, writer, { ...options, signal }),
    ),
  );
  const outcomes = await Promise.allSettled(runs);
  const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed.length === outcomes.length && failed.length > 0) throw failed[0]!.reason;
}

/** One chain's indexer, writing through `writer` until `options.signal` aborts. */
async function runChain(chain: ChainConfig, writer: StoreWriter, options: RunIndexersOptions): Promise<void> {
  // A fault the client keeps retrying shows in /status at once, not only once retries run out.
  let reportFault: ((message: string) => void) | undefined;
  const rpc = createRpcClient({
    url: chain.rpcUrl,
    logger: options.logger,
    signal: options.signal,
    onPersistentFault: ({ method, reason }) => reportFault?.(`${method}: ${reason}`),
    ...(options.rpcMetrics === undefined ? {} : { observe: options.rpcMetrics.forChain(chain.name) }),
  });
  if (chain.name === 'neo') {
    const indexer = createNeoIndexer({
      chain,
      source: createNeoSource({ rpc, logger: options.logger }),
      store: writer,
      logger: options.logger,
      signal: options.signal,
      ...(options.tty === undefined ? {} : { tty: options.tty }),
    });
    await indexer.run();
    return;
  }
  const source = createEvmSource({ rpc, logger: options.logger });
  const heads =
    chain.wsUrl === undefined
      ? undefined
      : createNewHeadsNotifier({
          url: chain.wsUrl,
          logger: options.logger.child({ chain: chain.name }),
          signal: options.signal,
        });
  const indexer = createEvmIndexer({
    chain,
    source,
    store: writer,
    logger: options.logger,
    signal: options.signal,
    ...(options.tty === undefined ? {} : { tty: options.tty }),
    ...(heads === undefined ? {} : { heads }),
  });
  reportFault = (message) => indexer.reportRetriedFault(message);
  try {
    await indexer.run();
  } finally {
    // A chain stopped by a fatal error keeps no socket open (the others go on).
    heads?.close();
  }
}

/**
 * Checks that every chain's node answers, before anything starts, so that a wrong `--rpc`
 * is one clear line for the user instead of a retry loop.
 */
export async function checkNodes(chains: readonly ChainConfig[], logger: Logger): Promise<void> {
  for (const chain of chains) {
    // A few quick retries: a busy node (429, 503, a dropped connection) must not stop the start,
    // while a wrong URL still fails within a second or two. Quietly: the outcome is one line.
    const rpc = createRpcClient({
      url: chain.rpcUrl,
      logger: logger.child({}, { level: 'error' }),
      timeoutMs: 5_000,
      maxRetries: 4,
      retryBaseMs: 100,
    });
    if (chain.name === 'neo') {
      await checkNeoNode(rpc);
      continue;
    }
    try {
      await rpc.request<string>('eth_blockNumber', []);
    } catch (error) {
      throw new UserError(`the ${chain.name} node does not answer JSON-RPC: ${errorMessage(error)}`);
    }
  }
}

/** A NEO 2.x node must answer `getblockcount` and have the ApplicationLogs plugin (`getapplicationlog`). */
async function checkNeoNode(rpc: ReturnType<typeof createRpcClient>): Promise<void> {
  try {
    await rpc.request<number>('getblockcount', []);
  } catch (error) {
    throw new UserError(`the neo node does not answer JSON-RPC: ${errorMessage(error)}`);
  }
  try {
    // Any transaction id will do: a node with the plugin answers "Unknown transaction".
    await rpc.request('getapplicationlog', ['0'.repeat(64)]);
  } catch (error) {
    if (error instanceof RpcResponseError && error.code === -32601) {
      throw new UserError(
        "the neo node has no getapplicationlog method: NEO indexing needs neo-cli's ApplicationLogs plugin",
      );
    }
  }
}
