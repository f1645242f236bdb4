import { DevchainError } from './rpc.js';

/**
 * The few ABI types the devchain contracts take and return. Enough for their constructors and calls;
 * not a general ABI coder (no arrays, tuples or dynamic bytes).
 */
export type AbiArg =
  | { type: 'address'; value: string }
  | { type: 'uint256' | 'uint8'; value: bigint | number }
  | { type: 'bytes32'; value: Uint8Array }
  | { type: 'string'; value: string | Uint8Array };

const WORD = 64; // hex characters in one 32-byte word

function word(value: bigint): string {
  if (value < 0n || value >= 1n << 256n) throw new DevchainError(`value out of uint256 range: ${value}`);
  return value.toString(16).padStart(WORD, '0');
}

function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function headWord(arg: AbiArg): string {
  switch (arg.type) {
    case 'address':
      if (!/^0x[0-9a-fA-F]{40}$/.test(arg.value)) throw new DevchainError(`not an address: ${arg.value}`);
      return arg.value.slice(2).toLowerCase().padStart(WORD, '0');
    case 'uint256':
    case 'uint8':
      return word(BigInt(arg.value));
    case 'bytes32':
      if (arg.value.length > 32) throw new DevchainError('bytes32 value longer than 32 bytes');
      return bytesToHex(arg.value).padEnd(WORD, '0');
    case 'string':
      throw new DevchainError('string has no head word');
  }
}

/** ABI-encodes arguments (head words, then the tails of dynamic values). Returns hex without `0x`. */
export function encodeArgs(args: readonly AbiArg[]): string {
  let head = '';
  let tail = '';
  const headSize = args.length * 32;
  for (const arg of args) {
    if (arg.type === 'string') {
      const bytes = typeof arg.value === 'string' ? Buffer.from(arg.value, 'utf8') : arg.value;
      head += word(BigInt(headSize + tail.length / 2));
      const padded = Math.ceil(bytes.length / 32) * 32;
      tail += word(BigInt(bytes.length)) + bytesToHex(bytes).padEnd(padded * 2, '0');
    } else {
      head += headWord(arg);
    }
  }
  return head + tail;
}

/** Calldata for a function: its 4-byte selector (8 hex characters) followed by the encoded arguments. */
export function encodeCall(selector: string, args: readonly AbiArg[] = []): `0x${string}` {
  return `0x${selector}${encodeArgs(args)}`;
}

function words(data: string): string {
  const hex = data.startsWith('0x') ? data.slice(2) : data;
  if (hex.length % WORD !== 0)
    throw new DevchainError(`return data is not whole words: ${data.slice(0, 80)}`);
  return hex;
}

/** Decodes a single uint256 return value. */
export function decodeUint(data: string): bigint {
  const hex = words(data);
  if (hex.length < WORD) throw new DevchainError('empty return data where a uint256 was expected');
  return BigInt(`0x${hex.slice(0, WORD)}`);
}

/** Decodes a single bytes32 return value as raw bytes. */
export function decodeBytes32(data: string): Uint8Array {
  const hex = words(data);
  if (hex.length < WORD) throw new DevchainError('empty return data where a bytes32 was expected');
  return Uint8Array.from(Buffer.from(hex.slice(0, WORD), 'hex'));
}

/** Decodes a single address return value, lower case. */
export function decodeAddress(data: string): string {
  const hex = words(data);
  if (hex.length < WORD) throw new DevchainError('empty return data where an address was expected');
  return `0x${hex.slice(WORD - 40, WORD)}`;
}

/** Decodes a single dynamic `string` return value as raw bytes (the caller decides how to read them). */
export function decodeStringBytes(data: string): Uint8Array {
  const hex = words(data);
  const offset = Number(BigInt(`0x${hex.slice(0, WORD)}`)) * 2;
  const length = Number(BigInt(`0x${hex.slice(offset, offset + WORD)}`));
  const start = offset + WORD;
  if (start + length * 2 > hex.length) throw new DevchainError('string return data is truncated');
  return Uint8Array.from(Buffer.from(hex.slice(start, start + length * 2), 'hex'));
}

/** Text left-aligned in a bytes32, NUL padded (how MKR stores its name). Throws past 32 UTF-8 bytes. */
export function textToBytes32(text: string): Uint8Array {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > 32) throw new DevchainError(`"${text}" does not fit in bytes32`);
  const out = new Uint8Array(32);
  out.set(bytes);
  return out;
}

/** Reads NUL-padded text back, dropping trailing NULs. */
export function bytes32ToText(bytes: Uint8Array): string {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return Buffer.from(bytes.subarray(0, end)).toString('utf8');
}
