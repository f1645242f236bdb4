/**
 * Result types of the 13 operations and of the address and holder operations, exactly as the contract's JSON carries them (docs/api.md:
 * #json-types, and each operation under #evm-family and #neo-family): the same keys, the same JSON
 * types, keys the contract shows as `null` present as `null`. Amounts stay text: `value` is the
 * raw integer amount in the token's smallest unit, `t`, `circulationSupply` and the supply bodies
 * are decimal-adjusted amounts in whole-token units. Convert with `BigInt(value)`, never with
 * `Number`.
 */

/** Chains of the EVM family. */
export type EvmChain = 'eth' | 'bsc' | 'kcs' | 'movr';

/**
 * Decimal-adjusted amount as exact text: digits, optionally a point and more digits
 * (`"1000000000"`, `"1.5"`). No sign, no exponent.
 */
export type DecimalText = string;

/** Integer as exact text: digits only (`"18"`, `"18446744073709551617"`). */
export type IntegerText = string;

// ---- EVM family ----

/** `tokenInfo` of EVM Token Info. */
export interface EvmTokenInfo {
  /** Token contract address, lower case. */
  h: string;
  /** Chain name in upper case (`ETH`, `BSC`, `KCS`, `MOVR`). */
  p: string;
  /** Name; `""` when the contract has none. */
  f: string;
  /** Symbol; `""` when the contract has none. */
  s: string;
  /** Decimals as text. */
  d: IntegerText;
  /** Total supply, decimal-adjusted; null when the contract's `totalSupply()` cannot be read. */
  t: DecimalText | null;
}

/** `data` of EVM Token Info (`/vipapi/{chain}/token/{address}`). */
export interface EvmTokenSummary {
  /** Chain name in upper case. */
  network: string;
  tokenHash: string;
  /** Fungible transfers of the token in the index. */
  transferCnt: number;
  /** Addresses (other than the zero address) with a positive balance. */
  holderCnt: number;
  tokenInfo: EvmTokenInfo;
}

/** The reduced `tokenInfo` embedded in EVM transfer records. */
export interface EvmTransferTokenInfo {
  h: string;
  f: string;
  s: string;
  d: IntegerText;
}

/** One record of EVM Token Transaction List. */
export interface EvmTransfer {
  /** The transaction's position in its block. */
  index: number;
  block_no: number;
  token: string;
  tokenAddr: string;
  tokenSymbol: string;
  tokenDecimals: IntegerText;
  /** Block time, Unix seconds. */
  time: number;
  txid: string;
  tokenInfo: EvmTransferTokenInfo;
  from: string;
  to: string;
  /** Raw integer amount in the token's smallest unit. */
  value: IntegerText;
  /** Confirmations (spelled this way in the EVM family). */
  conformations: number;
}

/** One entry of EVM Token List on Chain. */
export interface EvmTokenListEntry extends EvmTokenInfo {
  /** Icon identifier; `""` when none. */
  ic: string;
}

/** `data` of EVM Token List on Chain. */
export interface EvmTokenPage {
  page: number;
  size: number;
  /** Tokens indexed on the chain. */
  total: number;
  data: EvmTokenListEntry[];
}

// ---- NEO family ----

/** `c` values that occur; other global assets may carry other categories. */
export type NeoTokenCategory = 'NEP5' | 'UtilityToken' | 'GoverningToken';

/** The NEO token info object with every NEO key (Token Info, transfer records, asset list). */
export interface NeoTokenInfo {
  appendixData: null;
  pending: null;
  /** Script hash (NEP-5) or asset id, `0x` + lower-case hex. */
  h: string;
  /** Public chain; tokenquery sends null (the chain is in `network`). */
  p: string | null;
  f: string;
  s: string;
  d: IntegerText;
  /** Null in Token Info and transfer records; the total supply in the asset list. */
  t: DecimalText | null;
  /** Category: `NEP5`, `UtilityToken` (GAS), `GoverningToken` (NEO), or another asset type. */
  c: NeoTokenCategory | (string & {});
  /** Creation time, Unix seconds as text; null when deployed before the indexed range. */
  i: IntegerText | null;
  /** Creator address; null when unknown. */
  o: string | null;
  l: null;
}

/** `data` of NEO Token Info (`/vipapi/neo/token/{hash}`). */
export interface NeoTokenSummary {
  appendixData: null;
  pending: null;
  /** `"NEO"`. */
  network: string;
  tokenHash: string;
  transferCnt: number;
  holderCnt: number;
  contract: null;
  circulationSupply: null;
  tokenInfo: NeoTokenInfo;
}

/** `tokenInfo` of Assets (Token) Info: total supply in `t`. */
export interface NeoAssetTokenInfo {
  h: string;
  f: string;
  s: string;
  d: IntegerText;
  t: DecimalText | null;
  c: NeoTokenCategory | (string & {});
  i: IntegerText | null;
  o: string | null;
}

/** `data` of Assets (Token) Info (`/vipapi/neo/asset/{hash}`). */
export interface NeoAssetSummary {
  network: string;
  tokenHash: string;
  transferCnt: number;
  holderCnt: number;
  tokenInfo: NeoAssetTokenInfo;
}

/**
 * One entry of Assets (Token) List On Chain. Tokenview's documentation allows `tokenInfo.h` null
 * for some entries.
 */
export interface NeoAssetListEntry {
  appendixData: null;
  pending: null;
  network: null;
  tokenHash: null;
  transferCnt: null;
  holderCnt: number;
  contract: null;
  /** Total supply, decimal-adjusted; null when the node could not say. */
  circulationSupply: DecimalText | null;
  tokenInfo: Omit<NeoTokenInfo, 'h'> & { h: string | null };
}

/** `data` of Assets (Token) List On Chain. */
export interface NeoAssetPage {
  page: number;
  size: number;
  total: number;
  data: NeoAssetListEntry[];
  appendixData: null;
  pending: null;
  note: null;
}

/** One record of NEO Token Transaction List. */
export interface NeoTransfer {
  index: number;
  block_no: number;
  token: null;
  asset: null;
  tokenAddr: string;
  tokenSymbol: string;
  tokenDecimals: IntegerText;
  time: number;
  txid: string;
  tokenInfo: NeoTokenInfo;
  /** Spelled correctly in the NEO family. */
  confirmations: number;
  type: null;
  /** Sender address; `""` for a NEP-5 mint. */
  from: string;
  /** Recipient address; `""` for a NEP-5 burn. */
  to: string;
  fromAlias: null;
  toAlias: null;
  /** Raw integer amount in the smallest unit. */
  value: IntegerText;
  valueIsNft: null;
  fromIsContract: null;
  toIsContract: null;
  amount: null;
}

/** One record of Contracts List On Chain. */
export interface NeoContract {
  /** Block time of the deploying transaction, Unix seconds. */
  createTime: number;
  author: string;
  name: string;
  contractAddress: string;
  ownerAddress: string;
}

// ---- Address operations and Token Holders (docs/api.md#address-operations, #token-holders) ----

/** One entry of Address Token Balance(s), EVM family. */
export interface EvmBalanceEntry {
  /** Chain name in upper case. */
  network: string;
  /** Token contract address. */
  hash: string;
  tokenInfo: EvmTransferTokenInfo;
  /** Transfers of the token in which the address is sender or recipient (a self-transfer once). */
  transferCnt: number;
  /** Raw integer balance in the token's smallest unit (as `value`); never negative. */
  balance: IntegerText;
}

/** One entry of Address Token Balance(s), NEO family: `tokenInfo` adds the category. */
export interface NeoBalanceEntry {
  /** `"NEO"`. */
  network: string;
  /** Script hash (NEP-5) or asset id. */
  hash: string;
  tokenInfo: EvmTransferTokenInfo & { c: NeoTokenCategory | (string & {}) };
  transferCnt: number;
  /** Raw integer balance in the smallest unit (global assets: their own precision, as `value`). */
  balance: IntegerText;
}

/** One holder of Token Holders. */
export interface HolderEntry {
  /** 1-based position in the whole list. */
  rank: number;
  address: string;
  /** Raw integer balance in the token's smallest unit. */
  balance: IntegerText;
  /**
   * Share of the total supply in percent, exact decimal text truncated to 6 digits (`"12.345678"`);
   * null when the total supply is unknown or zero.
   */
  percentage: DecimalText | null;
}

/** `data` of Token Holders (both families). */
export interface HolderPage {
  page: number;
  size: number;
  /** The token's holder count. */
  total: number;
  /** False when the token's balances are known not to equal `balanceOf` at the head. */
  exact: boolean;
  data: HolderEntry[];
}

// ---- tokenquery only ----

/** One chain in tokenquery's `/status` (not part of the Tokenview interface). */
export interface ChainProgress {
  /** Newest block seen on the node. */
  head: number;
  /** Newest block whose data is fully visible in the API. */
  indexed: number;
  /** `head - indexed` (tokenquery adds it; may be absent on older servers). */
  lag?: number;
  /** Tokens of the chain marked not exact (tokenquery adds it; may be absent on older servers). */
  notExactTokens?: number;
  /** The indexer's last error, or null. */
  lastError?: string | null;
  /** True when the index starts late and its holder counts and balances are partial (tokenquery adds it). */
  holdersPartial?: boolean;
}

/** tokenquery's `/status` body. */
export interface TokenqueryStatus {
  chains: Record<string, ChainProgress>;
}
