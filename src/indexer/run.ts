import { RpcResponseError } from '../chains/evm/errors.js';
import { createRpcClient } from '../chains/evm/rpc-client.js';
import { createEvmSource } from '../chains/evm/source.js';
import { createNeoSource } from '../chains/neo/source.js';
import type { ChainConfig } from '../config/types.js';
import { errorMessage, UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { Store } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';
import { createNeoIndexer } from './neo-indexer.js';

export interface RunIndexersOptions {
  chains: readonly ChainConfig[];
  store: Store;
  logger: Logger;
  signal: AbortSignal;
  tty?: boolean;
}

/**
 * Runs one indexer per configured chain until `signal` aborts. A chain that stops on a fatal
 * error (its reason is in `/status`) does not stop the others; the promise settles when all have ended.
 */
export async function runIndexers(options: RunIndexersOptions): Promise<void> {
  const runs = options.chains.map(async (chain) => {
    const rpc = createRpcClient({ url: chain.rpcUrl, logger: options.logger, signal: options.signal });
    if (chain.name === 'neo') {
      const indexer = createNeoIndexer({
        chain,
        source: createNeoSource({ rpc, logger: options.logger }),
        store: options.store,
        logger: options.logger,
        signal: options.signal,
        ...(options.tty === undefined ? {} : { tty: options.tty }),
      });
      await indexer.run();
      return;
    }
    const source = createEvmSource({ rpc, logger: options.logger });
    const indexer = createEvmIndexer({
      chain,
      source,
      store: options.store,
      logger: options.logger,
      signal: options.signal,
      ...(options.tty === undefined ? {} : { tty: options.tty }),
    });
    await indexer.run();
  });
  const outcomes = await Promise.allSettled(runs);
  const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed.length === outcomes.length && failed.length > 0) throw failed[0]!.reason;
}

/**
 * Checks that every chain's node answers, before anything starts, so that a wrong `--rpc`
 * is one clear line for the user instead of a retry loop.
 */
export async function checkNodes(chains: readonly ChainConfig[], logger: Logger): Promise<void> {
  for (const chain of chains) {
    const rpc = createRpcClient({ url: chain.rpcUrl, logger, timeoutMs: 5_000, maxRetries: 1 });
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
