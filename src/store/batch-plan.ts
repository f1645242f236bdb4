/**
 * What a batch does to each token, worked out in memory before any backend writes it. Every
 * backend applies the same plan, so they agree exactly on balances, holder counts, transfer
 * counts and supply marks.
 */
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../internal/chains.js';
import { TokenqueryError } from '../internal/errors.js';
import { cleanTokenMetadata } from '../internal/token-text.js';
import type {
  BalanceChange,
  IndexBatch,
  NeoBatchPart,
  SeedBalance,
  TokenMetadata,
  TransferRecord,
} from './types.js';

/**
 * Addresses that never count as holders: the EVM zero address, and `""`, which NEO uses as the
 * `from` of a mint and the `to` of a burn. `0x…dead` counts like any other address.
 */
export const NON_HOLDERS: ReadonlySet<string> = new Set([ZERO_ADDRESS, '']);

/** A transfer from or to one of these changes the supply figures the API shows. */
export const SUPPLY_ADDRESSES: ReadonlySet<string> = new Set([ZERO_ADDRESS, DEAD_ADDRESS, '']);

/** Transfers of one token inside a batch, and what they do to it. */
export interface TokenWork {
  address: string;
  transfers: TransferRecord[];
  /** Balance changes without a transfer (`IndexBatch.balanceChanges`); stored, never counted as transfers. */
  changes: BalanceChange[];
  /** Net balance change per holder (transfers, balance changes and seeds). */
  deltas: Map<string, bigint>;
  /**
   * Per address, how many of `transfers` name it as sender or recipient (a self-transfer once, the
   * zero address and `""` too): what the batch adds to its transfer count of the token
   * (`AddressHolding.transferCount`). Set by `planBatch`.
   */
  named?: Map<string, number>;
  firstBlock: number;
  /** Newest block of a transfer that may change the supply, or null when none. */
  dirtyBlock: number | null;
}

export function addDelta(deltas: Map<string, bigint>, holder: string, delta: bigint): void {
  deltas.set(holder, (deltas.get(holder) ?? 0n) + delta);
}

/** Adds one transfer from `from` to `to` to the per-address counts of {@link TokenWork.named}, times `sign`. */
export function addNamed(named: Map<string, number>, from: string, to: string, sign: 1 | -1 = 1): void {
  named.set(from, (named.get(from) ?? 0) + sign);
  if (to !== from) named.set(to, (named.get(to) ?? 0) + sign);
}

/**
 * The change in each address's transfer count of stored transfers, decoded by `decode` into
 * `[from, to, …]`, times `sign`: 1 to add them (a replay), -1 to take them off (a rollback).
 */
export function namedCounts<Row>(
  rows: readonly Row[],
  decode: (row: Row) => readonly [from: string, to: string, ...unknown[]],
  sign: 1 | -1,
): Map<string, number> {
  const named = new Map<string, number>();
  for (const row of rows) {
    const [from, to] = decode(row);
    addNamed(named, from, to, sign);
  }
  return named;
}

/**
 * Whether `batch` adds no block: `toBlock` is `fromBlock - 1`, the checkpoint it continues. Such a
 * batch carries only balance changes at that block (reconcile's corrections, indexer/reconcile.ts):
 * journaled at the checkpoint, so a rollback below it takes them off.
 */
export function atCheckpoint(batch: Pick<IndexBatch, 'fromBlock' | 'toBlock'>): boolean {
  return batch.toBlock === batch.fromBlock - 1;
}

/**
 * Checks that `batch` continues the stored checkpoint (`indexedBlock`, null before the first
 * batch) and is not empty backwards; a batch that adds no block ({@link atCheckpoint}) must name
 * the checkpoint it continues and carry nothing but balance changes. Call it under the backend's
 * write lock.
 */
export function checkBatchStart(
  batch: Pick<IndexBatch, 'chain' | 'fromBlock' | 'toBlock' | 'continues' | 'blocks' | 'seeds' | 'neo'>,
  indexedBlock: number | null | undefined,
): void {
  const { chain } = batch;
  if (batch.continues !== undefined && batch.continues !== (indexedBlock ?? null)) {
    const stored =
      indexedBlock == null ? 'the chain has no checkpoint yet' : `the checkpoint is block ${indexedBlock}`;
    const expected = batch.continues === null ? 'the first batch of the chain' : `block ${batch.continues}`;
    throw new TokenqueryError(`batch for ${chain} continues ${expected}, but ${stored}`);
  }
  if (indexedBlock != null && batch.fromBlock !== indexedBlock + 1) {
    throw new TokenqueryError(
      `batch for ${chain} starts at block ${batch.fromBlock}, but the checkpoint is block ${indexedBlock}`,
      { details: `expected fromBlock ${indexedBlock + 1}` },
    );
  }
  if (atCheckpoint(batch)) {
    // Its transfers, if any, are refused by checkInBatch.
    const others = batch.blocks.length > 0 || batch.seeds !== undefined || batch.neo !== undefined;
    if (batch.continues === undefined || batch.continues === null || others) {
      throw new TokenqueryError(
        `batch for ${chain} adds no block: it must continue its checkpoint (${batch.toBlock}) and carry balance changes only`,
      );
    }
    return;
  }
  if (batch.toBlock < batch.fromBlock) {
    throw new TokenqueryError(
      `batch for ${chain} ends (${batch.toBlock}) before it starts (${batch.fromBlock})`,
    );
  }
}

/** Rejects `what` (a transfer, an output, …) in `block` when the block lies outside the batch's range. */
export function checkInBatch(
  batch: Pick<IndexBatch, 'chain' | 'fromBlock' | 'toBlock'>,
  block: number,
  what: string,
): void {
  // A batch that adds no block (atCheckpoint) covers its checkpoint, `toBlock`, for balance changes alone.
  const from = atCheckpoint(batch) && what === 'balance change' ? batch.toBlock : batch.fromBlock;
  if (block < from || block > batch.toBlock) {
    throw new TokenqueryError(
      `${what} in block ${block} lies outside its batch ${batch.fromBlock}..${batch.toBlock} for ${batch.chain}`,
    );
  }
}

/** What the store keeps of a chain's seeding (see `BatchSeeds`). */
export interface StoredSeeding {
  /** The checkpoint; null before the first batch. */
  indexedBlock: number | null;
  /** The recorded seed block; null when none is. */
  seedBlock: number | null;
}

/**
 * Checks the batch's seeds against what the store keeps, and returns its starting balances with
 * each (token, holder) pair once (the first one wins). Each names a token of `work` (the batch's
 * transfers) and a holder that can hold: a seed is only ever read for a holder a transfer names.
 * Call it under the backend's write lock, after {@link checkBatchStart}.
 */
export function checkSeeds(
  batch: Pick<IndexBatch, 'chain' | 'fromBlock' | 'seeds'>,
  stored: StoredSeeding,
  work: ReadonlyMap<string, TokenWork>,
): SeedBalance[] {
  const seeds = batch.seeds;
  if (seeds === undefined) return [];
  const { chain } = batch;
  if (stored.indexedBlock === null) {
    if (seeds.block !== batch.fromBlock - 1) {
      throw new TokenqueryError(
        `the first batch for ${chain} starts at block ${batch.fromBlock} but seeds balances at block ${seeds.block}`,
        { details: `expected seed block ${batch.fromBlock - 1}` },
      );
    }
  } else if (stored.seedBlock !== seeds.block) {
    throw new TokenqueryError(
      stored.seedBlock === null
        ? `batch for ${chain} seeds balances, but the chain was indexed without seeding`
        : `batch for ${chain} seeds balances at block ${seeds.block}, but the chain seeds at block ${stored.seedBlock}`,
    );
  }
  const unique = new Map<string, SeedBalance>();
  for (const seed of seeds.balances) {
    if (!work.has(seed.token)) {
      throw new TokenqueryError(
        `batch for ${chain} seeds token ${seed.token}, which none of its transfers moves`,
      );
    }
    if (NON_HOLDERS.has(seed.holder)) {
      throw new TokenqueryError(
        `batch for ${chain} seeds ${JSON.stringify(seed.holder)}, which is never a holder`,
      );
    }
    if (seed.amount < 0n) {
      throw new TokenqueryError(
        `batch for ${chain} seeds a negative balance (${seed.amount}) for ${seed.holder}`,
      );
    }
    const key = `${seed.token}:${seed.holder}`;
    if (!unique.has(key)) unique.set(key, seed);
  }
  return [...unique.values()];
}

/** A batch's starting balances as the backend records them (see {@link seedDeltas}). */
export interface SeedDeltas {
  /** The token id of each seed, in the order of the seeds. */
  tokenIds: number[];
  /**
   * Call for each (token id, holder) pair the store records for the first time: adds its
   * non-zero amount to the token's balance changes, so it is applied with the transfers. A pair
   * seeded before already holds its balance.
   */
  recorded(id: number, holder: string): void;
}

/** The seeds of `seeds` (checked, see {@link checkSeeds}) over `work`; `idOf` gives a token's id. */
export function seedDeltas(
  seeds: readonly SeedBalance[],
  idOf: (token: string) => number,
  work: ReadonlyMap<string, TokenWork>,
): SeedDeltas {
  const byId = new Map<number, TokenWork>();
  const amounts = new Map<string, bigint>();
  const tokenIds: number[] = [];
  for (const seed of seeds) {
    const id = idOf(seed.token);
    tokenIds.push(id);
    byId.set(id, work.get(seed.token)!);
    amounts.set(`${id}:${seed.holder}`, seed.amount);
  }
  return {
    tokenIds,
    recorded(id, holder) {
      const amount = amounts.get(`${id}:${holder}`)!;
      if (amount !== 0n) addDelta(byId.get(id)!.deltas, holder, amount);
    },
  };
}

/**
 * Groups the batch's transfers by token with their net balance changes, first block and supply
 * mark, then adds the NEO part (see {@link addNeoWork}). Rejects anything outside the batch's range.
 */
export function planBatch(batch: IndexBatch): Map<string, TokenWork> {
  const work = new Map<string, TokenWork>();
  // The previous transfer's token: a batch's transfers mostly come in runs of one token.
  let token: TokenWork | undefined;
  for (const transfer of batch.transfers) {
    const block = transfer.blockNumber;
    checkInBatch(batch, block, 'transfer');
    if (token?.address !== transfer.token) token = work.get(transfer.token);
    if (token === undefined) {
      token = {
        address: transfer.token,
        transfers: [],
        changes: [],
        deltas: new Map(),
        named: new Map(),
        firstBlock: block,
        dirtyBlock: null,
      };
      work.set(transfer.token, token);
    }
    token.transfers.push(transfer);
    addNamed(token.named!, transfer.from, transfer.to);
    if (block < token.firstBlock) token.firstBlock = block;
    if (transfer.from !== transfer.to) {
      addDelta(token.deltas, transfer.from, -transfer.value);
      addDelta(token.deltas, transfer.to, transfer.value);
    }
    if (SUPPLY_ADDRESSES.has(transfer.from) || SUPPLY_ADDRESSES.has(transfer.to)) {
      token.dirtyBlock = Math.max(token.dirtyBlock ?? block, block);
    }
  }
  if (batch.balanceChanges !== undefined) addBalanceChanges(batch, batch.balanceChanges, work);
  if (batch.neo !== undefined) addNeoWork(batch, batch.neo, work);
  return work;
}

/**
 * Adds balance changes without a transfer to the per-token work: each moves its holder's balance
 * and marks the token's supply (it mints or burns); none is a transfer. Rejects anything outside
 * the batch's range and a zero change (it would store a row that does nothing).
 */
export function addBalanceChanges<Work extends TokenWork>(
  batch: Pick<IndexBatch, 'chain' | 'fromBlock' | 'toBlock'>,
  changes: readonly BalanceChange[],
  work: Map<string, Work>,
  newWork: (token: TokenWork) => Work = (token) => token as Work,
): void {
  for (const change of changes) {
    const block = change.blockNumber;
    checkInBatch(batch, block, 'balance change');
    if (change.amount === 0n) {
      throw new TokenqueryError(`balance change ${block}:${change.logIndex} of ${change.token} is zero`);
    }
    let token = work.get(change.token);
    if (token === undefined) {
      token = newWork({
        address: change.token,
        transfers: [],
        changes: [],
        deltas: new Map(),
        named: new Map(),
        firstBlock: block,
        dirtyBlock: null,
      });
      work.set(change.token, token);
    } else if (block < token.firstBlock) token.firstBlock = block;
    token.changes.push(change);
    addDelta(token.deltas, change.holder, change.amount);
    token.dirtyBlock = Math.max(token.dirtyBlock ?? block, block);
  }
}

/**
 * The net balance change per holder of stored balance changes, decoded by `decode` into
 * `[holder, amount]`, times `sign` (see {@link netChanges}); added into `deltas` when given.
 */
export function netBalanceChanges<Row>(
  rows: readonly Row[],
  decode: (row: Row) => readonly [holder: string, amount: bigint],
  sign: 1n | -1n,
  deltas: Map<string, bigint> = new Map(),
): Map<string, bigint> {
  for (const row of rows) {
    const [holder, amount] = decode(row);
    addDelta(deltas, holder, amount * sign);
  }
  return deltas;
}

/**
 * Adds the NEO part of `batch` to the per-token work: asset transfers are stored and counted
 * but move no balance; created outputs add to their owner's balance of the asset, spent outputs
 * take from it. Asset mints (claims, miner fees, issues: `from` is `""`) mark the asset's supply
 * for a new read. Rejects anything outside the batch's range.
 */
function addNeoWork(batch: IndexBatch, neo: NeoBatchPart, work: Map<string, TokenWork>): void {
  const inRange = (block: number, what: string): void => checkInBatch(batch, block, what);
  const entry = (address: string, block: number): TokenWork => {
    let token = work.get(address);
    if (token === undefined) {
      token = {
        address,
        transfers: [],
        changes: [],
        deltas: new Map(),
        named: new Map(),
        firstBlock: block,
        dirtyBlock: null,
      };
      work.set(address, token);
    } else if (block < token.firstBlock) token.firstBlock = block;
    return token;
  };
  for (const transfer of neo.assetTransfers) {
    inRange(transfer.blockNumber, 'asset transfer');
    const token = entry(transfer.token, transfer.blockNumber);
    token.transfers.push(transfer);
    addNamed(token.named!, transfer.from, transfer.to);
    if (transfer.from === '') token.dirtyBlock = Math.max(token.dirtyBlock ?? 0, transfer.blockNumber);
  }
  for (const [outputs, sign] of [
    [neo.outputsCreated, 1n],
    [neo.outputsSpent, -1n],
  ] as const) {
    for (const output of outputs) {
      inRange(output.blockNumber, sign > 0n ? 'created output' : 'spent output');
      if (output.value <= 0n) {
        throw new TokenqueryError(`output ${output.txid}:${output.n} has a value of ${output.value}`);
      }
      addDelta(entry(output.asset, output.blockNumber).deltas, output.address, sign * output.value);
    }
  }
  for (const deployment of neo.deployments) inRange(deployment.blockNumber, 'contract deployment');
  for (const asset of neo.assets) {
    if (asset.registration !== null) inRange(asset.registration.blockNumber, 'asset registration');
  }
}

/**
 * The net balance change per holder of stored transfers, decoded by `decode` into
 * `[from, to, value]`, times `sign`: 1n to add them (a replay), -1n to take them off (a rollback).
 * A self-transfer changes nothing.
 */
export function netChanges<Row>(
  rows: readonly Row[],
  decode: (row: Row) => readonly [from: string, to: string, value: bigint],
  sign: 1n | -1n,
): Map<string, bigint> {
  const deltas = new Map<string, bigint>();
  for (const row of rows) {
    const [from, to, value] = decode(row);
    if (from === to) continue;
    const amount = value * sign;
    addDelta(deltas, from, -amount);
    addDelta(deltas, to, amount);
  }
  return deltas;
}

/**
 * Refuses a rollback the store cannot make: of a chain holding NEO data (one-block finality, so
 * its outputs, deployments and asset facts are not journaled), of a chain with nothing indexed,
 * or to a block above the checkpoint. Call it under the backend's write lock.
 */
export function checkRollback(
  chain: string,
  indexedBlock: number | null | undefined,
  toBlock: number,
  holdsNeoData: boolean,
): asserts indexedBlock is number {
  if (holdsNeoData) throw new TokenqueryError(`cannot roll back ${chain}: NEO data is final`);
  if (indexedBlock == null) throw new TokenqueryError(`cannot roll back ${chain}: nothing is indexed yet`);
  if (toBlock > indexedBlock) {
    throw new TokenqueryError(
      `cannot roll back ${chain} to block ${toBlock}: the checkpoint is block ${indexedBlock}`,
    );
  }
}

/**
 * The rule for a token a batch names and the store does not know yet: the batch must carry its
 * metadata (returned, with its name and symbol capped and cleaned: whatever wrote the batch,
 * the store keeps no megabyte name), and its supply is marked to be read (any read at or after
 * its first block will do).
 */
export function admitNewToken(
  chain: string,
  metadata: ReadonlyMap<string, TokenMetadata>,
  token: TokenWork,
): TokenMetadata {
  const meta = metadata.get(token.address);
  if (meta === undefined) {
    throw new TokenqueryError(`batch for ${chain} lacks the metadata of new token ${token.address}`);
  }
  token.dirtyBlock = Math.max(token.dirtyBlock ?? token.firstBlock, token.firstBlock);
  return cleanTokenMetadata(meta);
}
