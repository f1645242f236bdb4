/**
 * Request-parameter validation: the API's edge. Every failure is a 10001 `invalid parameter`
 * whose message says what and why, without echoing the value (it may be long or hostile).
 */
import { NEO_ADDRESS_LENGTH, neoAddressProblem } from '../internal/neo.js';
import { invalidParameter } from './errors.js';

/** Most entries per page and highest page number (docs/api.md#paging). */
export const MAX_PAGE = 50;
export const MAX_PAGE_SIZE = 50;

/** An EVM address as a path gives it (also the OpenAPI parameter pattern). */
export const EVM_ADDRESS = /^0x[0-9a-f]{40}$/;
const DIGITS = /^[0-9]+$/;

/** An EVM address as the path must give it: `0x` + 40 lower-case hex digits. */
export function parseEvmAddress(value: string, name = 'address'): string {
  if (EVM_ADDRESS.test(value)) return value;
  if (EVM_ADDRESS.test(value.toLowerCase())) throw invalidParameter(`${name} must be lower case`);
  throw invalidParameter(`${name} must be 0x followed by 40 hex digits`);
}

/** `page` or `size`: plain decimal digits (leading zeros allowed) whose value lies in 1..max. */
export function parsePageNumber(value: string, name: string, max: number): number {
  // Digits only first, so Number() never sees a sign, a point, an exponent or white space.
  const n = DIGITS.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= max)) throw invalidParameter(`${name} must be an integer from 1 to ${max}`);
  return n;
}

/** Validated `page` and `size`, with the list offset they select. */
export function parsePaging(page: string, size: string): { page: number; size: number; offset: number } {
  const p = parsePageNumber(page, 'page', MAX_PAGE);
  const s = parsePageNumber(size, 'size', MAX_PAGE_SIZE);
  return { page: p, size: s, offset: (p - 1) * s };
}

/** A NEO script hash or asset id as a path gives it (also the OpenAPI parameter pattern). */
export const NEO_HASH = /^(?:0[xX])?(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;

/**
 * A NEO token hash (NEP-5 script hash, 40 hex digits) or global asset id (64 hex digits), with
 * or without `0x`, in either case (docs/api.md#neo-hashes) → `0x` + lower-case hex.
 */
export function parseNeoHash(value: string, name = 'address'): string {
  if (!NEO_HASH.test(value)) {
    throw invalidParameter(
      `${name} must be a NEO script hash (40 hex digits) or asset id (64 hex digits), with or without 0x`,
    );
  }
  const hex = value.toLowerCase();
  return hex.startsWith('0x') ? hex : `0x${hex}`;
}

/** A NEO address as a path gives it (also the OpenAPI parameter pattern; the checksum is checked in code). */
export const NEO_ADDRESS = new RegExp(`^A[1-9A-HJ-NP-Za-km-z]{${NEO_ADDRESS_LENGTH - 1}}$`);

/** A NEO 2.x address: base58check, 34 characters starting with `A`, checksum verified (docs/api.md#addresses). */
export function parseNeoAddress(value: string, name = 'address'): string {
  switch (neoAddressProblem(value)) {
    case null:
      return value;
    case 'form':
      throw invalidParameter(`${name} must be a NEO address: 34 base58 characters starting with A`);
    case 'checksum':
      throw invalidParameter(`${name} is not a NEO address: its base58check checksum does not match`);
    case 'version':
      throw invalidParameter(`${name} is not a NEO 2.x address: wrong version byte`);
  }
}
