/**
 * NEO 2.x `Fixed8` amounts: RPC answers write them as decimal text with up to 8 digits after
 * the point (`"39.999"`, `"0.00000001"`, `"100000000"`). They are parsed into exact integer
 * units of 10^-8, never through floating point.
 */

import { FIXED8_ONE } from '../../internal/neo.js';

/** Shared with the API (internal/neo.ts), which answers global-asset balances in asset units. */
export { FIXED8_ONE, fixed8ToAssetUnits } from '../../internal/neo.js';

const FIXED8 = /^(-?)(\d{1,19})(?:\.(\d{1,8}))?$/;

/** `Fixed8.MaxValue` in units (a C# long). */
const MAX = (1n << 63n) - 1n;

/**
 * Decimal text → Fixed8 units (`"39.999"` → `3999900000n`). Returns undefined for anything
 * else (exponents, more than 8 decimals, spaces, out of the 64-bit range); negatives only
 * when `allowNegative` (an asset's `amount` of `-0.00000001` means "unlimited").
 */
export function parseFixed8(text: unknown, allowNegative = false): bigint | undefined {
  if (typeof text !== 'string') return undefined;
  const m = FIXED8.exec(text);
  if (m === null) return undefined;
  const negative = m[1] === '-';
  if (negative && !allowNegative) return undefined;
  const units = BigInt(m[2]!) * FIXED8_ONE + BigInt((m[3] ?? '').padEnd(8, '0'));
  if (units > MAX) return undefined;
  return negative ? -units : units;
}
