/**
 * Chooses how many blocks to ask `eth_getLogs` for at once. Providers cap either the block
 * span or the result count; dense ranges must shrink and sparse ones should grow, so that each
 * request returns a useful, bounded number of logs.
 */
export interface RangePlanner {
  /** Block span for the next request. */
  readonly size: number;
  /** A request of `span` blocks returned `logs` logs: steer toward `targetLogs` per request. */
  observe(span: number, logs: number): void;
  /** The provider refused a span as too large or too many results: at most half of it next time. */
  refused(span: number): void;
}

export interface RangePlannerOptions {
  initial?: number;
  min?: number;
  max?: number;
  /** Logs per request to aim for. */
  targetLogs?: number;
}

export function createRangePlanner(options: RangePlannerOptions = {}): RangePlanner {
  const min = options.min ?? 1;
  const targetLogs = options.targetLogs ?? 5_000;
  let max = options.max ?? 100_000;
  let size = Math.min(options.initial ?? 1_000, max);

  const clamp = (n: number) => Math.max(min, Math.min(max, Math.floor(n)));

  return {
    get size() {
      return size;
    },
    observe(span, logs) {
      // Scale by how far off target this span was; damp growth to at most 2x per step so one
      // empty stretch does not jump straight into a dense one with a huge request.
      const ideal = logs === 0 ? span * 2 : (span * targetLogs) / logs;
      size = clamp(Math.min(ideal, span * 2, size * 2));
    },
    refused(span) {
      // A refusal is a hard limit of this provider: never go above it again.
      const half = Math.max(min, Math.floor(span / 2));
      max = Math.max(min, Math.min(max, half));
      size = clamp(Math.min(size, half));
    },
  };
}
