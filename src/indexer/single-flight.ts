import { errorMessage } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';

/** Background work that runs at most once at a time (the indexers' supply refresh). */
export interface SingleFlight {
  /** Starts the work, or asks the run in flight to go round once more. Never blocks. */
  kick(): void;
  /**
   * Runs `fn` with the work held: the run in flight is awaited first, and no run starts until
   * `fn` has finished (a rollback must not interleave with a supply read). Kicks meanwhile are
   * remembered; call `kick()` afterwards to act on them.
   */
  hold<T>(fn: () => Promise<T>): Promise<T>;
  /** True while `hold` runs: the work should stop at its next step. */
  readonly held: boolean;
}

export interface SingleFlightOptions {
  run: () => Promise<void>;
  signal: AbortSignal;
  logger: Logger;
  /** What the work is, for the warning when it fails. */
  what: string;
  /** After a failure, kicked again this much later. Default 1,000 ms. */
  retryMs?: number;
}

export function createSingleFlight(options: SingleFlightOptions): SingleFlight {
  const { run, signal, logger, what } = options;
  const retryMs = options.retryMs ?? 1_000;
  /** The run in flight (it never rejects), or null. */
  let running: Promise<void> | null = null;
  let again = false;
  let held = false;

  function kick(): void {
    if (running !== null || held) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await run();
        } while (again && !signal.aborted && !held);
      } catch (error) {
        logger.warn({ err: errorMessage(error) }, `${what} failed; retrying in ${retryMs} ms`);
        // Not only after the next kick: what follows may never kick (a chain whose new blocks
        // touch no supply), and work left undone must not wait for a periodic kick.
        if (!signal.aborted) setTimeout(kick, retryMs).unref();
      } finally {
        running = null;
      }
    })();
  }

  return {
    kick,
    async hold<T>(fn: () => Promise<T>): Promise<T> {
      held = true;
      try {
        await running;
        return await fn();
      } finally {
        held = false;
      }
    },
    get held() {
      return held;
    },
  };
}
