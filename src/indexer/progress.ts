import type { Logger } from '../internal/logger.js';

/**
 * Backfill progress: blocks/s, transfers/s and ETA. On a TTY it draws a one-line bar on stderr;
 * otherwise it logs a structured line every `logIntervalMs`.
 */
export interface ProgressReporter {
  update(state: { block: number; transfers: number }): void;
  /** Clears the bar (if any) and logs a final summary. */
  finish(): void;
}

export interface ProgressOptions {
  chain: string;
  logger: Logger;
  startBlock: number;
  targetBlock: number;
  tty?: boolean;
  logIntervalMs?: number;
  /** Where the bar is drawn; stderr by default. */
  write?: (text: string) => void;
}

/** Catch-ups shorter than this many blocks show no progress (they end within a step or two). */
const MIN_REPORTED_BLOCKS = 1000;

/** A reporter for a catch-up from `startBlock` to `targetBlock`, or null when it is short. */
export function progressForCatchUp(options: ProgressOptions): ProgressReporter | null {
  return options.targetBlock - options.startBlock > MIN_REPORTED_BLOCKS
    ? createProgressReporter(options)
    : null;
}

export function createProgressReporter(options: ProgressOptions): ProgressReporter {
  const { chain, logger, startBlock } = options;
  const tty = options.tty ?? process.stderr.isTTY === true;
  const logIntervalMs = options.logIntervalMs ?? 10_000;
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  const started = Date.now();
  let targetBlock = options.targetBlock;
  let lastDraw = 0;
  let lastLog = started;
  let block = startBlock - 1;
  let transfers = 0;

  const rates = () => {
    const seconds = Math.max((Date.now() - started) / 1000, 1e-3);
    const blocksDone = Math.max(block - startBlock + 1, 0);
    const blocksPerSecond = blocksDone / seconds;
    const remaining = Math.max(targetBlock - block, 0);
    const etaSeconds = blocksPerSecond > 0 ? remaining / blocksPerSecond : null;
    return { seconds, blocksDone, blocksPerSecond, transfersPerSecond: transfers / seconds, etaSeconds };
  };

  return {
    update(state) {
      block = state.block;
      transfers = state.transfers;
      if (block > targetBlock) targetBlock = block;
      const now = Date.now();
      const r = rates();
      if (tty && now - lastDraw >= 200) {
        lastDraw = now;
        const total = Math.max(targetBlock - startBlock + 1, 1);
        const fraction = Math.min(r.blocksDone / total, 1);
        const width = 24;
        const filled = Math.round(fraction * width);
        const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
        write(
          `\r${chain} ${bar} ${(fraction * 100).toFixed(1)}% block ${block}/${targetBlock} ` +
            `${fmt(r.blocksPerSecond)} blk/s ${fmt(r.transfersPerSecond)} tx/s ETA ${eta(r.etaSeconds)}\x1b[K`,
        );
      } else if (!tty && now - lastLog >= logIntervalMs) {
        lastLog = now;
        logger.info(
          {
            chain,
            block,
            target: targetBlock,
            blocksPerSecond: Math.round(r.blocksPerSecond),
            transfersPerSecond: Math.round(r.transfersPerSecond),
            etaSeconds: r.etaSeconds === null ? null : Math.round(r.etaSeconds),
          },
          'backfill progress',
        );
      }
    },
    finish() {
      if (tty && lastDraw > 0) write('\r\x1b[K');
      const r = rates();
      logger.info(
        {
          chain,
          block,
          transfers,
          seconds: Number(r.seconds.toFixed(1)),
          blocksPerSecond: Math.round(r.blocksPerSecond),
          transfersPerSecond: Math.round(r.transfersPerSecond),
        },
        'backfill caught up',
      );
    },
  };
}

function fmt(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1)}k`;
  return n.toFixed(0);
}

function eta(seconds: number | null): string {
  if (seconds === null) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600)
    return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
