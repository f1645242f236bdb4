/**
 * The NEO (Legacy 2.x) parts of the store's records.
 *
 * NEP-5 tokens go through the ordinary `transfers`/`tokens` of a batch. Global assets (NEO, GAS,
 * other registered assets) are tokens too, addressed by their asset id (`0x` + 64 hex), with
 * `decimals` = the asset's precision: their transfers are counted like any other, but their
 * balances come from the UTXO output table (a holder is an address with unspent outputs).
 * Addresses are base58 text; `""` is the party of mints and burns and never a holder.
 * NEO has one-block finality: its parts are never rolled back (`rollback` refuses a chain
 * holding NEO data).
 */
import type { TransferRecord } from '../internal/records.js';
import type { TokenRecord } from './types.js';

/** One transaction output of a global asset: a row of the NEO output table. */
export interface NeoOutputRow {
  /** Id of the transaction that created it. */
  txid: string;
  /** Its position among that transaction's outputs. */
  n: number;
  /** Asset id. */
  asset: string;
  /** Owner, base58. */
  address: string;
  /** Fixed8 units (10^-8 of the asset, whatever its precision). */
  value: bigint;
}

/** A contract deployment (PublishTransaction, `Neo.Contract.Create` or `Neo.Contract.Migrate`). */
export interface NeoContractRecord {
  /** Contract hash, `0x` + 40 hex. */
  hash: string;
  blockNumber: number;
  /** Position of the deploying transaction in its block. */
  txIndex: number;
  txHash: string;
  /** Block time of the deploying transaction, Unix seconds. */
  time: number;
  /** `PublishTransaction`, `Contract.Create` or `Contract.Migrate`. */
  kind: string;
  name: string;
  author: string;
  /** Address of the deploying transaction's first witness; null when it has none. */
  ownerAddress: string | null;
}

/** What the index knows of a global asset beyond its token row. */
export interface NeoAssetInfo {
  asset: string;
  /** Asset type from `getassetstate` (`GoverningToken`, `UtilityToken`, `Token`, `Share`, ...); null: keep what is stored. */
  type: string | null;
  /** The registration, when it lies inside the index; null: keep what is stored (the first one recorded wins). */
  registration: {
    blockNumber: number;
    /** Block time, Unix seconds. */
    time: number;
    /** Registering address; null when unknown. */
    registrar: string | null;
  } | null;
}

/**
 * The NEO parts of one batch. Everything in it must lie in the batch's block range, and the
 * metadata of every asset it names that the store does not know yet must be in `tokens`.
 */
export interface NeoBatchPart {
  /**
   * Global-asset transfers (`token` = asset id, `value` in the asset's own unit), chain order.
   * They are stored and counted like any transfer but move no balance: `outputsCreated` and
   * `outputsSpent` do.
   */
  assetTransfers: TransferRecord[];
  /** Outputs created in the range: added to the output table and to their owner's balance. */
  outputsCreated: (NeoOutputRow & { blockNumber: number })[];
  /**
   * Outputs spent in the range, resolved by the indexer (also those created before the index
   * began, which the table never held): removed from the table and from their owner's balance.
   */
  outputsSpent: (NeoOutputRow & { blockNumber: number })[];
  /** Contracts deployed in the range; for a hash deployed twice the first record is kept. */
  deployments: NeoContractRecord[];
  /** Asset types and registrations seen in the range. */
  assets: NeoAssetInfo[];
}

/** A NEO token (NEP-5 contract or global asset) with what the NEO operations show beside the common fields. */
export interface NeoTokenRecord extends TokenRecord {
  /** `NEP5` for NEP-5 contracts; the asset type (`GoverningToken`, `UtilityToken`, ...) for global assets. */
  category: string;
  /** Deployment (NEP-5) or registration (asset) time, Unix seconds; null when it lies before the index. */
  createdAt: number | null;
  /** Deploying or registering address; null when unknown or before the index. */
  creator: string | null;
}

export interface NeoTokenPage {
  /** Number of tokens (NEP-5 and assets) indexed on the chain. */
  total: number;
  tokens: NeoTokenRecord[];
}
