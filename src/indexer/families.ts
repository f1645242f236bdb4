/**
 * What each family of chains brings to `runIndexers` and `checkNodes`: how its node is checked,
 * and how a chain's source and indexer are built. The static facts (which chains, reorgs,
 * websocket heads) are internal/chains.ts's; this is the code beside them.
 */

import { createNewHeadsNotifier } from '../chains/evm/new-heads.js';
import { createEvmSource } from '../chains/evm/source.js';
import { RpcResponseError } from '../chains/jsonrpc/errors.js';
import type { RpcClient } from '../chains/jsonrpc/rpc-client.js';
import { createNeoSource } from '../chains/neo/source.js';
import type { ChainConfig } from '../config/types.js';
import { type ChainFamilyName, familyOf } from '../internal/chains.js';
import { errorMessage, UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { StoreWriter } from '../store/types.js';
import { createEvmIndexer } from './evm-indexer.js';
import { createNeoIndexer } from './neo-indexer.js';

/** One chain's indexer as `runIndexers` drives it. */
export interface ChainIndexer {
  /** Indexes until the signal aborts; rejects only on a fatal error. Releases what it holds (sockets) when it ends. */
  run(): Promise<void>;
  /** A fault the RPC client is still retrying, for `/status` (absent: such faults show once retries run out). */
  readonly reportRetriedFault?: (message: string) => void;
}

export interface ChainIndexerContext {
  chain: ChainConfig;
  rpc: RpcClient;
  store: StoreWriter;
  logger: Logger;
  signal: AbortSignal;
  tty?: boolean;
}

export interface IndexerFamily {
  /** Throws a UserError naming what is wrong when the chain's node cannot be indexed. */
  checkNode(chain: ChainConfig, rpc: RpcClient): Promise<void>;
  createIndexer(context: ChainIndexerContext): ChainIndexer;
}

const evm: IndexerFamily = {
  async checkNode(chain, rpc) {
    try {
      await rpc.request<string>('eth_blockNumber', []);
    } catch (error) {
      throw new UserError(`the ${chain.name} node does not answer JSON-RPC: ${errorMessage(error)}`);
    }
  },
  createIndexer({ chain, rpc, store, logger, signal, tty }) {
    const source = createEvmSource({ rpc, logger });
    const heads =
      chain.wsUrl === undefined
        ? undefined
        : createNewHeadsNotifier({ url: chain.wsUrl, logger: logger.child({ chain: chain.name }), signal });
    const indexer = createEvmIndexer({
      chain,
      source,
      store,
      logger,
      signal,
      ...(tty === undefined ? {} : { tty }),
      ...(heads === undefined ? {} : { heads }),
    });
    return {
      async run() {
        try {
          await indexer.run();
        } finally {
          // A chain stopped by a fatal error keeps no socket open (the others go on).
          heads?.close();
        }
      },
      reportRetriedFault: (message) => indexer.reportRetriedFault(message),
    };
  },
};

const neo: IndexerFamily = {
  /** A NEO 2.x node must answer `getblockcount` and have the ApplicationLogs plugin (`getapplicationlog`). */
  async checkNode(_chain, rpc) {
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
  },
  createIndexer({ chain, rpc, store, logger, signal, tty }) {
    return createNeoIndexer({
      chain,
      source: createNeoSource({ rpc, logger }),
      store,
      logger,
      signal,
      ...(tty === undefined ? {} : { tty }),
    });
  },
};

export const INDEXER_FAMILIES: Readonly<Record<ChainFamilyName, IndexerFamily>> = { evm, neo };

/** The indexer family of `chain`. */
export function indexerFamilyOf(chain: ChainConfig): IndexerFamily {
  return INDEXER_FAMILIES[familyOf(chain.name).name];
}
