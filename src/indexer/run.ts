import { createRpcClient } from '../chains/jsonrpc/rpc-client.js';
import type { ChainConfig } from '../config/types.js';
import type { Logger } from '../internal/logger.js';
import type { RpcMetrics } from '../internal/rpc-metrics.js';
import type { Store, StoreWriter, WriterRole } from '../store/types.js';
import { runAsElectedWriter } from './elected.js';
import { indexerFamilyOf } from './families.js';

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
  const indexer = indexerFamilyOf(chain).createIndexer({
    chain,
    rpc,
    store: writer,
    logger: options.logger,
    signal: options.signal,
    ...(options.tty === undefined ? {} : { tty: options.tty }),
  });
  reportFault = indexer.reportRetriedFault;
  await indexer.run();
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
    await indexerFamilyOf(chain).checkNode(chain, rpc);
  }
}
