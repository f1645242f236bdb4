/**
 * Compact, exact encodings for SQLite columns. SQLite columns are dynamically typed, so one
 * column can hold a BLOB for the common case and TEXT or INTEGER for the rest; every encoding
 * here is injective and decodes to exactly the value it was given. Also the rows the store's
 * statements answer, and how they become the records of `../types.ts`.
 */
import { NON_HOLDERS } from '../batch-plan.js';
import { decodeChainStatus } from '../rows.js';
import type { ChainStatus, TokenRecord } from '../types.js';

/** What a dynamically typed column hands back through better-sqlite3. */
export type SqlValue = Buffer | string | number | bigint | null;

const LOWER_HEX = /^0x(?:[0-9a-f]{2})+$/;

/**
 * `0x` + lower-case, even-length hex → BLOB of its bytes (an address takes 20 bytes instead of 42).
 * Anything else (NEO base58 addresses, `""`, upper-case or odd-length hex) stays TEXT, so it
 * round-trips unchanged and can never collide with a BLOB.
 */
export function encodeHex(value: string): Buffer | string {
  return LOWER_HEX.test(value) ? Buffer.from(value.slice(2), 'hex') : value;
}

/** Inverse of {@link encodeHex}. */
export function decodeHex(value: SqlValue): string {
  if (Buffer.isBuffer(value)) return `0x${value.toString('hex')}`;
  if (typeof value === 'string') return value;
  throw new TypeError(`unexpected stored address/hash of type ${typeof value}`);
}

/**
 * Amount → the smallest exact representation:
 * - |v| ≤ 2^53 − 1: INTEGER (SQLite stores 0 and 1 in zero payload bytes, others in 1–8);
 * - larger positive: big-endian BLOB without leading zero bytes (2^256 − 1 takes 32 bytes);
 * - larger negative (a balance while history starts late): decimal TEXT.
 */
export function encodeAmount(value: bigint): bigint | Buffer | string {
  // Bound as a BigInt so better-sqlite3 binds an INTEGER; a JS number would be bound as an 8-byte REAL.
  // Reads return it as a number, exact because it stays within 2^53.
  if (value <= 9007199254740991n && value >= -9007199254740991n) return value;
  if (value < 0n) return value.toString();
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
}

/** Inverse of {@link encodeAmount}. */
export function decodeAmount(value: SqlValue): bigint {
  if (typeof value === 'number') return BigInt(value);
  if (Buffer.isBuffer(value)) return value.length === 0 ? 0n : BigInt(`0x${value.toString('hex')}`);
  if (typeof value === 'string' || typeof value === 'bigint') return BigInt(value);
  throw new TypeError('unexpected NULL amount');
}

/**
 * The holder-list sort key of a positive balance, `balances.rank` (migration 0007): the amount as
 * an INTEGER up to 2^53 - 1, above that a BLOB of its byte length, then its big-endian bytes (every
 * INTEGER sorts below every BLOB, and such BLOBs compare as the numbers they hold).
 */
export function rankKey(amount: bigint): bigint | Buffer {
  if (amount <= 9007199254740991n) return amount;
  return Buffer.from(rankHexDigits(amount), 'hex');
}

/** Hex digits of {@link rankKey}'s BLOB for an amount above 2^53 - 1: its length byte, then its bytes. */
export function rankHexDigits(amount: bigint): string {
  const digits = amountHexDigits(amount);
  return (digits.length / 2).toString(16).padStart(2, '0') + digits;
}

/**
 * Pushes the two parameters of {@link UNHEX_OR_VALUE} that store `holder`'s rank for `amount`:
 * NULL unless the amount is positive and the holder can hold (`NON_HOLDERS`).
 */
export function pushRankParams(params: unknown[], holder: string, amount: bigint): void {
  if (amount <= 0n || NON_HOLDERS.has(holder)) params.push(null, null);
  else if (amount <= 9007199254740991n) params.push(null, amount);
  else params.push(rankHexDigits(amount), null);
}

/** {@link decodeAmount} for nullable columns. */
export function decodeNullableAmount(value: SqlValue): bigint | null {
  return value === null ? null : decodeAmount(value);
}

/** {@link encodeAmount} for nullable columns. */
export function encodeNullableAmount(value: bigint | null): bigint | Buffer | string | null {
  return value === null ? null : encodeAmount(value);
}

/*
 * Bulk writes bind text, not Buffers: a Buffer per column costs an allocation and, in bulk,
 * much of the garbage collector's time. The statement turns the text into the same BLOB that
 * encodeHex/encodeAmount would give, with SQLite's own `unhex()`. Each encoded column takes two
 * parameters, `coalesce(unhex(?), ?)`: exactly one of the pair is non-null.
 */

/** The SQL of one column written from the two parameters of {@link pushHexParams} or {@link pushAmountParams}. */
export const UNHEX_OR_VALUE = 'coalesce(unhex(?), ?)';

/** True when {@link encodeHex} stores `value` as a BLOB (`0x` + lower-case, even-length hex). */
export function isLowerHex(value: string): boolean {
  return LOWER_HEX.test(value);
}

/** Even-length hex digits of a non-negative amount, without `0x`: `unhex()` of it is {@link encodeAmount}'s BLOB. */
export function amountHexDigits(value: bigint): string {
  const hex = value.toString(16);
  return hex.length % 2 === 0 ? hex : `0${hex}`;
}

/** Pushes the two parameters of {@link UNHEX_OR_VALUE} that store `value` exactly as {@link encodeHex} would. */
export function pushHexParams(params: unknown[], value: string): void {
  if (LOWER_HEX.test(value)) params.push(value.slice(2), null);
  else params.push(null, value);
}

/** Pushes the two parameters of {@link UNHEX_OR_VALUE} that store `value` exactly as {@link encodeAmount} would. */
export function pushAmountParams(params: unknown[], value: bigint): void {
  if (value <= 9007199254740991n && value >= -9007199254740991n) params.push(null, value);
  else if (value < 0n) params.push(null, value.toString());
  else params.push(amountHexDigits(value), null);
}

/** Per character code below 128: 0 for 0-9 and a-f, 1 for anything else. */
const NOT_LOWER_HEX = new Uint8Array(128).fill(1);
for (const c of '0123456789abcdef') NOT_LOWER_HEX[c.charCodeAt(0)] = 0;

/**
 * Whether `hashes` is `count` transaction hashes joined, each `0x` and 64 lower-case hex digits:
 * one pass over the text instead of a check per hash (a regular expression over the whole text
 * overflows its backtracking stack at about 100,000 hashes).
 */
export function allHashesLowerHex(hashes: string, count: number): boolean {
  if (hashes.length !== count * 66) return false;
  let bad = 0;
  for (let at = 0; at < hashes.length; at += 66) {
    bad |= (hashes.charCodeAt(at) ^ 48) | (hashes.charCodeAt(at + 1) ^ 120);
    for (let i = at + 2; i < at + 66; i++) {
      const c = hashes.charCodeAt(i);
      bad |= c < 128 ? NOT_LOWER_HEX[c]! : 1;
    }
  }
  return bad === 0;
}

/**
 * The hex digits of `value` (without `0x`) when {@link encodeHex} stores it as a BLOB, else null:
 * what `unhex()` of a bound parameter makes into that BLOB. A loop over the characters, cheaper
 * than the regular expression for many short values (a bulk load's addresses).
 */
export function lowerHexDigits(value: string): string | null {
  const n = value.length;
  if (n < 4 || n % 2 !== 0 || value.charCodeAt(0) !== 48 || value.charCodeAt(1) !== 120) return null;
  let bad = 0;
  for (let i = 2; i < n; i++) {
    const c = value.charCodeAt(i);
    bad |= c < 128 ? NOT_LOWER_HEX[c]! : 1;
  }
  return bad === 0 ? value.slice(2) : null;
}

// ---- Rows → records ----

/** A row of the `chains` table. */
export interface ChainRow {
  chain: string;
  indexed_block: number | null;
  indexed_hash: SqlValue;
  head: number;
  last_error: string | null;
  updated_at: number;
  token_count: number;
  journal_floor: number;
  transfer_count: number;
  recent_transfers: string | null;
  seed_block: number | null;
  holders_partial: number;
  balances_block: number | null;
  /** Set while a bulk load of the chain waits in `bulk_transfers` (migration 0011; bulk-load.ts). */
  bulk_block: number | null;
}

export function toChainStatus(row: ChainRow): ChainStatus {
  const status = decodeChainStatus(row, row.holders_partial !== 0);
  if (row.balances_block !== null) status.balancesBlock = row.balances_block;
  return status;
}

/** A token row as the API reads it: `TOKEN_READ_COLUMNS` (statements.ts), in order. */
export type TokenReadRow = [
  address: string,
  name: string,
  symbol: string,
  decimals: number,
  totalSupply: SqlValue,
  cap: SqlValue,
  burnedBalance: SqlValue,
  holderCount: number,
  transferCount: number,
  firstBlock: number,
  icon: string,
];

/** A Token List row: the chain's token count (the same on every row), then a {@link TokenReadRow}. */
export type TokenListRow = [total: number | null, ...TokenReadRow];

/** {@link TokenReadRow} (from its `offset`-th value on) → TokenRecord. */
export function readTokenRecord(chain: string, row: unknown[], offset = 0): TokenRecord {
  return {
    chain,
    address: row[offset] as string,
    name: row[offset + 1] as string,
    symbol: row[offset + 2] as string,
    decimals: row[offset + 3] as number,
    totalSupply: decodeNullableAmount(row[offset + 4] as SqlValue),
    cap: decodeNullableAmount(row[offset + 5] as SqlValue),
    burnedBalance: decodeNullableAmount(row[offset + 6] as SqlValue),
    holderCount: row[offset + 7] as number,
    transferCount: row[offset + 8] as number,
    firstBlock: row[offset + 9] as number,
    icon: row[offset + 10] as string,
  };
}

/** A stored transfer row's `[from, to, value]` (`from_addr`, `to_addr`, `value`), decoded. */
export const decodeTransferRow = ([from, to, value]: [SqlValue, SqlValue, SqlValue]) =>
  [decodeHex(from), decodeHex(to), decodeAmount(value)] as const;
