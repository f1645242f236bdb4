/**
 * The exactness check (issue #18; decisions.md, "Exact balances for tokens that move balances
 * without a `Transfer` log"): run on the tokens whose supply the refresh has just read at the
 * checkpoint, it compares each token's summed stored balances with its `totalSupply()`, and where
 * they differ, samples `balanceOf` of a few holders at that block in one JSON-RPC batch; where
 * they match, of its largest holders only (a reflection token's logs keep the sum equal to the
 * supply while every holder's `balanceOf` grows). A token is marked not exact when a sampled
 * balance differs from the stored one, and its mark is cleared when the sample is exact (or there
 * is nothing to sample and the sum matches): WETH9, whose `totalSupply()` is its ether balance
 * (ether forced into it raises it) while its balances stay exact, is never marked. The summed
 * balances are the store's running sum (`getBalanceSum`, one row), so a token of any number of
 * holders is checked at the same cost.
 */
import { seededRandom } from '../internal/random.js';
import type { ExactnessUpdate, StoreWriter, SupplyUpdate } from '../store/types.js';

/** The largest holders sampled, the random others, and the negative stored balances. */
const LARGEST = 3;
const RANDOM = 3;
const NEGATIVE = 3;
/** Checkpoints the stored side is read at before the round gives up (a batch committed during each). */
const ATTEMPTS = 3;

export interface ExactnessCheckOptions {
  chain: string;
  store: Pick<
    StoreWriter,
    'getToken' | 'getChainStatus' | 'getCheckpoint' | 'listHolders' | 'getBalanceSum' | 'negativeBalances'
  >;
  /** `totalSupply()` of `addresses` at `block` (when a batch committed during a check). */
  readSupplies(addresses: string[], block: number): Promise<SupplyUpdate[]>;
  /** `balanceOf` of `holders` of `token` at `block` (null where the call fails), in one JSON-RPC batch. */
  readBalances(token: string, holders: readonly string[], block: number): Promise<(bigint | null)[]>;
  /** Seed of the random sample (tests); default from the clock. */
  seed?: number;
}

export interface ExactnessCheck {
  /**
   * The marks to set or clear for `supplies` (read at `atBlock`, the checkpoint). Empty while a
   * backfill defers balances (they are not those of the checkpoint), or when a batch committed
   * during each of three attempts: the tokens are checked again at their next supply read.
   */
  check(supplies: readonly SupplyUpdate[], atBlock: number): Promise<ExactnessUpdate[]>;
  /** Node calls made so far (`balanceOf` reads), for the cost figures. */
  readonly nodeCalls: number;
}

type StoredSide =
  | { address: string; clear: true }
  | { address: string; clear: false; drift: bigint; sample: { address: string; balance: bigint }[] };

export function createExactnessCheck(options: ExactnessCheckOptions): ExactnessCheck {
  const { chain, store } = options;
  const random = seededRandom(options.seed ?? Date.now());
  let nodeCalls = 0;

  /**
   * The largest holders, a few random others (`random` of them), and a few negative stored
   * balances, with their stored balances. The negative ones are what catches a token whose missed
   * credits went out again by `Transfer` (a Tether issue sent on, a WETH9 deposit transferred): its
   * holders may all be right while the senders are below zero, which `balanceOf` never is.
   */
  async function sampleOf(
    token: string,
    holderCount: number,
    randomOthers: number,
  ): Promise<{ address: string; balance: bigint }[]> {
    const sample = await store.listHolders(chain, token, 0, LARGEST);
    const offsets = new Set<number>();
    const others = holderCount - LARGEST;
    for (let i = 0; i < randomOthers && offsets.size < others; i++) {
      offsets.add(LARGEST + Math.floor(random() * others));
    }
    for (const offset of offsets) sample.push(...(await store.listHolders(chain, token, offset, 1)));
    for (const { holder, amount } of await store.negativeBalances(chain, token, NEGATIVE)) {
      sample.push({ address: holder, balance: amount });
    }
    return sample;
  }

  /**
   * The stored side of one token's check: the sample to read on the node (the largest holders
   * only when the sum matches the supply: the check of a token that looks exact costs 3 calls),
   * `clear` when the sum matches and there is nobody to sample, null when the token is not
   * checked this time.
   */
  async function storedSide(supply: SupplyUpdate): Promise<StoredSide | null> {
    if (supply.totalSupply === null) return null;
    const token = await store.getToken(chain, supply.address);
    if (token === null) return null;
    // Summed stored balances without the zero address's: the store's running sum.
    const summed = await store.getBalanceSum(chain, supply.address);
    if (summed === null) return null;
    const drift = summed - supply.totalSupply;
    const sample = await sampleOf(supply.address, token.holderCount, drift === 0n ? 0 : RANDOM);
    if (sample.length === 0) return drift === 0n ? { address: supply.address, clear: true } : null;
    return { address: supply.address, clear: false, drift, sample };
  }

  return {
    get nodeCalls() {
      return nodeCalls;
    },
    async check(supplies, atBlock) {
      const status = await store.getChainStatus(chain);
      if (status?.balancesBlock !== undefined) return [];
      // The stored side is that of `block` only if no batch committed while it was read; when one
      // did, the supplies are read again at the new checkpoint and the stored side with them (a
      // skipped token would wait for its next supply read, `everyBlocks` later).
      let block = atBlock;
      let current: readonly SupplyUpdate[] = supplies;
      let sides: StoredSide[] | null = null;
      for (let attempt = 0; attempt < ATTEMPTS && sides === null; attempt++) {
        const read: StoredSide[] = [];
        for (const supply of current) {
          const side = await storedSide(supply);
          if (side !== null) read.push(side);
        }
        const now = (await store.getCheckpoint(chain))?.block;
        if (now === block) sides = read;
        else if (now === undefined) return [];
        else {
          block = now;
          current = await options.readSupplies(
            supplies.map((s) => s.address),
            block,
          );
        }
      }
      if (sides === null) return [];
      const atCheck = block;
      const updates: ExactnessUpdate[] = [];
      const toSample: Extract<StoredSide, { clear: false }>[] = [];
      for (const side of sides) {
        if (side.clear) updates.push({ address: side.address, mark: null });
        else toSample.push(side);
      }
      // Each token's sample in one JSON-RPC batch, at the block of the supplies.
      for (const { address, drift, sample } of toSample) {
        nodeCalls += sample.length;
        const onNode = await options.readBalances(
          address,
          sample.map((h) => h.address),
          atCheck,
        );
        let sampled = 0;
        let differing = 0;
        sample.forEach((holder, i) => {
          const node = onNode[i] ?? null;
          if (node === null) return;
          sampled++;
          if (node !== holder.balance) differing++;
        });
        if (sampled === 0) continue;
        updates.push({
          address,
          mark: differing === 0 ? null : { atBlock: atCheck, supplyDrift: drift, sampled, differing },
        });
      }
      return updates;
    },
  };
}
