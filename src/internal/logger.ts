import { pino } from 'pino';

/** Structured JSON logger (pino). One per process; components take a child with a `component` field. */
export type Logger = pino.Logger;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * Logs go to stderr so that stdout stays clean for command output
 * (for example `keys create`, whose last line is the key).
 */
export function createLogger(options: { level?: LogLevel } = {}): Logger {
  return pino(
    {
      level: options.level ?? (process.env.TOKENQUERY_LOG_LEVEL as LogLevel | undefined) ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: 2, sync: false }),
  );
}

/** A logger that drops everything; for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
