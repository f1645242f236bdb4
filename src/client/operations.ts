/**
 * What the typed client offers: its options and the operations of each family, as interfaces
 * (`client.ts` builds them).
 */
import type {
  EvmBalanceEntry,
  EvmChain,
  EvmTokenPage,
  EvmTokenSummary,
  EvmTransfer,
  HolderPage,
  NeoAssetPage,
  NeoAssetSummary,
  NeoBalanceEntry,
  NeoContract,
  NeoTokenSummary,
  NeoTransfer,
  TokenqueryStatus,
} from './types.js';

/** A `fetch` implementation: the global one by default. */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface TokenqueryClientOptions {
  /**
   * Address the `/vipapi/...` paths are appended to, e.g. `http://127.0.0.1:8080` or
   * `https://services.tokenview.io`. A path prefix is kept (`https://gw.example/tokens` →
   * `https://gw.example/tokens/vipapi/...`). No query string or fragment.
   */
  baseUrl: string;
  /** The caller's API key, sent as the `apikey` query parameter (the contract's only scheme). */
  apiKey: string;
  /** `fetch` to use (a proxy agent, a test double, a polyfill). Default: the global `fetch`. */
  fetch?: FetchFunction;
  /** Longest wait for a complete answer, per request, in milliseconds; 0 waits forever. Default 30 000. */
  timeoutMs?: number;
  /** Aborts every request of this client (for shutdown). A call's own `signal` is honoured too. */
  signal?: AbortSignal;
  /** Largest answer accepted, in bytes; a longer one is a {@link TokenqueryResponseError}. Default 8 MiB. */
  maxResponseBytes?: number;
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts this call; it then rejects with the signal's reason, as `fetch` does. */
  signal?: AbortSignal;
}

/** Paging of list operations: 1..50 each (the server answers 10001 otherwise). */
export interface PageOptions extends CallOptions {
  /** Page number, from 1. Default 1. */
  page?: number;
  /** Entries per page, at most 50. Default 50. */
  size?: number;
}

export interface EvmTokenArgs extends CallOptions {
  chain: EvmChain;
  /** Token contract address, lower case (`0x` + 40 hex). */
  address: string;
}

export interface NeoTokenArgs extends CallOptions {
  /** NEP-5 script hash (40 hex) or global asset id (64 hex), with or without `0x`. */
  hash: string;
}

export interface EvmAddressArgs extends CallOptions {
  chain: EvmChain;
  /** The address asked about, lower case (`0x` + 40 hex). */
  address: string;
}

export interface EvmAddressTokenArgs extends EvmAddressArgs {
  /** Token contract address, lower case. */
  token: string;
}

export interface NeoAddressArgs extends CallOptions {
  /** The address asked about: a NEO 2.x base58check address (`A…`, 34 characters). */
  address: string;
}

export interface NeoAddressTokenArgs extends NeoAddressArgs {
  /** NEP-5 script hash (40 hex) or global asset id (64 hex), with or without `0x`. */
  hash: string;
}

/** The EVM family: chains eth, bsc, kcs, movr. */
export interface EvmOperations {
  /** Token Info: `GET /vipapi/{chain}/token/{address}`. */
  tokenInfo(args: EvmTokenArgs): Promise<EvmTokenSummary>;
  /** Total Supply, decimal-adjusted exact text (`"1.5"`): `GET /vipapi/token/totalsupply/{chain}/{address}`. */
  totalSupply(args: EvmTokenArgs): Promise<string>;
  /** Max Supply (the cap, else the total supply): `GET /vipapi/token/maxsupply/{chain}/{address}`. */
  maxSupply(args: EvmTokenArgs): Promise<string>;
  /** Circulating Supply: `GET /vipapi/token/circulatingsupply/{chain}/{address}`. */
  circulatingSupply(args: EvmTokenArgs): Promise<string>;
  /** Token Transaction List, newest first: `GET /vipapi/{chain}/token/tokentrans/{address}/{page}/{size}`. */
  transfers(args: EvmTokenArgs & PageOptions): Promise<EvmTransfer[]>;
  /** Token List on Chain: `GET /vipapi/{chain}/tokens/{page}/{size}`. */
  tokens(args: { chain: EvmChain } & PageOptions): Promise<EvmTokenPage>;
  /** Address Token Balances, the tokens held: `GET /vipapi/{chain}/address/tokenbalance/{address}`. */
  addressBalances(args: EvmAddressArgs): Promise<EvmBalanceEntry[]>;
  /** Address Token Balance, one entry: `GET /vipapi/{chain}/address/tokenbalance/{address}/{token}`. */
  addressBalance(args: EvmAddressTokenArgs): Promise<EvmBalanceEntry>;
  /** Address Token Transfers, newest first: `GET /vipapi/{chain}/address/tokentrans/{address}/{token}/{page}/{size}`. */
  addressTokenTransfers(args: EvmAddressTokenArgs & PageOptions): Promise<EvmTransfer[]>;
  /** Address Transfers of every token, newest first: `GET /vipapi/{chain}/address/tokentrans/{address}/{page}/{size}`. */
  addressTransfers(args: EvmAddressArgs & PageOptions): Promise<EvmTransfer[]>;
  /** Token Holders (tokenquery; not in Tokenview's API): `GET /vipapi/{chain}/token/holders/{address}/{page}/{size}`. */
  holders(args: EvmTokenArgs & PageOptions): Promise<HolderPage>;
}

/** The NEO family (NEO Legacy 2.x). */
export interface NeoOperations {
  /** Token Info: `GET /vipapi/neo/token/{hash}` (the documented path order). */
  tokenInfo(args: NeoTokenArgs): Promise<NeoTokenSummary>;
  /** Total Supply, decimal-adjusted exact text: `GET /vipapi/token/totalsupply/neo/{hash}`. */
  totalSupply(args: NeoTokenArgs): Promise<string>;
  /** Max Supply: `GET /vipapi/token/maxsupply/neo/{hash}`. */
  maxSupply(args: NeoTokenArgs): Promise<string>;
  /** Token Transaction List, newest first: `GET /vipapi/neo/token/tokentrans/{hash}/{page}/{size}`. */
  transfers(args: NeoTokenArgs & PageOptions): Promise<NeoTransfer[]>;
  /** Assets (Token) Info: `GET /vipapi/neo/asset/{hash}`. */
  assetInfo(args: NeoTokenArgs): Promise<NeoAssetSummary>;
  /** Assets (Token) List On Chain: `GET /vipapi/tokens/neo/{page}/{size}`. */
  assets(args?: PageOptions): Promise<NeoAssetPage>;
  /** Contracts List On Chain: `GET /vipapi/contracts/neo/{page}/{size}`. */
  contracts(args?: PageOptions): Promise<NeoContract[]>;
  /** Address Token Balances: `GET /vipapi/neo/address/tokenbalance/{address}`. */
  addressBalances(args: NeoAddressArgs): Promise<NeoBalanceEntry[]>;
  /** Address Token Balance, one entry: `GET /vipapi/neo/address/tokenbalance/{address}/{hash}`. */
  addressBalance(args: NeoAddressTokenArgs): Promise<NeoBalanceEntry>;
  /** Address Token Transfers, newest first: `GET /vipapi/neo/address/tokentrans/{address}/{hash}/{page}/{size}`. */
  addressTokenTransfers(args: NeoAddressTokenArgs & PageOptions): Promise<NeoTransfer[]>;
  /** Address Transfers of every token and asset: `GET /vipapi/neo/address/tokentrans/{address}/{page}/{size}`. */
  addressTransfers(args: NeoAddressArgs & PageOptions): Promise<NeoTransfer[]>;
  /** Token Holders (tokenquery; not in Tokenview's API): `GET /vipapi/neo/token/holders/{hash}/{page}/{size}`. */
  holders(args: NeoTokenArgs & PageOptions): Promise<HolderPage>;
}

/** tokenquery's own endpoints: NOT part of the Tokenview interface; other servers answer them 404. */
export interface TokenqueryOnlyOperations {
  /** tokenquery only: `GET /status`, each chain's head and indexed block (no key needed). */
  status(options?: CallOptions): Promise<TokenqueryStatus>;
  /** tokenquery only: `GET /healthz`; true on 200, false on 503 (the store is unavailable). */
  healthz(options?: CallOptions): Promise<boolean>;
}

export interface TokenqueryClient {
  /** The normalized base URL (no trailing slash). */
  readonly baseUrl: string;
  readonly evm: EvmOperations;
  readonly neo: NeoOperations;
  /** tokenquery-only helpers; everything else works against any Tokenview-compatible server. */
  readonly tokenquery: TokenqueryOnlyOperations;
}
