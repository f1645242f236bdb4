import { sleep } from '../../internal/async.js';
import type { Logger } from '../../internal/logger.js';
import { InvalidRpcResponseError } from './errors.js';

/**
 * A runner that repeats an attempt while it throws InvalidRpcResponseError (a malformed answer,
 * or one that is not there yet, such as a `null` block from a node that is behind), up to
 * `attempts` times with full-jitter backoff from `baseMs`, then lets the error through.
 * Shared by the EVM and NEO sources.
 */
export function createRetryInvalid(options: {
  logger: Logger;
  attempts: number;
  baseMs: number;
}): <T>(what: string, attempt: () => Promise<T>) => Promise<T> {
  const attempts = Math.max(1, options.attempts);
  return async <T>(what: string, attempt: () => Promise<T>): Promise<T> => {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof InvalidRpcResponseError) || n >= attempts) throw error;
        options.logger.debug(
          { what, attempt: n, reason: error.shortMessage },
          'invalid rpc answer, retrying',
        );
        await sleep(Math.random() * options.baseMs * 2 ** (n - 1));
      }
    }
  };
}
