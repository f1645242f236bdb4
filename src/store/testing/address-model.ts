/**
 * A reference model of what a `Store` answers about addresses and holders, for tests: feed it
 * the batches (and rollbacks) a store was given, and it computes
 * what `listAddressBalances`, `getAddressHolding`, `listAddressTransfers`, `listHolders`,
 * `scanHoldings` and `scanHolders` must answer. It keeps the raw inputs only (transfers, seeds,
 * NEO outputs) and derives everything from them by the plain definitions in `types.ts` (caching
 * the derived values until the next change), so it stays small and obviously right; it is meant
 * for histories of thousands of transfers, not millions.
 *
 * The definitions it follows:
 * - An EVM or NEP-5 balance is the holder's starting balance (seed) plus what transfers brought
 *   minus what they took; a self-transfer moves nothing. Mint and burn parties (the zero address,
 *   NEO's `""`) get balances too, negative ones, as `getBalance` answers them.
 * - Balance changes without a transfer (`IndexBatch.balanceChanges`: deposits, withdrawals,
 *   issues, redeems) add their signed amount to the holder's balance; they are no transfers (not
 *   counted, not listed), but a token they name is a token of the chain.
 * - A NEO global asset's balance is the sum of its created outputs minus its spent outputs; its
 *   transfers (asset transfers) are counted but move nothing.
 * - A holder has a balance above zero and is neither the zero address nor `""`.
 * - A (token, address) transfer count is the number of the token's transfers naming the address
 *   as sender or recipient (a self-transfer once, zero values too).
 * - Balances can be asked as of an earlier block (`asOf`: `ChainStatus.balancesBlock` while a
 *   backfill defers balances), and an address's transfers with them; token counts and a token's
 *   transfer list are always as of the checkpoint.
 */
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { NON_HOLDERS } from '../batch-plan.js';
import type {
  AddressHolding,
  BalanceChange,
  HolderEntry,
  IndexBatch,
  NeoOutputRow,
  SeedBalance,
  TransferRecord,
} from '../types.js';

type Output = NeoOutputRow & { blockNumber: number };

/** A token an address holds, as `listAddressBalances` gives it without the token record. */
export interface ModelAddressBalance extends AddressHolding {
  token: string;
}

/** A token's counts, as its `TokenRecord` gives them. */
export interface ModelTokenCounts {
  holderCount: number;
  transferCount: number;
}

/** String order by code unit (the order `<` gives), the order the contract means for addresses. */
export const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** uint256 order, descending. */
const byAmountDesc = (a: bigint, b: bigint): number => (a > b ? -1 : a < b ? 1 : 0);

/** Holders' order: balance descending, then address ascending. */
export function compareHolders(a: HolderEntry, b: HolderEntry): number {
  return byAmountDesc(a.balance, b.balance) || compareStrings(a.address, b.address);
}

/** Address transfers' order: block, then log index, then token address, all descending. */
export function compareNewestFirst(a: TransferRecord, b: TransferRecord): number {
  return b.blockNumber - a.blockNumber || b.logIndex - a.logIndex || compareStrings(b.token, a.token);
}

class ChainModel {
  /** EVM and NEP-5 transfers, and NEO asset transfers, in the order applied. */
  transfers: TransferRecord[] = [];
  /** Balance changes without a transfer, in the order applied. */
  changes: BalanceChange[] = [];
  /** Starting balances by `token|holder`; the first one recorded wins. */
  seeds = new Map<string, SeedBalance>();
  /** Tokens whose balances come from outputs (NEO global assets). */
  assets = new Set<string>();
  created: Output[] = [];
  spent: Output[] = [];
}

const pairKey = (token: string, holder: string): string => `${token}|${holder}`;

export class AddressModel {
  private readonly chains = new Map<string, ChainModel>();
  /**
   * Derived values (balances and holdings per token, token order) since the last change: every
   * change clears it all, so it only spares recomputing between changes (a check reads each
   * token's holdings once per address).
   */
  private readonly memo = new Map<string, unknown>();

  private cached<T>(key: string, compute: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, compute());
    return this.memo.get(key) as T;
  }

  private chain(chain: string): ChainModel {
    let model = this.chains.get(chain);
    if (model === undefined) {
      model = new ChainModel();
      this.chains.set(chain, model);
    }
    return model;
  }

  /** Records what a batch the store accepted adds: its seeds, transfers and NEO part. */
  apply(batch: IndexBatch): void {
    this.addSeeds(batch.chain, batch.seeds?.balances ?? []);
    this.addTransfers(batch.chain, batch.transfers);
    this.addBalanceChanges(batch.chain, batch.balanceChanges ?? []);
    if (batch.neo !== undefined) {
      const { assetTransfers, outputsCreated, outputsSpent } = batch.neo;
      this.addNeoAssets(batch.chain, assetTransfers, outputsCreated, outputsSpent);
    }
  }

  /** Transfers of EVM or NEP-5 tokens (for a test that has them without a batch, e.g. read from a node). */
  addTransfers(chain: string, transfers: readonly TransferRecord[]): void {
    this.memo.clear();
    this.chain(chain).transfers.push(...transfers);
  }

  /** Balance changes without a transfer. */
  addBalanceChanges(chain: string, changes: readonly BalanceChange[]): void {
    this.memo.clear();
    this.chain(chain).changes.push(...changes);
  }

  /** Starting balances; a (token, holder) pair already seeded keeps its first amount. */
  addSeeds(chain: string, seeds: readonly SeedBalance[]): void {
    this.memo.clear();
    const model = this.chain(chain);
    for (const seed of seeds) {
      const key = pairKey(seed.token, seed.holder);
      if (!model.seeds.has(key)) model.seeds.set(key, { ...seed });
    }
  }

  /** NEO global assets: their transfers (counted, moving nothing) and the outputs that make balances. */
  addNeoAssets(
    chain: string,
    assetTransfers: readonly TransferRecord[],
    outputsCreated: readonly Output[],
    outputsSpent: readonly Output[],
  ): void {
    this.memo.clear();
    const model = this.chain(chain);
    for (const t of assetTransfers) model.assets.add(t.token);
    for (const o of [...outputsCreated, ...outputsSpent]) model.assets.add(o.asset);
    model.transfers.push(...assetTransfers);
    model.created.push(...outputsCreated);
    model.spent.push(...outputsSpent);
  }

  /**
   * Records a rollback the store made: transfers above `toBlock` go; a token left without
   * transfers goes with its starting balances; other starting balances stay. (NEO chains are
   * never rolled back, so outputs are not.)
   */
  rollback(chain: string, toBlock: number): void {
    this.memo.clear();
    const model = this.chain(chain);
    model.transfers = model.transfers.filter((t) => t.blockNumber <= toBlock);
    model.changes = model.changes.filter((c) => c.blockNumber <= toBlock);
    const left = new Set([...model.transfers, ...model.changes].map((t) => t.token));
    for (const [key, seed] of model.seeds) if (!left.has(seed.token)) model.seeds.delete(key);
  }

  /** Tokens of the chain, ordered like `listTokens` (holderCount desc, transferCount desc, address asc). */
  tokens(chain: string): string[] {
    return [...this.cached(`tokens|${chain}`, () => this.orderTokens(chain))];
  }

  private orderTokens(chain: string): string[] {
    const model = this.chain(chain);
    const tokens = new Set([...model.transfers, ...model.changes].map((t) => t.token));
    for (const o of [...model.created, ...model.spent]) tokens.add(o.asset);
    const counts = new Map([...tokens].map((token) => [token, this.tokenCounts(chain, token)!]));
    return [...tokens].sort(
      (a, b) =>
        counts.get(b)!.holderCount - counts.get(a)!.holderCount ||
        counts.get(b)!.transferCount - counts.get(a)!.transferCount ||
        compareStrings(a, b),
    );
  }

  /** Every address any transfer, seed or output of the chain names (mint parties included), sorted. */
  addresses(chain: string): string[] {
    const model = this.chain(chain);
    const all = new Set<string>();
    for (const t of model.transfers) all.add(t.from).add(t.to);
    for (const c of model.changes) all.add(c.holder);
    for (const s of model.seeds.values()) all.add(s.holder);
    for (const o of [...model.created, ...model.spent]) all.add(o.address);
    return [...all].sort(compareStrings);
  }

  /** A token's holder and transfer counts (as of the checkpoint); null for a token the chain does not hold. */
  tokenCounts(chain: string, token: string): ModelTokenCounts | null {
    const model = this.chain(chain);
    const transferCount = model.transfers.filter((t) => t.token === token).length;
    const changed = model.changes.some((c) => c.token === token);
    if (transferCount === 0 && !changed && !this.hasOutputs(model, token)) return null;
    return { holderCount: this.holders(chain, token).length, transferCount };
  }

  /**
   * Every (holder, balance, transfer count) of a token with a non-zero balance or a transfer
   * naming it, by address: what `scanHoldings` must list (a store may add `{0n, 0}` rows).
   * Balances as of block `asOf` when given.
   */
  holdings(chain: string, token: string, asOf?: number): ({ holder: string } & AddressHolding)[] {
    return [...this.holdingMap(chain, token, asOf)]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([holder, holding]) => ({ holder, ...holding }));
  }

  /** What `getAddressHolding` answers: `{0n, 0}` when nothing names the pair. */
  holding(chain: string, address: string, token: string, asOf?: number): AddressHolding {
    const found = this.holdingMap(chain, token, asOf).get(address);
    return { balance: found?.balance ?? 0n, transferCount: found?.transferCount ?? 0 };
  }

  /** A token's holdings by address: every pair with a non-zero balance or a transfer naming it. */
  private holdingMap(chain: string, token: string, asOf: number | undefined): Map<string, AddressHolding> {
    return this.cached(`holdings|${chain}|${token}|${asOf}`, () => {
      const model = this.chain(chain);
      const balances = this.balances(chain, token, asOf);
      const counts = new Map<string, number>();
      for (const t of this.transfersUpTo(model, asOf)) {
        if (t.token !== token) continue;
        counts.set(t.from, (counts.get(t.from) ?? 0) + 1);
        if (t.to !== t.from) counts.set(t.to, (counts.get(t.to) ?? 0) + 1);
      }
      const out = new Map<string, AddressHolding>();
      for (const holder of new Set([...balances.keys(), ...counts.keys()])) {
        out.set(holder, { balance: balances.get(holder) ?? 0n, transferCount: counts.get(holder) ?? 0 });
      }
      return out;
    });
  }

  /** What `getBalance` answers. */
  balance(chain: string, token: string, address: string, asOf?: number): bigint {
    return this.balances(chain, token, asOf).get(address) ?? 0n;
  }

  /** Holders of a token in `listHolders` order (balances as of `asOf` when given). */
  holders(chain: string, token: string, asOf?: number): HolderEntry[] {
    return [...this.balances(chain, token, asOf)]
      .filter(([address, balance]) => balance > 0n && !NON_HOLDERS.has(address))
      .map(([address, balance]) => ({ address, balance }))
      .sort(compareHolders);
  }

  /**
   * What `listAddressBalances` answers, without the token records: the tokens `address` holds
   * (balance above zero as of `asOf`), ordered like `listTokens`; `[]` for the zero address and `""`.
   */
  addressBalances(chain: string, address: string, asOf?: number): ModelAddressBalance[] {
    if (NON_HOLDERS.has(address)) return [];
    const out: ModelAddressBalance[] = [];
    for (const token of this.tokens(chain)) {
      const holding = this.holding(chain, address, token, asOf);
      if (holding.balance > 0n) out.push({ token, ...holding });
    }
    return out;
  }

  /**
   * Every transfer naming `address` (a self-transfer once), of `token` or of every token when
   * null, newest first: what `listAddressTransfers` pages through; up to block `asOf` when given
   * (balances lag the checkpoint, and the address views with them).
   */
  addressTransfers(chain: string, address: string, token: string | null, asOf?: number): TransferRecord[] {
    return this.transfersUpTo(this.chain(chain), asOf)
      .filter((t) => (token === null || t.token === token) && (t.from === address || t.to === address))
      .sort(compareNewestFirst);
  }

  /** The sum of a token's balances without the zero address's (`StoreReader.getBalanceSum`), as of `asOf`. */
  balanceSum(chain: string, token: string, asOf?: number): bigint {
    let sum = 0n;
    for (const [holder, amount] of this.balances(chain, token, asOf))
      if (holder !== ZERO_ADDRESS) sum += amount;
    return sum;
  }

  private hasOutputs(model: ChainModel, token: string): boolean {
    return model.created.some((o) => o.asset === token) || model.spent.some((o) => o.asset === token);
  }

  private transfersUpTo(model: ChainModel, asOf: number | undefined): TransferRecord[] {
    return asOf === undefined ? model.transfers : model.transfers.filter((t) => t.blockNumber <= asOf);
  }

  /** Every non-zero balance of a token (mint parties included), as of `asOf` when given. */
  private balances(chain: string, token: string, asOf: number | undefined): Map<string, bigint> {
    return this.cached(`balances|${chain}|${token}|${asOf}`, () =>
      this.computeBalances(this.chain(chain), token, asOf),
    );
  }

  private computeBalances(model: ChainModel, token: string, asOf: number | undefined): Map<string, bigint> {
    const balances = new Map<string, bigint>();
    const add = (holder: string, amount: bigint): void => {
      balances.set(holder, (balances.get(holder) ?? 0n) + amount);
    };
    if (model.assets.has(token)) {
      const upTo = (o: Output) => o.asset === token && (asOf === undefined || o.blockNumber <= asOf);
      for (const o of model.created.filter(upTo)) add(o.address, o.value);
      for (const o of model.spent.filter(upTo)) add(o.address, -o.value);
    } else {
      for (const seed of model.seeds.values()) if (seed.token === token) add(seed.holder, seed.amount);
      for (const t of this.transfersUpTo(model, asOf)) {
        if (t.token !== token || t.from === t.to) continue;
        add(t.from, -t.value);
        add(t.to, t.value);
      }
      for (const c of model.changes) {
        if (c.token === token && (asOf === undefined || c.blockNumber <= asOf)) add(c.holder, c.amount);
      }
    }
    for (const [holder, amount] of balances) if (amount === 0n) balances.delete(holder);
    return balances;
  }
}
