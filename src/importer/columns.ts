/**
 * The columns of a `token_transfers` export (ethereum-etl's `export_token_transfers` and
 * `stream`, BigQuery's `crypto_ethereum.token_transfers`), and the checks that turn one row of
 * untrusted text into an {@link ImportRow}. Every refusal names the file, the line and the column.
 */
import { UserError } from '../internal/errors.js';
import { quote } from './text.js';

/** Columns every row must have. */
export const REQUIRED_COLUMNS = [
  'token_address',
  'from_address',
  'to_address',
  'value',
  'transaction_hash',
  'log_index',
  'block_number',
] as const;

/** Columns that may be absent (or empty); what is missing is read from the node given with `--rpc`. */
export const OPTIONAL_COLUMNS = ['block_timestamp', 'transaction_index', 'block_hash'] as const;

export const COLUMNS = [...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS] as const;
export type Column = (typeof COLUMNS)[number];

/** Position of each column in the value arrays that readers hand to {@link parseRow}. */
export const COLUMN_INDEX: Readonly<Record<Column, number>> = Object.freeze(
  Object.fromEntries(COLUMNS.map((name, i) => [name, i])) as Record<Column, number>,
);

/** One transfer of the export, checked and normalized (lower-case hex, exact integer text). */
export interface ImportRow {
  blockNumber: number;
  logIndex: number;
  /** Token contract, `0x` + 40 lower-case hex. */
  token: string;
  from: string;
  to: string;
  /** Amount in raw units: decimal digits without leading zeros, at most 2^256 - 1. */
  value: string;
  txHash: string;
  /** Position of the transaction in its block, or null when the export lacks it. */
  txIndex: number | null;
  /** Block time in Unix seconds, or null when the export lacks it. */
  time: number | null;
  blockHash: string | null;
  /** Index of the input file (in the order given) and physical line, for messages. */
  file: number;
  line: number;
}

/** A fault in the input data; its message starts with `file:line` and names the column. */
export class ImportInputError extends UserError {
  override name = 'ImportInputError';
}

const MAX_UINT256 = ((1n << 256n) - 1n).toString();
const MAX_BLOCK = 2 ** 48;

/**
 * Checks one row. `values` holds the texts in {@link COLUMNS} order (`null` or `undefined` when
 * absent or empty); `where` is `file:line`. Throws {@link ImportInputError}.
 */
export function parseRow(
  values: readonly (string | null | undefined)[],
  where: string,
  file: number,
  line: number,
): ImportRow {
  const fail = (column: Column, problem: string): never => {
    throw new ImportInputError(`${where}: column ${column}: ${problem}`);
  };
  const text = (column: Column): string => {
    const value = values[COLUMN_INDEX[column]];
    if (value === null || value === undefined || value === '') return fail(column, 'missing');
    return value;
  };
  const optional = (column: Column): string | null => {
    const value = values[COLUMN_INDEX[column]];
    return value === null || value === undefined || value === '' ? null : value;
  };
  const hex = (column: Column, value: string, digits: number): string => {
    const kind = hexKind(value, digits);
    if (kind === 0) fail(column, `${quote(value)} is not 0x followed by ${digits} hex digits`);
    // Exports are lower-case already; a copy is made only for the rare upper-case one.
    return kind === 1 ? value : value.toLowerCase();
  };
  const integer = (column: Column, value: string, max: number): number => {
    if (!isDigits(value)) return fail(column, notAnInteger(value));
    const n = Number(value);
    if (n > max) fail(column, `${quote(value)} is out of range (at most ${max})`);
    return n;
  };

  const timeText = optional('block_timestamp');
  const txIndexText = optional('transaction_index');
  const blockHashText = optional('block_hash');
  let time: number | null = null;
  if (timeText !== null) {
    const parsed = parseTimestamp(timeText);
    if (typeof parsed === 'string') fail('block_timestamp', parsed);
    time = parsed as number;
  }
  return {
    blockNumber: integer('block_number', text('block_number'), MAX_BLOCK),
    logIndex: integer('log_index', text('log_index'), 2 ** 32),
    token: hex('token_address', text('token_address'), 40),
    from: hex('from_address', text('from_address'), 40),
    to: hex('to_address', text('to_address'), 40),
    value: parseAmount(text('value'), (problem) => fail('value', problem)),
    txHash: hex('transaction_hash', text('transaction_hash'), 64),
    txIndex: txIndexText === null ? null : integer('transaction_index', txIndexText, 2 ** 32),
    time,
    blockHash: blockHashText === null ? null : hex('block_hash', blockHashText, 64),
    file,
    line,
  };
}

/** Exact decimal text of a uint256 amount, or `fail` with the reason. */
function parseAmount(value: string, fail: (problem: string) => never): string {
  if (!isDigits(value)) return fail(notAnInteger(value));
  let start = 0;
  while (start < value.length - 1 && value.charCodeAt(start) === 48) start++;
  const digits = start === 0 ? value : value.slice(start);
  if (digits.length > MAX_UINT256.length || (digits.length === MAX_UINT256.length && digits > MAX_UINT256)) {
    fail(`${quote(value)} exceeds 2^256 - 1`);
  }
  return digits;
}

function notAnInteger(value: string): string {
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value)) {
    if (value.startsWith('-')) return `${quote(value)} is negative`;
    return `${quote(value)} is not an exact integer (a float or an exponent loses digits: export the column as decimal text)`;
  }
  return `${quote(value)} is not a decimal integer`;
}

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/;

/**
 * A block time: Unix seconds (ethereum-etl) or date text with a zone (BigQuery's
 * `2023-05-01 12:34:56 UTC`, ISO's `2023-05-01T12:34:56Z` or `+02:00`). Returns the Unix
 * seconds, or the reason it is refused.
 */
export function parseTimestamp(value: string): number | string {
  if (isDigits(value)) {
    const n = Number(value);
    // Unix seconds pass 10^11 only in the year 5138; a number that large is milliseconds.
    if (n >= 1e11) return `${quote(value)} is too large for Unix seconds (milliseconds?)`;
    return n;
  }
  const m = TIMESTAMP.exec(value);
  if (m === null) {
    if (/^\d+\.\d*$/.test(value)) return `${quote(value)} is not whole Unix seconds`;
    return `${quote(value)} is neither Unix seconds nor a date like 2023-05-01 12:34:56 UTC`;
  }
  const [, y, mo, d, h, mi, s, fraction, zone] = m;
  if (zone === undefined) return `${quote(value)} has no time zone (add UTC or Z)`;
  if (fraction !== undefined && /[1-9]/.test(fraction)) {
    return `${quote(value)} is not a whole second (block times are whole seconds)`;
  }
  const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = fields;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(ms);
  if (
    month < 1 ||
    month > 12 ||
    check.getUTCDate() !== day ||
    check.getUTCMonth() !== month - 1 ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return `${quote(value)} is not a valid date and time`;
  }
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'UTC') {
    const digits = zone.replace(':', '');
    offsetMinutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
    if (zone.startsWith('-')) offsetMinutes = -offsetMinutes;
  }
  const seconds = ms / 1000 - offsetMinutes * 60;
  if (seconds < 0) return `${quote(value)} is before 1970`;
  return seconds;
}

/** Per ASCII code: 1 for 0-9a-f, 2 for A-F, 0 for anything else. */
const HEX = new Uint8Array(128);
for (const c of '0123456789abcdef') HEX[c.charCodeAt(0)] = 1;
for (const c of 'ABCDEF') HEX[c.charCodeAt(0)] = 2;

/** 0 when `value` is not `0x` + `digits` hex digits; 1 when it is, in lower case; 3 when it has upper case. */
function hexKind(value: string, digits: number): number {
  if (value.length !== digits + 2 || value.charCodeAt(0) !== 48) return 0;
  const x = value.charCodeAt(1);
  let kinds = x === 120 ? 1 : x === 88 ? 2 : 0;
  if (kinds === 0) return 0;
  for (let i = 2; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const kind = c < 128 ? HEX[c]! : 0;
    if (kind === 0) return 0;
    kinds |= kind;
  }
  return kinds;
}

function isDigits(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
