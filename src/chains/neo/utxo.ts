/**
 * Global-asset (NEO, GAS, other registered assets) movements. They live in UTXOs: a
 * transaction spends earlier outputs (its inputs name them by txid and index) and creates new
 * ones. An indexer keeps its own table of outputs (`createdOutputs` rows, marked spent by
 * `spentOutputs`) and resolves inputs from it; outputs created before its start block come
 * from the node (`NeoSource.resolveOutputs`).
 *
 * What counts as a transfer (docs/api.md#neo-global-asset-transfers): per asset, one transfer
 * per (sender, recipient) pair, change back to a sender excluded. Senders are the owners of the
 * inputs of that asset; recipients the owners of its outputs. Outputs with no input of their
 * asset behind them (GAS claims, the block's MinerTransaction fees, an IssueTransaction) are
 * mints: from `""`.
 */
import type { TransferRecord } from '../../internal/records.js';
import { fixed8ToAssetUnits } from './fixed8.js';
import type {
  NeoBlock,
  NeoCreatedOutput,
  NeoOutputRef,
  NeoTransaction,
  NeoTransactionType,
} from './types.js';

/** Asset id of NEO (GoverningToken), precision 0. */
export const NEO_ASSET_ID = '0xc56f33fc6ecfcd0c225c4ab356fee59390af8560be0e930faebe74a6daff7c9b';
/** Asset id of GAS (UtilityToken), precision 8. */
export const GAS_ASSET_ID = '0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7';

/** Why an asset transfer happened. */
export type AssetTransferKind =
  /** Value moved from senders' inputs to a recipient. */
  | 'transfer'
  /** GAS claimed (ClaimTransaction). */
  | 'claim'
  /** Network fees paid to the speaker (MinerTransaction). */
  | 'miner'
  /** Issued by the asset's issuer (IssueTransaction). */
  | 'issue'
  /** Any other output with no input of its asset behind it. */
  | 'mint';

/**
 * One global-asset transfer: a transfer record whose `token` is the asset id (`0x` + 64 hex),
 * `from` is `""` for a mint (claim, miner fee, issue), `logIndex` is its position among the
 * block's asset transfers, and `value` is what the recipient received of the asset in the
 * transaction, in the asset's smallest unit: whole NEO, 10^-8 GAS. With several senders each
 * pair carries the recipient's whole amount: UTXOs do not say whose input paid whom.
 */
export interface AssetTransfer extends TransferRecord {
  kind: AssetTransferKind;
}

/** An input whose output is not known to the caller (see `deriveAssetTransfers`). */
export class UnresolvedInputError extends Error {
  override name = 'UnresolvedInputError';
  readonly ref: NeoOutputRef;

  constructor(ref: NeoOutputRef, txid: string) {
    super(`input ${ref.txid}:${ref.n} of ${txid} spends an output that was not resolved`);
    this.ref = ref;
  }
}

/** `txid:n`, the key of an output. */
export function outputKey(ref: NeoOutputRef): string {
  return `${ref.txid}:${ref.n}`;
}

/** Every output the blocks create, in chain order: the rows to add to an output table. */
export function createdOutputs(blocks: readonly NeoBlock[]): NeoCreatedOutput[] {
  const rows: NeoCreatedOutput[] = [];
  for (const block of blocks) {
    for (const tx of block.transactions) {
      for (const output of tx.outputs) rows.push({ ...output, txid: tx.txid });
    }
  }
  return rows;
}

/** Every output the blocks spend (their inputs), in chain order. Claims spend nothing. */
export function spentOutputs(blocks: readonly NeoBlock[]): NeoOutputRef[] {
  return blocks.flatMap((block) => block.transactions.flatMap((tx) => tx.inputs));
}

/**
 * The inputs of `blocks` that spend outputs the blocks do not create themselves, without
 * duplicates: what the indexer must look up in its table, or, failing that, ask the node.
 */
export function externalInputs(blocks: readonly NeoBlock[]): NeoOutputRef[] {
  const created = new Set<string>();
  for (const block of blocks) {
    for (const tx of block.transactions) created.add(tx.txid);
  }
  const seen = new Set<string>();
  const refs: NeoOutputRef[] = [];
  for (const ref of spentOutputs(blocks)) {
    const key = outputKey(ref);
    if (created.has(ref.txid) || seen.has(key)) continue;
    seen.add(key);
    refs.push(ref);
  }
  return refs;
}

const MINT_KIND: Partial<Record<NeoTransactionType, AssetTransferKind>> = {
  ClaimTransaction: 'claim',
  MinerTransaction: 'miner',
  IssueTransaction: 'issue',
};

/**
 * The asset transfers of a block. `lookup` resolves the outputs the block's inputs spend
 * (outputs created earlier in the same block are found without it); an input it cannot
 * resolve throws `UnresolvedInputError`. `precisionOf` gives an asset's precision (NEO 0 and
 * GAS 8 are known); values are converted exactly from Fixed8 units to the asset's unit.
 */
export function deriveAssetTransfers(
  block: NeoBlock,
  lookup: (ref: NeoOutputRef) => NeoCreatedOutput | undefined,
  precisionOf: (asset: string) => number,
): AssetTransfer[] {
  const inBlock = new Map<string, NeoCreatedOutput>();
  const transfers: AssetTransfer[] = [];
  const precision = (asset: string) =>
    asset === NEO_ASSET_ID ? 0 : asset === GAS_ASSET_ID ? 8 : precisionOf(asset);
  for (const tx of block.transactions) {
    const spent = tx.inputs.map((ref) => {
      const output = inBlock.get(outputKey(ref)) ?? lookup(ref);
      if (output === undefined) throw new UnresolvedInputError(ref, tx.txid);
      return output;
    });
    for (const movement of assetMovements(tx, spent)) {
      const units = precision(movement.asset);
      for (const from of movement.senders.length > 0 ? movement.senders : ['']) {
        for (const [to, received] of movement.recipients) {
          transfers.push({
            token: movement.asset,
            blockNumber: block.index,
            logIndex: transfers.length,
            txIndex: tx.index,
            txHash: tx.txid,
            from,
            to,
            value: fixed8ToAssetUnits(received, units),
            time: block.time,
            kind: movement.senders.length > 0 ? 'transfer' : (MINT_KIND[tx.type] ?? 'mint'),
          });
        }
      }
    }
    for (const output of tx.outputs)
      inBlock.set(outputKey({ txid: tx.txid, n: output.n }), { ...output, txid: tx.txid });
  }
  return transfers;
}

/** Per asset of a transaction: distinct senders and what each non-sender recipient received. */
export interface AssetMovement {
  asset: string;
  /** Owners of the spent outputs of this asset, in input order. */
  senders: string[];
  /** Recipient → Fixed8 units received, in output order; senders (change) left out. */
  recipients: Map<string, bigint>;
}

/**
 * The movements of one transaction given the outputs its inputs spend (in input order).
 * Assets come in the order their first output appears; an asset that is only spent (a fee)
 * or only returned as change moves nothing.
 */
export function assetMovements(tx: NeoTransaction, spent: readonly NeoCreatedOutput[]): AssetMovement[] {
  const senders = new Map<string, Set<string>>();
  for (const output of spent) {
    let owners = senders.get(output.asset);
    if (owners === undefined) {
      owners = new Set();
      senders.set(output.asset, owners);
    }
    owners.add(output.address);
  }
  const movements = new Map<string, AssetMovement>();
  for (const output of tx.outputs) {
    const assetSenders = senders.get(output.asset);
    if (assetSenders?.has(output.address)) continue; // change
    let movement = movements.get(output.asset);
    if (movement === undefined) {
      movement = { asset: output.asset, senders: [...(assetSenders ?? [])], recipients: new Map() };
      movements.set(output.asset, movement);
    }
    movement.recipients.set(output.address, (movement.recipients.get(output.address) ?? 0n) + output.value);
  }
  return [...movements.values()];
}
