/**
 * What the NEO 2.x chain layer gives an indexer: validated, decoded blocks and node state.
 *
 * Conventions (the store keeps them as given):
 * - Block and transaction hashes, asset ids: `0x` + 64 lower-case hex.
 * - Contract (NEP-5 token) hashes: `0x` + 40 lower-case hex, big-endian as RPC shows them.
 * - Account addresses: base58 (`A…`). The empty string stands for "no address": the `from`
 *   of a mint and the `to` of a burn (docs/api.md#nep-5-transfers).
 * - UTXO values are exact Fixed8 units (10^-8) as `bigint`; NEP-5 amounts are raw `bigint`.
 */
import type { TransferRecord } from '../../internal/records.js';
import type { NeoInvokeResult } from './stack.js';

export type { NeoInvokeResult, NeoStackItem } from './stack.js';

/** The transaction types of NEO 2.x. */
export type NeoTransactionType =
  | 'MinerTransaction'
  | 'IssueTransaction'
  | 'ClaimTransaction'
  | 'EnrollmentTransaction'
  | 'RegisterTransaction'
  | 'ContractTransaction'
  | 'StateTransaction'
  | 'PublishTransaction'
  | 'InvocationTransaction';

/** A reference to a transaction output: what an input spends and a claim names. */
export interface NeoOutputRef {
  txid: string;
  /** Output index inside that transaction. */
  n: number;
}

/** A transaction output of a global asset (NEO, GAS or another registered asset). */
export interface NeoOutput {
  /** Position among the transaction's outputs. */
  n: number;
  /** Asset id, `0x` + 64 hex. */
  asset: string;
  /** Fixed8 units (10^-8 of the asset, whatever its precision). */
  value: bigint;
  /** Base58 address that owns it. */
  address: string;
}

/** An output together with the transaction that created it: one row of an indexer's output table. */
export interface NeoCreatedOutput extends NeoOutput {
  txid: string;
}

/** A transaction witness (bare hex scripts). */
export interface NeoWitness {
  invocation: string;
  verification: string;
}

/** A transaction attribute (usage name as the node writes it, data as bare hex). */
export interface NeoAttribute {
  usage: string;
  data: string;
}

/** A validated transaction (verbose `getblock` / `getrawtransaction` shape). */
export interface NeoTransaction {
  txid: string;
  type: NeoTransactionType;
  /** Outputs this transaction spends (vin). */
  inputs: NeoOutputRef[];
  /** Outputs it creates (vout), in order. */
  outputs: NeoOutput[];
  /** ClaimTransaction only: the spent NEO outputs whose GAS it claims (they are not spent again). */
  claims: NeoOutputRef[];
  /** System fee, Fixed8 units of GAS. */
  sysFee: bigint;
  /** Network fee, Fixed8 units of GAS. */
  netFee: bigint;
  witnesses: NeoWitness[];
  /**
   * Address of the first witness's verification script: the owner of a deployment
   * (docs/api.md#neo-contract-records).
   * Null when there is no witness or its verification script is empty.
   */
  firstWitnessAddress: string | null;
  attributes: NeoAttribute[];
  /** InvocationTransaction only: the script it runs (bare hex). */
  script: string | null;
}

/** A transaction of a block, with its position and, for invocations, its execution outcome. */
export interface NeoBlockTransaction extends NeoTransaction {
  /** Position in the block (Tokenview's `index`). */
  index: number;
  /**
   * InvocationTransaction only: true when an `Application` execution of its log FAULTed (its
   * notifications and deployments do not count; its UTXO inputs and outputs still do).
   * Null for other types.
   */
  faulted: boolean | null;
}

/** A transaction read with `getrawtransaction` (verbose), with where it was included. */
export interface NeoRawTransaction extends NeoTransaction {
  /** Null for a transaction still in the memory pool. */
  blockHash: string | null;
  /** Unix seconds; null for a transaction still in the memory pool. */
  blockTime: number | null;
}

/**
 * One NEP-5 `transfer` notification of a non-FAULTed `Application` execution: a transfer record
 * (`token` is the notifying contract, `0x` + 40 hex; `from` and `to` are base58, `""` for a mint
 * or a burn; `logIndex` is the notification's position among all notifications of the block, by
 * transaction then notification), so it can be stored as is, with what the notification carried.
 */
export interface Nep5Transfer extends TransferRecord {
  /** Position of the notification in its transaction's log (all executions, all notifications). */
  notifyIndex: number;
  /** Sender script hash as the notification carries it (bare hex, stored order); null for a mint. */
  fromScriptHash: string | null;
  /** Recipient script hash as carried; null for a burn. */
  toScriptHash: string | null;
  /** How the amount was encoded. */
  amountEncoding: 'ByteArray' | 'Integer';
}

/** How a contract came to be deployed. */
export type NeoDeploymentKind = 'PublishTransaction' | 'Contract.Create' | 'Contract.Migrate';

/** A contract deployed by a block's transaction: a row of the NEO contract list. */
export interface NeoContractDeployment {
  /** Contract hash, `0x` + 40 hex (the hash160 of its script, big-endian). */
  hash: string;
  kind: NeoDeploymentKind;
  blockNumber: number;
  /** Block time, Unix seconds: the contract record's `createTime`. */
  time: number;
  txHash: string;
  txIndex: number;
  /** Address of the deploying transaction's first witness (`ownerAddress`); null when unknown. */
  ownerAddress: string | null;
  name: string;
  author: string;
  version: string;
  email: string;
  description: string;
  needsStorage: boolean;
}

/** A global asset registered by a block's transaction. */
export interface NeoAssetRegistration {
  /** Asset id: the registering transaction's id. */
  assetId: string;
  kind: 'RegisterTransaction' | 'Asset.Create';
  blockNumber: number;
  /** Block time, Unix seconds: the asset's `i`. */
  time: number;
  txHash: string;
  txIndex: number;
  /** Address of the registering transaction's first witness; null when it has none (genesis). */
  registrarAddress: string | null;
  /**
   * What a RegisterTransaction carries (null for `Asset.Create`, whose arguments are computed
   * at run time: read `getassetstate` instead).
   */
  register: {
    type: string;
    /** English name (or the only one). */
    name: string;
    /** Fixed8 units; null for an unlimited asset. */
    amount: bigint | null;
    precision: number;
    /** The admin address: NEO records it as the asset's issuer. */
    admin: string;
  } | null;
}

/** A validated, decoded block. */
export interface NeoBlock {
  index: number;
  hash: string;
  previousHash: string;
  /** Unix seconds. */
  time: number;
  transactions: NeoBlockTransaction[];
  /** NEP-5 transfers of the block, ordered by `logIndex`. */
  nep5Transfers: Nep5Transfer[];
  /** Contracts deployed by the block, in transaction order. */
  deployments: NeoContractDeployment[];
  /** Global assets registered by the block, in transaction order. */
  assetRegistrations: NeoAssetRegistration[];
}

/** `getcontractstate`, validated. */
export interface NeoContractState {
  hash: string;
  name: string;
  author: string;
  version: string;
  email: string;
  description: string;
  needsStorage: boolean;
  /** Bare hex; as long as the node gives it. */
  script: string;
}

/** `getassetstate`, validated. */
export interface NeoAssetState {
  id: string;
  /** `GoverningToken` (NEO), `UtilityToken` (GAS), `Token`, `Share`, ... */
  type: string;
  /** English name, else the first or only name; `""` when the asset has none. */
  name: string;
  /** Every (language, name) pair the asset state lists. */
  names: { lang: string; name: string }[];
  /** Max supply in Fixed8 units; null for an unlimited asset (`-0.00000001`). */
  amount: bigint | null;
  /** Issued so far, Fixed8 units. */
  available: bigint;
  precision: number;
  /** Owner public key (bare hex; `00` for none). */
  owner: string;
  admin: string;
  issuer: string;
}

/** NEP-5 metadata read with `invokefunction`. */
export interface Nep5Metadata {
  hash: string;
  /** `name()`; `""` when missing or FAULTing. */
  name: string;
  /** `symbol()`; `""` when missing or FAULTing. */
  symbol: string;
  /** `decimals()`; 0 when missing, FAULTing or not in 0..255. */
  decimals: number;
  /** `totalSupply()` in raw units; null when it cannot be read. */
  totalSupply: bigint | null;
}

/** A parameter of `invokefunction` (the node's ContractParameter JSON). */
export interface NeoContractParam {
  type: 'String' | 'Integer' | 'Boolean' | 'Hash160' | 'Hash256' | 'ByteArray' | 'Array';
  value: unknown;
}

/**
 * What a NEO indexer needs from a NEO 2.x node (neo-cli with the ApplicationLogs plugin).
 * Every answer is validated before it leaves; a malformed answer is retried a few times and
 * then surfaces as `InvalidRpcResponseError`. Transport faults are retried in the RPC client.
 */
export interface NeoSource {
  /** `getblockcount`: the number of blocks. The head is `count - 1`. */
  getBlockCount(): Promise<number>;
  /**
   * Blocks `from..to` (inclusive), in order: verbose `getblock` in batches, then
   * `getapplicationlog` of their InvocationTransactions, decoded. Fails with
   * `NeoApplicationLogMissingError` when the node has no log for an invocation, and with
   * `InvalidRpcResponseError` when a block is not there yet or the chain is not continuous.
   */
  getBlocks(from: number, to: number): Promise<NeoBlock[]>;
  /** `getcontractstate`; null when the node knows no such contract. */
  getContractState(hash: string): Promise<NeoContractState | null>;
  /** `getassetstate`; null when the node knows no such asset. */
  getAssetState(id: string): Promise<NeoAssetState | null>;
  /** `invokefunction` (a test run: nothing is sent to the chain). */
  invokeFunction(
    hash: string,
    method: string,
    params?: readonly NeoContractParam[],
  ): Promise<NeoInvokeResult>;
  /** name/symbol/decimals/totalSupply of each token, four `invokefunction` calls each, batched. */
  readNep5Metadata(hashes: readonly string[]): Promise<Nep5Metadata[]>;
  /** `getrawtransaction` (verbose); null when the node knows no such transaction. */
  getRawTransaction(txid: string): Promise<NeoRawTransaction | null>;
  /**
   * The outputs that `refs` name, read with batched `getrawtransaction`: the fallback for
   * inputs that spend outputs created before the start block. Keyed `txid:n`. Fails with
   * `NeoMissingOutputError` when a transaction or output does not exist.
   */
  resolveOutputs(refs: readonly NeoOutputRef[]): Promise<Map<string, NeoCreatedOutput>>;
}
