import type { ChainName } from '../internal/chains.js';
import type { LogLevel } from '../internal/logger.js';

/** One chain to index, fully resolved from flags, environment and defaults. */
export interface ChainConfig {
  name: ChainName;
  /** JSON-RPC endpoint. May hold credentials: never log it unredacted. */
  rpcUrl: string;
  /** First block to index. Default 0. */
  fromBlock: number;
  /** Unfinalized window: blocks closer than this to the head may reorg. Default 64 for EVM chains. */
  finalityDepth: number;
  /** How often to poll the node for a new head once caught up. Default 1000 ms. */
  pollIntervalMs: number;
}

/** The frozen, validated configuration every command runs from. */
export interface Config {
  /** SQLite file path (default `./data/tokenquery.sqlite`) or a `postgres://` URL. */
  db: string;
  /** API listen address. Default `127.0.0.1`. */
  host: string;
  /** API listen port. Default 8080. */
  port: number;
  chains: readonly ChainConfig[];
  logLevel: LogLevel;
}
