/**
 * One-dimensional PostgreSQL arrays in the binary wire format, for the array parameters of the
 * bulk statements (`unnest($1::bytea[], ...)`). node-postgres sends a Buffer parameter in binary
 * format; the server then copies bytes instead of parsing text, which binds a large `bytea[]`
 * much faster than its text literal (docs/benchmarks.md, PostgreSQL).
 *
 * Layout: int32 ndim, int32 has-null flag, int32 element type OID, per dimension int32 length and
 * int32 lower bound (1), then per element an int32 byte length (-1 for NULL) and the bytes.
 */

const OID = { bool: 16, bytea: 17, int8: 20, int4: 23, numeric: 1700 } as const;

function header(
  oid: number,
  count: number,
  hasNull: boolean,
  bodyBytes: number,
): { buf: Buffer; at: number } {
  if (count === 0) {
    const buf = Buffer.alloc(12);
    buf.writeInt32BE(0, 0);
    buf.writeInt32BE(0, 4);
    buf.writeInt32BE(oid, 8);
    return { buf, at: 12 };
  }
  const buf = Buffer.allocUnsafe(20 + bodyBytes);
  buf.writeInt32BE(1, 0);
  buf.writeInt32BE(hasNull ? 1 : 0, 4);
  buf.writeInt32BE(oid, 8);
  buf.writeInt32BE(count, 12);
  buf.writeInt32BE(1, 16);
  return { buf, at: 20 };
}

/** `integer[]` of JS integers. */
export function int4Array(values: readonly number[]): Buffer {
  const { buf, at: start } = header(OID.int4, values.length, false, values.length * 8);
  let at = start;
  for (const value of values) {
    buf.writeInt32BE(4, at);
    buf.writeInt32BE(value, at + 4);
    at += 8;
  }
  return buf;
}

/** `bigint[]` of JS integers (safe integers) or NULLs. */
export function int8Array(values: readonly (number | null)[]): Buffer {
  const nulls = values.reduce((n: number, v) => (v === null ? n + 1 : n), 0);
  const { buf, at: start } = header(OID.int8, values.length, nulls > 0, values.length * 12 - nulls * 8);
  let at = start;
  for (const value of values) at = writeInt8Field(buf, at, value);
  return buf;
}

/**
 * Writes one `bigint` field (its length, then 8 bytes; length -1 for NULL) at `at`, as array
 * elements and binary COPY rows both carry it; answers the offset after it.
 */
export function writeInt8Field(buf: Buffer, at: number, value: number | null): number {
  if (value === null) {
    buf.writeInt32BE(-1, at);
    return at + 4;
  }
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a safe integer for bigint: ${value}`);
  buf.writeInt32BE(8, at);
  buf.writeBigInt64BE(BigInt(value), at + 4);
  return at + 12;
}

/** `boolean[]`. */
export function boolArray(values: readonly boolean[]): Buffer {
  const { buf, at: start } = header(OID.bool, values.length, false, values.length * 5);
  let at = start;
  for (const value of values) {
    buf.writeInt32BE(1, at);
    buf[at + 4] = value ? 1 : 0;
    at += 5;
  }
  return buf;
}

/** `bytea[]` from hex digits (no `0x`/`\x`), written straight into the array buffer. */
export function byteaArray(hexDigits: readonly string[]): Buffer {
  let body = 0;
  for (const digits of hexDigits) body += 4 + digits.length / 2;
  const { buf, at: start } = header(OID.bytea, hexDigits.length, false, body);
  let at = start;
  for (const digits of hexDigits) {
    const length = digits.length / 2;
    buf.writeInt32BE(length, at);
    const written = buf.write(digits, at + 4, length, 'hex');
    if (written !== length) throw new TypeError(`not hex: ${digits.slice(0, 20)}`);
    at += 4 + length;
  }
  return buf;
}

const NUMERIC_NEG = 0x4000;

/** Bytes of the binary `numeric` of an integer's decimal text (without its length word). */
export function numericBytes(text: string): number {
  const digits = text.length - (text.startsWith('-') ? 1 : 0);
  return 8 + (text === '0' ? 0 : Math.ceil(digits / 4) * 2);
}

/**
 * Writes the binary `numeric` of an integer's decimal text at `at`, preceded by its int32 byte
 * length; answers the offset after it. Layout: int16 digit count, int16 weight (base-10000
 * exponent of the first digit), uint16 sign, int16 display scale (0: integers), then base-10000
 * digits, most significant first. The digits come from the decimal text, which V8 produces far
 * faster than repeated BigInt division.
 */
export function writeNumeric(buf: Buffer, at: number, text: string): number {
  const negative = text.startsWith('-');
  const abs = negative ? text.slice(1) : text;
  const groups = abs === '0' ? 0 : Math.ceil(abs.length / 4);
  buf.writeInt32BE(8 + groups * 2, at);
  buf.writeInt16BE(groups, at + 4);
  buf.writeInt16BE(groups === 0 ? 0 : groups - 1, at + 6);
  buf.writeUInt16BE(negative ? NUMERIC_NEG : 0, at + 8);
  buf.writeInt16BE(0, at + 10);
  at += 12;
  // The first group takes the leftover digits, so the others are whole groups of four.
  let end = abs.length - (groups - 1) * 4;
  if (groups > 0) {
    buf.writeInt16BE(Number(abs.slice(0, end)), at);
    at += 2;
  }
  for (let g = 1; g < groups; g++) {
    buf.writeInt16BE(Number(abs.slice(end, end + 4)), at);
    end += 4;
    at += 2;
  }
  return at;
}

/** `numeric[]` of exact integers, or NULLs, each written by {@link writeNumeric}. */
export function numericArray(values: readonly (bigint | null)[]): Buffer {
  const texts: (string | null)[] = new Array(values.length);
  let body = 0;
  let nulls = false;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      texts[i] = null;
      nulls = true;
      body += 4;
      continue;
    }
    const text = value.toString();
    texts[i] = text;
    body += 4 + numericBytes(text);
  }
  const { buf, at: start } = header(OID.numeric, values.length, nulls, body);
  let at = start;
  for (const text of texts) {
    if (text === null) {
      buf.writeInt32BE(-1, at);
      at += 4;
      continue;
    }
    at = writeNumeric(buf, at, text);
  }
  return buf;
}
