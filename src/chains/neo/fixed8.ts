/**
 * NEO 2.x `Fixed8` amounts: RPC answers write them as decimal text with up to 8 digits after
 * the point (`"39.999"`, `"0.00000001"`, `"100000000"`). They are parsed into exact integer
 * units of 10^-8, never through floating point.
 */

/** 10^8: one whole unit in Fixed8 units. */
export const FIXED8_ONE = 100_000_000n;

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

/**
 * Fixed8 units → the asset's own smallest unit, given its precision (0 for NEO, 8 for GAS):
 * 244 NEO is `24400000000n` Fixed8 units and `244n` NEO units. The chain refuses outputs
 * finer than the precision, so a remainder means the answer is wrong: RangeError.
 */
export function fixed8ToAssetUnits(units: bigint, precision: number): bigint {
  if (!Number.isInteger(precision) || precision < 0 || precision > 8) {
    throw new RangeError(`asset precision must be 0..8, not ${precision}`);
  }
  const divisor = 10n ** BigInt(8 - precision);
  if (units % divisor !== 0n) {
    throw new RangeError(`amount ${units} (Fixed8 units) is finer than precision ${precision}`);
  }
  return units / divisor;
}
