/**
 * Starting balances for an index that starts late (`--from-block` after a token's first
 * transfers): each holder a transfer names for the first time is seeded with its `balanceOf` at
 * the block before the start, so balances and holder counts are exact from the start instead of
 * counting from zero. See `BatchSeeds` in store/types.ts for what the store does with them.
 */
import { MULTICALL3_ADDRESS } from '../chains/evm/abi.js';
import type { EvmSource, HolderRef } from '../chains/evm/types.js';
import { StateUnavailableError } from '../chains/jsonrpc/errors.js';
import { errorMessage } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import { NON_HOLDERS } from '../store/batch-plan.js';
import type { BatchSeeds, SeedBalance, StoreWriter, TransferRecord } from '../store/types.js';

export interface HolderSeeder {
  /**
   * The seeds of a batch holding `transfers`: the starting balances of the holders they name that
   * are not seeded yet. Read before the batch is built, so the reads overlap other fetching.
   * Undefined when the chain is not seeded.
   */
  seedsFor(
    transfers: readonly Pick<TransferRecord, 'token' | 'from' | 'to'>[],
  ): Promise<BatchSeeds | undefined>;
  /** After `seeds` committed: the store answers for them from now on. */
  committed(seeds: BatchSeeds | undefined): void;
}

export interface HolderSeederOptions {
  chain: string;
  source: EvmSource;
  store: StoreWriter;
  logger: Logger;
  /** The block the balances are read at (the start block − 1); null: the chain is not seeded. */
  seedBlock: number | null;
  /** The chain was already marked partial (the node had no state at `seedBlock`). */
  partial: boolean;
}

const key = (token: string, holder: string): string => `${token}:${holder}`;

/**
 * How long, and how many reads in a row, must find the seed block's state unavailable before the
 * chain is marked partial: "header not found" may also come from a node behind its load
 * balancer's others, for a moment. Meanwhile the step fails, is retried after a backoff, and
 * `/status` shows the error.
 */
const UNAVAILABLE_FOR_MS = 2_000;
const UNAVAILABLE_READS = 3;

export function createHolderSeeder(options: HolderSeederOptions): HolderSeeder {
  const { chain, source, store, logger, seedBlock } = options;
  let partial = options.partial;
  let unavailable = { reads: 0, since: 0 };
  /** Whether each token had code at the seed block: one that had none was created after it, and all its holders start at 0. */
  const existed = new Map<string, Promise<boolean>>();
  /** Whether Multicall3 had code at the seed block; read with the first tokens. */
  let multicall: Promise<boolean> | null = null;
  /**
   * Seeds being read or read but not committed yet: ranges fetched side by side often name the
   * same holders. A seed never changes (it is state at one old block), so a value read for a
   * batch that then failed serves its retry as well.
   */
  const reading = new Map<string, Promise<bigint>>();

  /** Which of `tokens` had code at the seed block; unknown ones (and Multicall3, once) in one batch. */
  async function existedAt(block: number, tokens: string[]): Promise<boolean[]> {
    const unknown = tokens.filter((t) => !existed.has(t));
    const withMulticall = multicall === null;
    if (unknown.length > 0 || withMulticall) {
      const asked = withMulticall ? [...unknown, MULTICALL3_ADDRESS] : unknown;
      const answer = source.hasCode(asked, block);
      unknown.forEach((token, i) => {
        const one = answer.then((codes) => codes[i]!);
        one.catch(() => existed.delete(token));
        existed.set(token, one);
      });
      if (withMulticall) {
        multicall = answer.then((codes) => codes[codes.length - 1]!);
        multicall.then(
          (has) => logger.info({ seedBlock: block, multicall: has }, 'seeding starting balances of holders'),
          () => {
            multicall = null;
          },
        );
      }
    }
    return Promise.all(tokens.map((t) => existed.get(t)!));
  }

  async function read(block: number, pairs: HolderRef[]): Promise<SeedBalance[]> {
    const useMulticall = await (multicall ?? Promise.resolve(false));
    // From here to the promises' collection nothing awaits, so no commit can forget one between.
    const fresh = pairs.filter((p) => !reading.has(key(p.token, p.holder)));
    if (fresh.length > 0) {
      const all = source.readBalancesAt(fresh, block, { multicall: useMulticall });
      fresh.forEach((pair, i) => {
        const k = key(pair.token, pair.holder);
        // A call that reverts has no balance to read: the holder starts at 0.
        const one = all.then((amounts) => amounts[i] ?? 0n);
        one.catch(() => reading.delete(k));
        reading.set(k, one);
      });
    }
    const pending = pairs.map((p) => reading.get(key(p.token, p.holder))!);
    const amounts = await Promise.all(pending);
    return pairs.map((p, i) => ({ token: p.token, holder: p.holder, amount: amounts[i]! }));
  }

  function markPartial(block: number, error: StateUnavailableError): void {
    if (partial) return;
    partial = true;
    reading.clear();
    logger.warn(
      { seedBlock: block, err: errorMessage(error) },
      'the node has no state at the block before --from-block: holders seen from now on start at 0, so holder counts and balances are partial (use an archive node and index again for exact ones)',
    );
  }

  return {
    async seedsFor(transfers) {
      if (seedBlock === null) return undefined;
      if (partial) return { block: seedBlock, balances: [], partial: true };
      const holders = new Map<string, Set<string>>();
      for (const t of transfers) {
        let set = holders.get(t.token);
        if (set === undefined) {
          set = new Set();
          holders.set(t.token, set);
        }
        if (!NON_HOLDERS.has(t.from)) set.add(t.from);
        if (!NON_HOLDERS.has(t.to)) set.add(t.to);
      }
      try {
        const tokens = [...holders.keys()];
        const codes = await existedAt(seedBlock, tokens);
        const candidates: HolderRef[] = [];
        tokens.forEach((token, i) => {
          if (!codes[i]) return;
          for (const holder of holders.get(token)!) candidates.push({ token, holder });
        });
        if (candidates.length === 0) return { block: seedBlock, balances: [], partial: false };
        const seeded = await store.seededHolders(chain, candidates);
        const balances = await read(
          seedBlock,
          candidates.filter((_, i) => !seeded[i]),
        );
        unavailable = { reads: 0, since: 0 };
        return { block: seedBlock, balances, partial: false };
      } catch (error) {
        if (!(error instanceof StateUnavailableError)) throw error;
        if (unavailable.reads++ === 0) unavailable.since = Date.now();
        if (unavailable.reads < UNAVAILABLE_READS || Date.now() - unavailable.since < UNAVAILABLE_FOR_MS)
          throw error;
        markPartial(seedBlock, error);
        return { block: seedBlock, balances: [], partial: true };
      }
    },
    committed(seeds) {
      for (const seed of seeds?.balances ?? []) reading.delete(key(seed.token, seed.holder));
    },
  };
}
