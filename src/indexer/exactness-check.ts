/**
 * The exactness check (issue #18; decisions.md, "Exact balances for tokens that move balances
 * without a `Transfer` log"): run on the tokens whose supply the refresh has just read at the
 * checkpoint, it compares each token's summed stored balances with its `totalSupply()`, and where
 * they differ, samples `balanceOf` of a few holders at that block in one JSON-RPC batch. A token
 * is marked not exact when a sampled balance differs from the stored one, and its mark is cleared
 * when the sum matches or the sample is exact: WETH9, whose `totalSupply()` is its ether balance
 * (ether forced into it raises it) while its balances stay exact, is never marked.
 */
import { ZERO_ADDRESS } from '../internal/chains.js';
import { seededRandom } from '../internal/random.js';
import type { ExactnessUpdate, StoreWriter, SupplyUpdate } from '../store/types.js';

/**
 * Tokens with more holders than this are not summed: the sum is a scan of the token's balances
 * (a first version, not a running sum kept from the batches), bounded so that one refresh round
 * of 100 tokens reads at most a few million rows. Their mark is left as it is.
 */
export const EXACTNESS_MAX_HOLDERS = 20_000;
/** The largest holders sampled, the random others, and the negative stored balances. */
const LARGEST = 3;
const RANDOM = 3;
const NEGATIVE = 3;
const SCAN_PAGE = 5_000;
/** Checkpoints the stored side is read at before the round gives up (a batch committed during each). */
const ATTEMPTS = 3;

export interface ExactnessCheckOptions {
  chain: string;
  store: Pick<
    StoreWriter,
    'getToken' | 'getChainStatus' | 'getCheckpoint' | 'listHolders' | 'scanBalances' | 'negativeBalances'
  >;
  /** `totalSupply()` of `addresses` at `block` (when a batch committed during a check). */
  readSupplies(addresses: string[], block: number): Promise<SupplyUpdate[]>;
  /** `balanceOf` of `holders` of `token` at `block` (null where the call fails), in one JSON-RPC batch. */
  readBalances(token: string, holders: readonly string[], block: number): Promise<(bigint | null)[]>;
  /** Seed of the random sample (tests); default from the clock. */
  seed?: number;
  maxHolders?: number;
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
  const maxHolders = options.maxHolders ?? EXACTNESS_MAX_HOLDERS;
  const random = seededRandom(options.seed ?? Date.now());
  let nodeCalls = 0;

  /** Summed stored balances of `token` without the zero address; null when it has too many holders. */
  async function summedBalances(token: string): Promise<bigint | null> {
    let sum = 0n;
    let rows = 0;
    let after: string | null = null;
    for (;;) {
      const page = await store.scanBalances(chain, token, after, SCAN_PAGE);
      if (page.length === 0) return sum;
      for (const { holder, amount } of page) if (holder !== ZERO_ADDRESS) sum += amount;
      rows += page.length;
      // Every row is a holder or an address that held once: bounded by more than the holders.
      if (rows > maxHolders * 2) return null;
      after = page[page.length - 1]!.holder;
    }
  }

  /**
   * The largest holders, a few random others, and a few negative stored balances, with their
   * stored balances. The negative ones are what catches a token whose missed credits went out
   * again by `Transfer` (a Tether issue sent on, a WETH9 deposit transferred): its holders may all
   * be right while the senders are below zero, which `balanceOf` never is.
   */
  async function sampleOf(
    token: string,
    holderCount: number,
  ): Promise<{ address: string; balance: bigint }[]> {
    const sample = await store.listHolders(chain, token, 0, LARGEST);
    const offsets = new Set<number>();
    const others = holderCount - LARGEST;
    for (let i = 0; i < RANDOM && offsets.size < others; i++) {
      offsets.add(LARGEST + Math.floor(random() * others));
    }
    for (const offset of offsets) sample.push(...(await store.listHolders(chain, token, offset, 1)));
    for (const { holder, amount } of await store.negativeBalances(chain, token, NEGATIVE)) {
      sample.push({ address: holder, balance: amount });
    }
    return sample;
  }

  /**
   * The stored side of one token's check: `clear` when the sum matches the supply, a sample to
   * read on the node when it does not, null when the token is not checked this time.
   */
  async function storedSide(supply: SupplyUpdate): Promise<StoredSide | null> {
    if (supply.totalSupply === null) return null;
    const token = await store.getToken(chain, supply.address);
    if (token === null || token.holderCount > maxHolders) return null;
    const summed = await summedBalances(supply.address);
    if (summed === null) return null;
    if (summed === supply.totalSupply) return { address: supply.address, clear: true };
    const sample = await sampleOf(supply.address, token.holderCount);
    if (sample.length === 0) return null;
    return { address: supply.address, clear: false, drift: summed - supply.totalSupply, sample };
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
      // Each drifted token's sample in one JSON-RPC batch, at the block of the supplies.
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
