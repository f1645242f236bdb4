/**
 * A strict reader of the Prometheus text format (0.0.4) for tests, written from the format's
 * description, independently of the writer (internal/prometheus.ts): every line must parse,
 * every sample must follow its family's `# TYPE`, no series may repeat, and each histogram must
 * be whole (ascending `le`, cumulative counts, `+Inf` equal to `_count`, a `_sum`). Any breach
 * throws with the line number.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: bad value "${text}"`);
  return Number(text);
}

/** Parses `{a="b",c="d"}` starting at `text[0] === '{'`; returns the labels and the rest. */
function parseLabels(text: string, where: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  for (;;) {
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf('=', i);
    if (eq === -1) throw new Error(`${where}: unterminated label set`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`${where}: bad label name "${name}"`);
    if (name in labels) throw new Error(`${where}: label ${name} repeated`);
    if (text[eq + 1] !== '"') throw new Error(`${where}: label ${name} value is not quoted`);
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = text[j];
      if (c === undefined) throw new Error(`${where}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[j + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`${where}: bad escape \\${next}`);
        j += 2;
        continue;
      }
      if (c === '\n') throw new Error(`${where}: raw newline in label value`);
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`${where}: expected , or } after label ${name}`);
  }
}

/** The family a sample name belongs to, given the family's type. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(name);
  if (direct !== undefined && direct.type !== 'histogram' && direct.type !== 'summary') return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const family = families.get(name.slice(0, -suffix.length));
    if (family?.type === 'histogram') return family;
    if (family?.type === 'summary' && suffix !== '_bucket') return family;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  let current: Family | undefined;
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1}`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (m === null) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`${where}: bad metric name "${name}"`);
      let family = families.get(name);
      if (family === undefined) {
        family = { name, type: 'untyped', help: '', samples: [] };
        families.set(name, family);
      } else if (family.samples.length > 0) {
        throw new Error(`${where}: ${kind} of ${name} after its samples`);
      }
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type "${rest}"`);
        family.type = rest as Family['type'];
      } else {
        family.help = rest.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      }
      current = family;
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (nameMatch === null) throw new Error(`${where}: no metric name`);
    const name = nameMatch[0];
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, where));
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) {
      throw new Error(`${where}: expected " value [timestamp]"`);
    }
    const value = parseValue(parts[0]!, where);
    const family = familyOf(name, families);
    if (family === undefined) throw new Error(`${where}: sample ${name} has no # TYPE`);
    if (family !== current)
      throw new Error(`${where}: sample ${name} is not next to its family's other lines`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`${where}: series ${key} repeated`);
    seen.add(key);
    if (family.type === 'counter' && !(value >= 0)) throw new Error(`${where}: counter ${name} is ${value}`);
    family.samples.push({ name, labels, value });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let group = groups.get(key);
    if (group === undefined) {
      group = { buckets: [] };
      groups.set(key, group);
    }
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      group.buckets.push([parseValue(le, family.name), sample.value]);
    } else if (sample.name.endsWith('_sum')) group.sum = sample.value;
    else group.count = sample.value;
  }
  for (const [key, group] of groups) {
    const where = `${family.name}${key}`;
    if (group.sum === undefined || group.count === undefined) throw new Error(`${where}: no _sum or _count`);
    const last = group.buckets.at(-1);
    if (last === undefined || last[0] !== Number.POSITIVE_INFINITY)
      throw new Error(`${where}: no +Inf bucket`);
    if (last[1] !== group.count) throw new Error(`${where}: +Inf bucket ${last[1]} ≠ _count ${group.count}`);
    for (let i = 1; i < group.buckets.length; i++) {
      const [le, n] = group.buckets[i]!;
      const [prevLe, prevN] = group.buckets[i - 1]!;
      if (!(le > prevLe)) throw new Error(`${where}: le not ascending`);
      if (n < prevN) throw new Error(`${where}: bucket counts not cumulative`);
    }
  }
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      if (Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) return sample.value;
    }
  }
  return undefined;
}
