/**
 * The progress of a bulk load's build (bulk-build.ts): a line with the step, a percentage of the
 * chunks built and an ETA every few seconds (at a chunk's end), and each step's wall and CPU
 * seconds at debug level.
 */
import type { Logger } from '../../internal/logger.js';

/** How often the build logs its progress. */
const PROGRESS_EVERY_MS = 5_000;

export type BuildProgress = ReturnType<typeof createBuildProgress>;

/** The build's progress, counted in chunks (each a transaction: bulk-build.ts). */
export function createBuildProgress(logger: Logger) {
  let done = 0;
  let total = 1;
  let started = 0;
  let logged = 0;
  let current = { chain: '', step: '', rows: 0 };
  let stepStarted = 0;
  let stepWal = 0;
  let stepCpu = process.cpuUsage();
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
  const stepDone = (): void => {
    if (current.step === '') return;
    const cpu = process.cpuUsage(stepCpu);
    logger.debug(
      {
        chain: current.chain,
        step: current.step,
        seconds: Number(((performance.now() - stepStarted) / 1000).toFixed(2)),
        cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
        walAtCommitBytes: stepWal,
      },
      `bulk load build step done: ${current.step}`,
    );
  };
  return {
    /** Starts a build of `rows` rows in about `chunks` chunks. */
    start(chain: string, rows: number, chunks: number): void {
      done = 0;
      total = chunks;
      started = performance.now();
      logged = started;
      current = { chain, step: '', rows };
      logger.info(
        { chain, transfers: rows, chunks },
        `building the bulk load of ${rows} transfers in about ${chunks} transactions: sorted into the tables (SQLite's temporary files in SQLITE_TMPDIR, else TMPDIR, else /var/tmp or /tmp)`,
      );
    },
    /** Names the step the next chunk is of. */
    step(step: string): void {
      if (step === current.step) return;
      stepDone();
      current.step = step;
      stepStarted = performance.now();
      stepCpu = process.cpuUsage();
      stepWal = 0;
    },
    /** A chunk is committed, leaving a WAL of `walBytes` before its checkpoint. */
    chunkDone(walBytes: number): void {
      done++;
      stepWal = Math.max(stepWal, walBytes);
      if (performance.now() - logged >= PROGRESS_EVERY_MS) log();
    },
    /**
     * The build is done; `walPeak`: the largest WAL at a chunk's commit, before its checkpoint
     * (after the commit's automatic one: less than the chunk's peak when that ran).
     */
    finish(walPeak: number): void {
      stepDone();
      logger.info(
        {
          chain: current.chain,
          transfers: current.rows,
          chunks: done,
          seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
          walAtCommitBytes: walPeak,
        },
        `built the bulk load of ${current.rows} transfers in ${done} transactions (largest WAL at a commit ${Math.round(walPeak / 1e6)} MB)`,
      );
    },
  };
}
