import { createRpcClient } from '../chains/evm/rpc-client.js';
import { createEvmSource } from '../chains/evm/source.js';
import type { ChainConfig } from '../config/types.js';
import { errorMessage, UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { Store } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';

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
    if (chain.name === 'neo') {
      throw new UserError('indexing the neo chain is not available yet');
    }
    const rpc = createRpcClient({ url: chain.rpcUrl, logger: options.logger, signal: options.signal });
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
    if (chain.name === 'neo') continue;
    const rpc = createRpcClient({ url: chain.rpcUrl, logger, timeoutMs: 5_000, maxRetries: 1 });
    try {
      await rpc.request<string>('eth_blockNumber', []);
    } catch (error) {
      throw new UserError(`the ${chain.name} node does not answer JSON-RPC: ${errorMessage(error)}`);
    }
  }
}
