import type { ChainName } from '../internal/chains.js';
import type { HttpLimits } from '../internal/http-limits.js';
import type { LogLevel } from '../internal/logger.js';
import type { RateLimit } from '../internal/rate-limit.js';

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
  /**
   * `ws://` or `wss://` endpoint of the same node (EVM chains): new blocks are indexed as soon as
   * its `eth_subscribe("newHeads")` announces them, with polling kept as the fallback. Absent:
   * polling only. May hold credentials: never log it unredacted.
   */
  wsUrl?: string;
  /**
   * Reconcile mode (EVM chains; `--reconcile`, config key `reconcile`): the holders that logs name
   * of tokens whose balances move without a log are read with `balanceOf` and their stored balances
   * corrected (indexer/reconcile.ts). Default off.
   */
  reconcile?: boolean;
}

/** `serve`/`start`: rate limits and allow-list options (config/api-limits.ts, docs/api-keys.md). */
export interface ApiLimitsConfig {
  /** `--rate-limit`/`--rate-burst`: the limit of keys without their own. Absent: unlimited. */
  defaultRateLimit?: RateLimit;
  /** `--redis`: rate-limit state shared by replicas. Absent: in-process. May hold a password: never log it unredacted. */
  redis?: string;
  /** `--trust-proxy`: proxies (canonical CIDRs or proxy-addr range names). Absent: never trust X-Forwarded-For. */
  trustProxy?: readonly string[];
  /** `--operator-listen`: where `/metrics`, the dashboard and the docs are served. Absent: `same` (beside the API). */
  operatorListen?: 'same' | 'off' | Readonly<{ host: string; port: number }>;
  /** `--anonymous-rate-limit`: per client address, requests without a valid key. Absent: the API's default (10/s); null: off. */
  anonymousRateLimit?: RateLimit | null;
}

/** The frozen, validated configuration every command runs from. */
export interface Config {
  /** SQLite file path (default `./data/tokenquery.sqlite`) or a `postgres://` URL. */
  db: string;
  /**
   * `serve`/`start`: a `postgres://` read replica of `db` that the API reads chain data from
   * (API keys are still read from `db`, so revocations apply at once). Absent: everything reads `db`.
   */
  dbRead?: string;
  /** API listen address. Default `127.0.0.1`. */
  host: string;
  /** API listen port. Default 8080. */
  port: number;
  chains: readonly ChainConfig[];
  logLevel: LogLevel;
  /**
   * `serve`/`start`: Uniswap-style token list files that fill `ic` and repair empty names and
   * symbols in the API's answers (api/token-list.ts). Default none.
   */
  tokenLists: readonly string[];
  limits: ApiLimitsConfig;
  /** `serve`/`start`: request, headers and idle timeouts and the connection cap (config/http-limits.ts). */
  http: Readonly<HttpLimits>;
}
