/**
 * Small validators for untrusted NEO RPC answers. Each throws `InvalidRpcResponseError` with
 * the path of the bad field, so a log line says exactly what the node got wrong.
 */
import { isNeoAddress } from './address.js';
import { isHex } from './bytes.js';
import { invalid } from './errors.js';
import { parseFixed8 } from './fixed8.js';

const HASH256 = /^0x[0-9a-f]{64}$/;
const HASH160 = /^0x[0-9a-f]{40}$/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object, or the error. */
export function record(value: unknown, path: string): Record<string, unknown> {
  if (!isRecord(value)) throw invalid(`${path} is not an object`);
  return value;
}

/** An array, or the error. */
export function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(`${path} is not an array`);
  return value;
}

/** `0x` + 64 hex (a prefix-less answer is accepted), lower-cased. */
export function hash256(value: unknown, path: string): string {
  const hash = typeof value === 'string' ? prefixed(value.toLowerCase()) : undefined;
  if (hash === undefined || !HASH256.test(hash)) throw invalid(`${path} is not a 32-byte hash`);
  return hash;
}

/** `0x` + 40 hex (a prefix-less answer is accepted), lower-cased. */
export function hash160(value: unknown, path: string): string {
  const hash = typeof value === 'string' ? prefixed(value.toLowerCase()) : undefined;
  if (hash === undefined || !HASH160.test(hash)) throw invalid(`${path} is not a 20-byte hash`);
  return hash;
}

/** A non-negative safe integer (JSON number). */
export function uint(value: unknown, path: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) {
    throw invalid(`${path} is not a non-negative integer`);
  }
  return value;
}

/** Bare hex, lower-cased. */
export function hex(value: unknown, path: string): string {
  if (!isHex(value)) throw invalid(`${path} is not hex`);
  return value.toLowerCase();
}

/** A string. */
export function text(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalid(`${path} is not a string`);
  return value;
}

/** A Fixed8 decimal amount → units. */
export function fixed8(value: unknown, path: string, allowNegative = false): bigint {
  const units = parseFixed8(value, allowNegative);
  if (units === undefined) throw invalid(`${path} is not a Fixed8 amount`);
  return units;
}

/** A base58 NEO address. */
export function address(value: unknown, path: string): string {
  if (!isNeoAddress(value)) throw invalid(`${path} is not a NEO address`);
  return value;
}

/** Adds the `0x` prefix a NEO hash answer may lack. */
export function prefixed(hash: string): string {
  return hash.startsWith('0x') ? hash : `0x${hash}`;
}
