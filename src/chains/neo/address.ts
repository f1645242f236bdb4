/**
 * NEO 2.x addresses: base58check of the version byte 0x17 followed by the 20-byte script
 * hash in its stored (little-endian) order, exactly the bytes a NEP-5 `transfer`
 * notification carries. The `0x…` form of a contract hash is the same 20 bytes reversed.
 */
import { createHash } from 'node:crypto';
import { NEO_ADDRESS_VERSION, neoBase58check } from '../../internal/neo.js';
import { bytesToHex, hexToBytes, reverseHex } from './bytes.js';

/** Address version byte of NEO 2.x (addresses start with `A`). */
export const ADDRESS_VERSION = NEO_ADDRESS_VERSION;

const base58check = neoBase58check;

const CONTRACT_HASH = /^(?:0x)?[0-9a-fA-F]{40}$/;

/*
 * The same few addresses (exchanges, the miners, popular contracts) recur in nearly every block,
 * and checking one costs two SHA-256 runs and a base58 conversion, a large share of the NEO
 * indexer's time before these memos (docs/benchmarks.md, "Reading of the NEO runs"). Both are
 * bounded: past the limit they simply start over.
 */
const MEMO_LIMIT = 100_000;
const knownAddresses = new Set<string>();
const addressOfVerificationScript = new Map<string, string>();
const addressOfScriptHash = new Map<string, string>();

/** A value that is not a NEO address or script hash. */
export class InvalidNeoAddressError extends TypeError {
  override name = 'InvalidNeoAddressError';
}

/** RIPEMD-160 of SHA-256: the script hash of a script, in stored (little-endian) order. */
export function hash160(script: Uint8Array): Uint8Array {
  const sha = createHash('sha256').update(script).digest();
  return Uint8Array.from(createHash('ripemd160').update(sha).digest());
}

/** 20 script-hash bytes in stored order (as in notifications) → base58 address. */
export function scriptHashBytesToAddress(hash: Uint8Array): string {
  if (hash.length !== 20) throw new InvalidNeoAddressError(`a script hash has 20 bytes, not ${hash.length}`);
  const payload = new Uint8Array(21);
  payload[0] = ADDRESS_VERSION;
  payload.set(hash, 1);
  return base58check.encode(payload);
}

/** Bare hex of 20 bytes in stored order (a notification's ByteArray) → base58 address. */
export function scriptHashHexToAddress(hexLe: string): string {
  let address = addressOfScriptHash.get(hexLe);
  if (address !== undefined) return address;
  if (!/^[0-9a-fA-F]{40}$/.test(hexLe)) throw new InvalidNeoAddressError('a script hash is 40 hex digits');
  address = scriptHashBytesToAddress(hexToBytes(hexLe));
  if (addressOfScriptHash.size >= MEMO_LIMIT) addressOfScriptHash.clear();
  addressOfScriptHash.set(hexLe, address);
  return address;
}

/** `0x`-prefixed (or bare) big-endian contract hash, as RPC shows it → base58 address. */
export function contractHashToAddress(hash: string): string {
  if (!CONTRACT_HASH.test(hash)) throw new InvalidNeoAddressError(`not a contract hash: ${hash}`);
  return scriptHashHexToAddress(reverseHex(hash.replace(/^0x/, '')));
}

/**
 * Base58 address → its 20 script-hash bytes in stored order. Throws
 * `InvalidNeoAddressError` on a bad checksum, length or version byte.
 */
export function addressToScriptHashBytes(address: string): Uint8Array {
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch (error) {
    throw new InvalidNeoAddressError(`not a NEO address: ${(error as Error).message}`);
  }
  if (payload.length !== 21) throw new InvalidNeoAddressError(`not a NEO address: ${payload.length} bytes`);
  if (payload[0] !== ADDRESS_VERSION) {
    throw new InvalidNeoAddressError(`not a NEO 2.x address: version byte 0x${payload[0]!.toString(16)}`);
  }
  return payload.subarray(1);
}

/** Base58 address → bare hex of its script hash in stored order (as notifications carry it). */
export function addressToScriptHashHex(address: string): string {
  return bytesToHex(addressToScriptHashBytes(address));
}

/** Base58 address → `0x` big-endian contract-hash form. */
export function addressToContractHash(address: string): string {
  return `0x${reverseHex(addressToScriptHashHex(address))}`;
}

/** True when `value` is a valid NEO 2.x base58 address. */
export function isNeoAddress(value: unknown): value is string {
  if (typeof value !== 'string' || value.length < 25 || value.length > 36) return false;
  if (knownAddresses.has(value)) return true;
  try {
    addressToScriptHashBytes(value);
  } catch {
    return false;
  }
  if (knownAddresses.size >= MEMO_LIMIT) knownAddresses.clear();
  knownAddresses.add(value);
  return true;
}

/** `0x` + lower-case big-endian hash of a script (bare hex): the contract hash of deployed code. */
export function contractHashOfScript(scriptHex: string): string {
  return `0x${reverseHex(bytesToHex(hash160(hexToBytes(scriptHex))))}`;
}

/**
 * The address that a witness's verification script stands for (the script hash of that
 * script), or null when the script is empty: a contract-verified witness names its account
 * elsewhere (NEO then takes the hash from the transaction, not from the witness).
 */
export function verificationScriptToAddress(verificationHex: string): string | null {
  if (verificationHex === '') return null;
  let address = addressOfVerificationScript.get(verificationHex);
  if (address === undefined) {
    address = scriptHashBytesToAddress(hash160(hexToBytes(verificationHex)));
    if (addressOfVerificationScript.size >= MEMO_LIMIT) addressOfVerificationScript.clear();
    addressOfVerificationScript.set(verificationHex, address);
  }
  return address;
}
