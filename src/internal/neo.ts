/**
 * NEO 2.x facts every floor needs: the base58check address form and the Fixed8 → asset-unit
 * conversion. The indexer (chains/neo) builds on them, and the API checks path addresses and
 * answers global-asset balances with them without importing chain code.
 */
import { createHash } from 'node:crypto';
import { createBase58check } from '@scure/base';

/** Address version byte of NEO 2.x (its addresses start with `A`). */
export const NEO_ADDRESS_VERSION = 0x17;

/** Length of every NEO 2.x address: 21 bytes (version + script hash) and a 4-byte checksum in base58. */
export const NEO_ADDRESS_LENGTH = 34;

/** Base58check with NEO's checksum: the first 4 bytes of SHA-256(SHA-256(payload)). */
export const neoBase58check = createBase58check((data: Uint8Array) =>
  createHash('sha256').update(data).digest(),
);

/** Why a text is no NEO address, or null when it is one. */
export type NeoAddressProblem = 'form' | 'checksum' | 'version';

/**
 * Checks a NEO 2.x address as text: 34 base58 characters starting with `A` (`form`), a valid
 * checksum (`checksum`), and 21 decoded bytes beginning with the version byte 0x17 (`version`).
 */
export function neoAddressProblem(text: string): NeoAddressProblem | null {
  if (text.length !== NEO_ADDRESS_LENGTH || !/^A[1-9A-HJ-NP-Za-km-z]+$/.test(text)) return 'form';
  let payload: Uint8Array;
  try {
    payload = neoBase58check.decode(text);
  } catch {
    return 'checksum';
  }
  return payload.length === 21 && payload[0] === NEO_ADDRESS_VERSION ? null : 'version';
}

/** 10^8: one whole unit in Fixed8 units. */
export const FIXED8_ONE = 100_000_000n;

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
