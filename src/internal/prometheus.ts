/**
 * The Prometheus text exposition format (version 0.0.4), written by hand rather than with
 * prom-client, for two reasons. Recording must cost nothing measurable on the API's hot path:
 * here a series is a plain object made once, and an observation is a bucket search and three
 * additions, where prom-client hashes the label set on every observation. And the indexer's RPC
 * figures are counted in another thread (or process) and cross over as plain data, which these
 * series are. The format itself is small and stable:
 * https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 */

/** The exposition's content type. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Latency buckets, in seconds: from half a millisecond (a cached answer) to 10 s (a stuck node). */
export const LATENCY_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * One histogram series: per-bucket counts (not cumulative; the last slot is above every bound),
 * their sum and count. Plain data, so it can be posted between threads.
 */
export interface HistogramSeries {
  counts: number[];
  sum: number;
  count: number;
}

export function createHistogramSeries(buckets: readonly number[]): HistogramSeries {
  return { counts: new Array<number>(buckets.length + 1).fill(0), sum: 0, count: 0 };
}

/** Records one value: no allocation. */
export function observe(series: HistogramSeries, buckets: readonly number[], value: number): void {
  let i = 0;
  while (i < buckets.length && value > buckets[i]!) i++;
  series.counts[i]!++;
  series.sum += value;
  series.count++;
}

/** Adds `from` into `into` (same buckets). */
export function mergeHistogram(into: HistogramSeries, from: HistogramSeries): void {
  for (let i = 0; i < into.counts.length; i++) into.counts[i]! += from.counts[i] ?? 0;
  into.sum += from.sum;
  into.count += from.count;
}

/** A label value as the format quotes it: backslash, double quote and newline escaped. */
function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/**
 * The `{name="value",...}` text of a label set, made once per series (not per sample).
 * Label names are ours (`[a-z_]+`); values may be anything.
 */
export function labelText(labels: Readonly<Record<string, string>>): string {
  const parts = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

/** A sample value as the format writes it: integers plainly, `+Inf`, `-Inf`, `NaN`. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** Builds one exposition text. Every family is announced once, with its samples right after it. */
export interface Exposition {
  /** `# HELP` and `# TYPE` lines of a family. */
  family(name: string, type: MetricType, help: string): void;
  /** One sample line; `labels` is a `labelText` result. */
  sample(name: string, labels: string, value: number): void;
  /** The `_bucket`, `_sum` and `_count` lines of one histogram series. */
  histogram(name: string, labels: string, buckets: readonly number[], series: HistogramSeries): void;
  text(): string;
}

export function createExposition(): Exposition {
  const lines: string[] = [];
  return {
    family(name, type, help) {
      lines.push(
        `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`,
        `# TYPE ${name} ${type}`,
      );
    },
    sample(name, labels, value) {
      lines.push(`${name}${labels} ${formatValue(value)}`);
    },
    histogram(name, labels, buckets, series) {
      // `le` goes last in the label set: `{a="b"}` becomes `{a="b",le="0.1"}`.
      const open = labels === '' ? '{' : `${labels.slice(0, -1)},`;
      let cumulative = 0;
      for (let i = 0; i < buckets.length; i++) {
        cumulative += series.counts[i] ?? 0;
        lines.push(`${name}_bucket${open}le="${formatValue(buckets[i]!)}"} ${cumulative}`);
      }
      lines.push(`${name}_bucket${open}le="+Inf"} ${series.count}`);
      lines.push(`${name}_sum${labels} ${formatValue(series.sum)}`);
      lines.push(`${name}_count${labels} ${series.count}`);
    },
    text() {
      return `${lines.join('\n')}\n`;
    },
  };
}
