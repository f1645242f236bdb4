/**
 * A small schema language for tokenquery's own JSON input, the config file. One definition
 * gives both the validator, which names the bad field and suggests the nearest valid key, and the
 * published JSON Schema (draft-07, what editors complete and check against), so the two cannot
 * drift. It covers what the config file needs and nothing more.
 */

/** String formats with a check the validator runs and a pattern the JSON Schema carries. */
export const STRING_FORMATS = {
  'http-url': {
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
    message: 'must be an http(s) URL',
  },
  'ws-url': {
    pattern: '^[Ww][Ss][Ss]?://',
    message: 'must be a ws:// or wss:// URL',
  },
  'postgres-url': {
    pattern: '^[Pp][Oo][Ss][Tt][Gg][Rr][Ee][Ss]([Qq][Ll])?://',
    message: 'must be a postgres:// connection string',
  },
  'redis-url': {
    pattern: '^[Rr][Ee][Dd][Ii][Ss][Ss]?://',
    message: 'must be a redis:// or rediss:// URL',
  },
} as const;
export type StringFormat = keyof typeof STRING_FORMATS;

interface Described {
  /** Shown in editors: what the field does, its default, its flag and variable. */
  description: string;
  /** The default, published in the JSON Schema (the loader applies it, not the validator). */
  default?: string | number;
}

export interface StringSchema extends Described {
  type: 'string';
  /** Default 1: an empty string is never a meaningful setting here. */
  minLength?: number;
  format?: StringFormat;
  /**
   * A check the flag's own parser makes (a rate such as `10/s`), so the file accepts exactly what
   * the flag does; returns the problem, if any. `pattern` is its syntax for the JSON Schema.
   */
  check?: (value: string) => string | undefined;
  pattern?: string;
}

export interface IntegerSchema extends Described {
  type: 'integer';
  minimum: number;
  maximum: number;
}

export interface BooleanSchema extends Described {
  type: 'boolean';
}

export interface EnumSchema extends Described {
  type: 'enum';
  values: readonly string[];
}

export interface ArraySchema extends Described {
  type: 'array';
  items: Schema;
}

export interface ObjectSchema extends Described {
  type: 'object';
  properties: Readonly<Record<string, Schema>>;
  /** What a key of this object is, in messages: `unknown chain` rather than `unknown key`. */
  keyNoun?: string;
  /** Keys that users plausibly write here but belong elsewhere: key → where it goes. */
  moved?: Readonly<Record<string, string>>;
}

/** One of several forms (a hop count or a list of proxies). */
export interface OneOfSchema extends Described {
  type: 'oneOf';
  options: readonly Schema[];
  /** The forms, in messages: `a hop count (integer) or a list of CIDRs`. */
  expected: string;
}

export type Schema =
  | StringSchema
  | IntegerSchema
  | BooleanSchema
  | EnumSchema
  | ArraySchema
  | ObjectSchema
  | OneOfSchema;

/** One thing wrong with the input: where (`chains.eth.rpc`) and what. */
export interface Problem {
  path: string;
  message: string;
}

/** `a.b`, `a[2]`; the root is `(top level)`. */
function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}

/**
 * Checks `value` against `schema` and returns every problem found, in document order. String
 * values are never quoted back: they may be URLs with credentials.
 */
export function validate(schema: Schema, value: unknown, path = ''): Problem[] {
  const problems: Problem[] = [];
  const add = (at: string, message: string): void => {
    problems.push({ path: at || '(top level)', message });
  };
  const check = (s: Schema, v: unknown, at: string): void => {
    const problem = typeProblem(s, v);
    if (problem !== undefined) {
      add(at, problem);
    } else if (s.type === 'oneOf') {
      const fits = s.options.find((option) => validate(option, v).length === 0);
      // The form the value has (its JSON type) says which form's problems to show.
      const near = s.options.find((option) => sameKind(option, v));
      if (fits === undefined && near !== undefined) check(near, v, at);
      else if (fits === undefined) add(at, `must be ${s.expected}, got ${describeType(v)}`);
    } else if (s.type === 'array') {
      for (let i = 0; i < (v as unknown[]).length; i++) check(s.items, (v as unknown[])[i], join(at, i));
    } else if (s.type === 'object') {
      const known = Object.keys(s.properties);
      for (const [key, item] of Object.entries(v as object)) {
        const property = s.properties[key];
        if (property !== undefined) {
          check(property, item, join(at, key));
          continue;
        }
        const noun = s.keyNoun ?? 'key';
        const moved = s.moved?.[key];
        const hint = nearest(key, known);
        add(
          join(at, key.slice(0, 60)),
          moved !== undefined
            ? `unknown ${noun}: it goes in ${moved}`
            : hint !== undefined
              ? `unknown ${noun} (did you mean "${hint}"?)`
              : `unknown ${noun} (known: ${known.join(', ')})`,
        );
      }
    }
  };
  check(schema, value, path);
  return problems;
}

/** Whether `v` has the JSON type of `s` (an integer for `integer`, and so on), whatever its value. */
function sameKind(s: Schema, v: unknown): boolean {
  switch (s.type) {
    case 'string':
    case 'enum':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'oneOf':
      return s.options.some((option) => sameKind(option, v));
  }
}

/** What is wrong with `v` itself (its type, range, format), not counting what it contains. */
function typeProblem(s: Schema, v: unknown): string | undefined {
  switch (s.type) {
    case 'string':
      if (typeof v !== 'string') return `must be a string, got ${describeType(v)}`;
      if (v.length < (s.minLength ?? 1)) return 'must not be empty';
      if (s.format !== undefined && !matchesFormat(s.format, v)) return STRING_FORMATS[s.format].message;
      return s.check?.(v);
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) return `must be an integer, got ${describeType(v)}`;
      if (v < s.minimum || v > s.maximum) return `must be between ${s.minimum} and ${s.maximum}, got ${v}`;
      return undefined;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `must be true or false, got ${describeType(v)}`;
    case 'enum': {
      if (typeof v === 'string' && s.values.includes(v)) return undefined;
      const got = typeof v === 'string' ? `"${v.slice(0, 40)}"` : describeType(v);
      const hint = typeof v === 'string' ? nearest(v, s.values) : undefined;
      return `must be one of ${s.values.join(', ')}, got ${got}${hint ? ` (did you mean "${hint}"?)` : ''}`;
    }
    case 'array':
      return Array.isArray(v) ? undefined : `must be an array, got ${describeType(v)}`;
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v)
        ? undefined
        : `must be an object, got ${describeType(v)}`;
    case 'oneOf':
      return undefined;
  }
}

function matchesFormat(format: StringFormat, value: string): boolean {
  if (!new RegExp(STRING_FORMATS[format].pattern).test(value)) return false;
  try {
    const url = new URL(value);
    return url.hostname !== '' || format === 'postgres-url';
  } catch {
    return false;
  }
}

/**
 * The candidate closest to `input`, if it is close enough to be what was meant: the same word
 * written in another case or with `-`/`_` (`from_block` → `fromBlock`), one that starts the other,
 * or one within a few edits.
 */
export function nearest(input: string, candidates: readonly string[]): string | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  const folded = fold(input);
  const same = candidates.find((c) => fold(c) === folded);
  if (same !== undefined) return same;
  // `warning` for `warn`, `pollInterval` for `pollIntervalMs`.
  const extended = candidates.find((c) => {
    const f = fold(c);
    return Math.min(f.length, folded.length) >= 4 && (f.startsWith(folded) || folded.startsWith(f));
  });
  if (extended !== undefined) return extended;
  let best: string | undefined;
  // Two edits turn any two-letter word into any other: short words get one.
  let bestDistance = (input.length <= 3 ? 1 : Math.max(2, Math.floor(input.length / 3))) + 1;
  for (const candidate of candidates) {
    const d = editDistance(folded, fold(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1. */
export function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.max(a.length, b.length);
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
      }
    }
  }
  return d[a.length]![b.length]!;
}

/** The JSON Schema (draft-07) of `schema`. */
export function toJsonSchema(schema: Schema): Record<string, unknown> {
  const common = {
    description: schema.description,
    ...(schema.default === undefined ? {} : { default: schema.default }),
  };
  switch (schema.type) {
    case 'string':
      return {
        type: 'string',
        ...common,
        minLength: schema.minLength ?? 1,
        ...(schema.format === undefined
          ? {}
          : { format: 'uri', pattern: STRING_FORMATS[schema.format].pattern }),
        ...(schema.pattern === undefined ? {} : { pattern: schema.pattern }),
      };
    case 'oneOf':
      return { ...common, oneOf: schema.options.map(toJsonSchema) };
    case 'integer':
      return { type: 'integer', ...common, minimum: schema.minimum, maximum: schema.maximum };
    case 'boolean':
      return { type: 'boolean', ...common };
    case 'enum':
      return { type: 'string', ...common, enum: [...schema.values] };
    case 'array':
      return { type: 'array', ...common, items: toJsonSchema(schema.items) };
    case 'object':
      return {
        type: 'object',
        ...common,
        properties: Object.fromEntries(
          Object.entries(schema.properties).map(([key, value]) => [key, toJsonSchema(value)]),
        ),
        additionalProperties: false,
      };
  }
}
