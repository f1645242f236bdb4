/** Progress lines of a long migration fill (a store upgraded in place, locked meanwhile). */
import type { Logger } from '../../internal/logger.js';

/** Progress lines at most this often. */
const PROGRESS_EVERY_MS = 5_000;

/**
 * A reporter of `done` of `total` work units of `migration`'s `step`: logs a percentage and an ETA,
 * at most every PROGRESS_EVERY_MS.
 */
export function migrationProgress(logger: Logger, migration: string, step: string, total: number) {
  const started = performance.now();
  let logged = started;
  return (done: number): void => {
    const now = performance.now();
    if (now - logged < PROGRESS_EVERY_MS || total === 0) return;
    logged = now;
    const fraction = Math.min(1, done / total);
    const elapsed = now - started;
    const etaSeconds = fraction > 0 ? Math.round((elapsed / fraction - elapsed) / 1000) : null;
    const percent = Math.floor(fraction * 1000) / 10;
    logger.info(
      { migration, step, percent, etaSeconds },
      `upgrading the database: ${step} ${percent}%${etaSeconds === null ? '' : `, about ${etaSeconds} s left`}`,
    );
  };
}
