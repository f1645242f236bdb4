/**
 * The progress of a bulk load's build (bulk-load.ts): a line with a percentage and an ETA every few
 * seconds, counted by `tq_tick()`, which the build's queries call once every TICK_EVERY rows they
 * read of the load, and each step's wall and CPU seconds at debug level.
 */
import type Database from 'better-sqlite3';
import type { Logger } from '../../internal/logger.js';

/** Rows of the load per `tq_tick()` call (a power of two: the queries test the rowid's low bits). */
export const TICK_EVERY = 1024;

/** How often the build logs its progress. */
const PROGRESS_EVERY_MS = 5_000;

/**
 * The build's progress, logged with a percentage and an ETA: `tq_tick()`, called by each step for
 * every row it reads of the load, counts the work done (the sorts' merges after their reads are
 * not counted, so the ETA is a lower bound while one runs).
 */
export function createBuildProgress(db: Database.Database, logger: Logger) {
  let done = 0;
  let total = 0;
  let started = 0;
  let logged = 0;
  let current = { chain: '', step: '', rows: 0 };
  let endStep = (): void => {};
  const log = (): void => {
    const now = performance.now();
    logged = now;
    const fraction = Math.min(done / Math.max(total, 1), 1);
    const elapsed = (now - started) / 1000;
    const etaSeconds = fraction > 0 ? Math.round(elapsed / fraction - elapsed) : null;
    const percent = Math.floor(fraction * 1000) / 10;
    logger.info(
      { chain: current.chain, step: current.step, percent, etaSeconds },
      `building the bulk load of ${current.rows} transfers: ${current.step}, ${percent}%${etaSeconds === null ? '' : `, about ${etaSeconds} s left`}`,
    );
  };
  db.function('tq_tick', { deterministic: false }, () => {
    done += TICK_EVERY;
    // The clock only every 65,536 rows.
    if ((done & 0xffff) === 0 && performance.now() - logged >= PROGRESS_EVERY_MS) log();
    return 1;
  });
  return {
    /** Starts a build of `rows` rows and `work` ticks; returns the function that names each step. */
    start(chain: string, rows: number, work: number) {
      done = 0;
      total = work;
      started = performance.now();
      logged = started;
      current = { chain, step: '', rows };
      logger.info(
        { chain, transfers: rows },
        `building the bulk load of ${rows} transfers: sorted into the tables (temporary files in the system's temporary directory)`,
      );
      let stepStarted = started;
      let stepCpu = process.cpuUsage();
      const stepDone = (): void => {
        if (current.step === '') return;
        const cpu = process.cpuUsage(stepCpu);
        logger.debug(
          {
            chain,
            step: current.step,
            seconds: Number(((performance.now() - stepStarted) / 1000).toFixed(2)),
            cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
          },
          `bulk load build step done: ${current.step}`,
        );
      };
      endStep = stepDone;
      return (step: string) => {
        stepDone();
        current.step = step;
        stepStarted = performance.now();
        stepCpu = process.cpuUsage();
      };
    },
    finish(): void {
      endStep();
      logger.info(
        {
          chain: current.chain,
          transfers: current.rows,
          seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
        },
        `built the bulk load of ${current.rows} transfers`,
      );
    },
  };
}
