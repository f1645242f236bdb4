import { sleep } from '../async.js';

/**
 * Polls `probe` every `intervalMs` until it returns a value other than undefined, and returns it.
 * After `timeoutMs` rejects naming `what` and the last error `probe` threw, if any: a probe may
 * throw while what it reads is still coming up.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** Polls `condition` until it holds; `eventually` for a yes/no question. */
export async function waitFor(
  what: string,
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
  intervalMs = 25,
): Promise<void> {
  await eventually(async () => ((await condition()) ? true : undefined), timeoutMs, what, intervalMs);
}
