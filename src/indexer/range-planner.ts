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
  /**
   * The provider refused a span as too large or too many results: at most half of it next time,
   * and at most half from then on (a limit, probed again after 16 answers at it) unless a span
   * this large went through since the last refusal.
   */
  refused(span: number): void;
}

export interface RangePlannerOptions {
  initial?: number;
  min?: number;
  max?: number;
  /** Logs per request to aim for. */
  targetLogs?: number;
}

/** Answers at a refusal's cap before the planner tries twice the span again. */
const PROBE_AFTER = 16;

export function createRangePlanner(options: RangePlannerOptions = {}): RangePlanner {
  const min = options.min ?? 1;
  const targetLogs = options.targetLogs ?? 5_000;
  const ceiling = options.max ?? 100_000;
  let max = ceiling;
  let size = Math.min(options.initial ?? 1_000, max);

  const clamp = (n: number) => Math.max(min, Math.min(max, Math.floor(n)));
  /** Largest span answered since the last refusal. */
  let proven = 0;
  /** Answers in a row at the cap a refusal set. */
  let atCap = 0;

  return {
    get size() {
      return size;
    },
    observe(span, logs) {
      proven = Math.max(proven, span);
      // Probe above a cap after PROBE_AFTER answers at it: refusals that happen to come in a row
      // (several requests are in flight) must not shrink the span for good. A real limit costs
      // one refused request per probe.
      if (span >= max && max < ceiling && ++atCap >= PROBE_AFTER) {
        max = Math.min(ceiling, max * 2);
        atCap = 0;
      }
      // Scale by how far off target this span was; damp growth to at most 2x per step so one
      // empty stretch does not jump straight into a dense one with a huge request.
      const ideal = logs === 0 ? span * 2 : (span * targetLogs) / logs;
      size = clamp(Math.min(ideal, span * 2, size * 2));
    },
    refused(span) {
      const half = Math.max(min, Math.floor(span / 2));
      if (span <= proven) {
        // A span this large went through since the last refusal: a busy provider may refuse now
        // and then (seen under fault injection, where capping at every refusal ratcheted the
        // backfill down to one-block requests). Go smaller this time; a refusal before the next
        // success is taken as the provider's hard limit.
        proven = 0;
        size = clamp(Math.min(size, half));
        return;
      }
      // A refusal is a limit of this provider: stay below it (until the next probe).
      atCap = 0;
      max = Math.max(min, Math.min(max, half));
      size = clamp(Math.min(size, half));
    },
  };
}
