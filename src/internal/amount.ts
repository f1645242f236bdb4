/**
 * Exact decimal text for token amounts. Amounts are uint256: always BigInt, never floats.
 */

/**
 * Raw integer amount → whole-token decimal text, as Tokenview's supply bodies show it:
 * no exponent, no trailing zeros after the point, no point when integral.
 * `formatUnits(1500000n, 6)` is `"1.5"`; `formatUnits(10n ** 27n, 18)` is `"1000000000"`.
 */
export function formatUnits(raw: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError(`bad decimals: ${decimals}`);
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString();
  if (decimals === 0) return (negative ? '-' : '') + digits;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, '');
  return (negative ? '-' : '') + (fraction ? `${whole}.${fraction}` : whole);
}

/** 2^256 - 1, the largest uint256. */
export const MAX_UINT256 = (1n << 256n) - 1n;

/** `0x`-prefixed hex (any length, may be `0x`) → BigInt; `0x` is zero. */
export function hexToBigInt(hex: string): bigint {
  return hex === '0x' ? 0n : BigInt(hex);
}
