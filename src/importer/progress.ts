import type { Logger } from '../internal/logger.js';

/** Where a long import stands. */
export interface ImportProgressState {
  /** `reading` fills the sort file; `writing` commits to the store (with `--sorted` both at once). */
  phase: 'reading' | 'writing';
  /** Rows handled in this phase so far. */
  rows: number;
  /** Share of the phase done, 0 to 1, when known (bytes of the input read, or rows of the total). */
  fraction: number | null;
  /** Newest block committed, in the writing phase. */
  block?: number;
}

export interface ImportProgress {
  update(state: ImportProgressState): void;
  /** Clears the bar, if one is drawn. */
  finish(): void;
}

export interface ImportProgressOptions {
  logger: Logger;
  /** Draw a one-line bar on stderr (a TTY) instead of a log line every `logIntervalMs`. */
  tty: boolean;
  logIntervalMs?: number;
  write?: (text: string) => void;
}

/** Rows/s, share done and ETA, like the indexer's backfill progress (`indexer/progress.ts`). */
export function createImportProgress(options: ImportProgressOptions): ImportProgress {
  const { logger, tty } = options;
  const logIntervalMs = options.logIntervalMs ?? 10_000;
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  let phase: ImportProgressState['phase'] | null = null;
  let phaseStart = Date.now();
  let lastDraw = 0;
  let lastLog = Date.now();
  let drawn = false;

  return {
    update(state) {
      const now = Date.now();
      if (state.phase !== phase) {
        phase = state.phase;
        phaseStart = now;
        lastLog = now;
      }
      const seconds = Math.max((now - phaseStart) / 1000, 1e-3);
      const rate = state.rows / seconds;
      const eta =
        state.fraction !== null && state.fraction > 0.001
          ? (seconds * (1 - state.fraction)) / state.fraction
          : null;
      if (tty && now - lastDraw >= 200) {
        lastDraw = now;
        drawn = true;
        const pct = state.fraction === null ? '' : ` ${(state.fraction * 100).toFixed(1)}%`;
        const block = state.block === undefined ? '' : ` block ${state.block}`;
        write(
          `\rimport ${state.phase}${pct} ${fmt(state.rows)} rows ${fmt(rate)} rows/s${block} ETA ${etaText(eta)}\x1b[K`,
        );
      } else if (!tty && now - lastLog >= logIntervalMs) {
        lastLog = now;
        logger.info(
          {
            phase: state.phase,
            rows: state.rows,
            rowsPerSecond: Math.round(rate),
            percent: state.fraction === null ? null : Number((state.fraction * 100).toFixed(1)),
            ...(state.block === undefined ? {} : { block: state.block }),
            etaSeconds: eta === null ? null : Math.round(eta),
          },
          'import progress',
        );
      }
    },
    finish() {
      if (drawn) write('\r\x1b[K');
      drawn = false;
    },
  };
}

function fmt(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1)}k`;
  return n.toFixed(0);
}

function etaText(seconds: number | null): string {
  if (seconds === null) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600)
    return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
