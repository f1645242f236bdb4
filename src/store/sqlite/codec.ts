/**
 * Compact, exact encodings for SQLite columns. SQLite columns are dynamically typed, so one
 * column can hold a BLOB for the common case and TEXT or INTEGER for the rest; every encoding
 * here is injective and decodes to exactly the value it was given.
 */

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
