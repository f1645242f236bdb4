import { errorMessage } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { StoreWriter, SupplyUpdate } from '../store/types.js';
import type { ExactnessCheck } from './exactness-check.js';
import type { Reconcile } from './reconcile.js';
import { createSingleFlight } from './single-flight.js';

/** How often a chain's supplies are looked over even when no batch asks for it. */
const PERIODIC_REFRESH_MS = 10_000;

/**
 * A chain's supply refresh: single-flight, kicked after commits, never blocks indexing. Each
 * round re-reads the tokens whose supply was read more than `everyBlocks` before the checkpoint
 * (and any mark a failed read or a rollback left), at the checkpoint's block, then runs the
 * exactness check on them (when given), so the not-exact marks follow the head. With reconcile
 * mode on, a round of it (reconcile.ts) follows once no supply is left to read, and the tokens the
 * check marks are taken up by it.
 */
export interface SupplyRefresh {
  /** Starts a refresh, or asks the one in flight to go round once more. */
  kick(): void;
  /** Kicks unless the last periodic kick was less than 10 s ago (a chain that never idles must still get one). */
  kickIfDue(): void;
  /** Runs `fn` with the refresh held: no supply read may start or be recorded meanwhile (see SingleFlight.hold). */
  hold<T>(fn: () => Promise<T>): Promise<T>;
}

export interface SupplyRefreshOptions {
  chain: string;
  store: StoreWriter;
  logger: Logger;
  signal: AbortSignal;
  /** Re-read every token's supply at least this often, in blocks. */
  everyBlocks: number;
  /** The family's supply reads: the updates of `addresses`, recorded as read at `atBlock`. */
  read(addresses: string[], atBlock: number): Promise<SupplyUpdate[]>;
  /** Run on each round's supplies, and its marks recorded (EVM; exactness-check.ts). */
  exactness?: ExactnessCheck;
  /** Reconcile mode (EVM, `--reconcile`; reconcile.ts): takes up the marked tokens, runs after the reads. */
  reconcile?: Reconcile;
}

export function createSupplyRefresh(options: SupplyRefreshOptions): SupplyRefresh {
  const { chain, store, signal, everyBlocks, read } = options;
  let lastPeriodicKick = 0;
  const flight = createSingleFlight({ run: refresh, signal, logger: options.logger, what: 'supply refresh' });

  async function refresh(): Promise<void> {
    for (;;) {
      if (signal.aborted || flight.held) return;
      const checkpoint = await store.getCheckpoint(chain);
      if (!checkpoint) return;
      const addresses = await store.tokensNeedingSupply(chain, checkpoint.block - everyBlocks, 100);
      if (addresses.length === 0) {
        // Its corrections make their tokens' supplies be read again (and checked): go round.
        if (options.reconcile === undefined || !(await reconcileRound(options.reconcile))) return;
        continue;
      }
      const supplies = await read(addresses, checkpoint.block);
      await store.updateSupplies(chain, supplies);
      if (options.exactness !== undefined)
        await checkExactness(options.exactness, supplies, checkpoint.block);
    }
  }

  /**
   * Sets and clears the marks of `supplies`. A check that fails (a node without the state) is
   * logged and leaves the marks as they are until the tokens' next supply read.
   */
  async function checkExactness(
    check: ExactnessCheck,
    supplies: SupplyUpdate[],
    atBlock: number,
  ): Promise<void> {
    try {
      const updates = await check.check(supplies, atBlock);
      if (updates.length > 0 && !signal.aborted) await store.setExactness(chain, updates);
      options.reconcile?.adopt(updates.flatMap((u) => (u.mark === null ? [] : [u.address])));
    } catch (error) {
      if (signal.aborted) return;
      options.logger.warn(
        { chain, atBlock, err: errorMessage(error) },
        'exactness check failed; its tokens are checked again at their next supply read',
      );
    }
  }

  /**
   * One reconcile round; true when it wants another. One that fails (a node without the state) is
   * logged, and its work waits for the next kick.
   */
  async function reconcileRound(reconcile: Reconcile): Promise<boolean> {
    try {
      return await reconcile.round();
    } catch (error) {
      if (!signal.aborted) {
        options.logger.warn(
          { chain, err: errorMessage(error) },
          'reconcile round failed; retried at the next one',
        );
      }
      return false;
    }
  }

  return {
    kick: flight.kick,
    kickIfDue() {
      if (Date.now() - lastPeriodicKick > PERIODIC_REFRESH_MS) {
        lastPeriodicKick = Date.now();
        flight.kick();
      }
    },
    hold: (fn) => flight.hold(fn),
  };
}
