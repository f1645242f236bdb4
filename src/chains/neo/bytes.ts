/**
 * Hex and byte helpers of the NEO chain layer. NEO RPC answers carry byte strings as bare
 * hex (no `0x`), hashes as `0x` + hex; both come from an untrusted node and are checked here.
 */

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** True for bare hex of whole bytes (empty allowed). */
export function isHex(value: unknown): value is string {
  return typeof value === 'string' && HEX.test(value);
}

/** Bare hex → bytes. Throws TypeError on odd length or non-hex characters. */
export function hexToBytes(hex: string): Uint8Array {
  if (!HEX.test(hex)) throw new TypeError('not an even-length hex string');
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** Bytes → lower-case bare hex. */
export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Reverses the byte order of bare hex: NEO shows UInt160/UInt256 big-endian but stores them little-endian. */
export function reverseHex(hex: string): string {
  let out = '';
  for (let i = hex.length - 2; i >= 0; i -= 2) out += hex.slice(i, i + 2);
  return out;
}

/**
 * Little-endian two's-complement bytes → BigInt, as the NEO VM reads a ByteArray as an
 * integer (`new BigInteger(bytes)` in C#). Empty is zero.
 */
export function leBytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!);
  // The top bit of the last byte is the sign.
  if ((bytes[bytes.length - 1]! & 0x80) !== 0) value -= 1n << BigInt(bytes.length * 8);
  return value;
}

/** UTF-8 text of bytes; invalid sequences become U+FFFD, never an error. */
export function bytesToUtf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
