/**
 * Rows in PostgreSQL's binary `COPY` format (`COPY … FROM STDIN (FORMAT binary)`), built from
 * whole columns as the bulk statements take them. The server then reads each field's bytes as
 * they are, with no text parsing and no array to unnest, and inserts the rows in the order given.
 *
 * Layout: the 11-byte signature `PGCOPY\n\xff\r\n\0`, int32 flags (0), int32 header extension
 * length (0); per row an int16 field count, then per field an int32 byte length (-1 for NULL) and
 * the value in its binary send format; last the int16 trailer -1. Field formats are those of
 * binary-arrays.ts (the same as inside a binary array).
 */
import { numericBytes, writeInt8Field, writeNumeric } from './binary-arrays.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** One column of the rows, in the table's column order of the `COPY` statement. */
export type CopyColumn =
  | { type: 'int4'; values: ArrayLike<number> }
  /** Safe integers; `null` writes NULL. */
  | { type: 'int8'; values: ArrayLike<number | null> }
  /** Hex digits (no `0x`/`\x`) of each value's bytes, as codec.ts encodes them. */
  | { type: 'bytea'; values: ArrayLike<string> }
  | { type: 'numeric'; values: ArrayLike<bigint> }
  | { type: 'bool'; values: ArrayLike<boolean> }
  /** The same text in every row (a chain name): encoded once. */
  | { type: 'constText'; value: string };

/**
 * The binary `COPY` data of `count` rows taken from `columns`, row `order[i]` as the i-th (default:
 * in index order): a sort by key costs a permutation, not a copy of every column.
 */
export function encodeCopyRows(
  count: number,
  columns: readonly CopyColumn[],
  order?: ArrayLike<number>,
): Buffer {
  // Sizes first, so the data is one buffer written once.
  let size = SIGNATURE.length + 8 + 2 + count * (2 + 4 * columns.length);
  const numericTexts: (string[] | null)[] = [];
  const constBytes: (Buffer | null)[] = [];
  for (const column of columns) {
    let texts: string[] | null = null;
    let constant: Buffer | null = null;
    switch (column.type) {
      case 'int4':
        size += 4 * count;
        break;
      case 'int8':
        for (let i = 0; i < count; i++) if (column.values[i] !== null) size += 8;
        break;
      case 'bool':
        size += count;
        break;
      case 'bytea':
        for (let i = 0; i < count; i++) size += column.values[i]!.length / 2;
        break;
      case 'numeric':
        texts = new Array<string>(count);
        for (let i = 0; i < count; i++) {
          const text = column.values[i]!.toString();
          texts[i] = text;
          size += numericBytes(text);
        }
        break;
      case 'constText':
        constant = Buffer.from(column.value, 'utf8');
        size += constant.length * count;
        break;
    }
    numericTexts.push(texts);
    constBytes.push(constant);
  }

  const buf = Buffer.allocUnsafe(size);
  SIGNATURE.copy(buf, 0);
  buf.writeInt32BE(0, SIGNATURE.length);
  buf.writeInt32BE(0, SIGNATURE.length + 4);
  let at = SIGNATURE.length + 8;
  const fields = columns.length;
  for (let r = 0; r < count; r++) {
    const row = order === undefined ? r : order[r]!;
    buf.writeInt16BE(fields, at);
    at += 2;
    for (let c = 0; c < fields; c++) {
      const column = columns[c]!;
      switch (column.type) {
        case 'int4':
          buf.writeInt32BE(4, at);
          buf.writeInt32BE(column.values[row]!, at + 4);
          at += 8;
          break;
        case 'int8':
          at = writeInt8Field(buf, at, column.values[row]!);
          break;
        case 'bool':
          buf.writeInt32BE(1, at);
          buf[at + 4] = column.values[row] ? 1 : 0;
          at += 5;
          break;
        case 'bytea': {
          const digits = column.values[row]!;
          const length = digits.length / 2;
          buf.writeInt32BE(length, at);
          if (buf.write(digits, at + 4, length, 'hex') !== length) {
            throw new TypeError(`not hex: ${digits.slice(0, 20)}`);
          }
          at += 4 + length;
          break;
        }
        case 'numeric':
          at = writeNumeric(buf, at, numericTexts[c]![row]!);
          break;
        case 'constText': {
          const bytes = constBytes[c]!;
          buf.writeInt32BE(bytes.length, at);
          bytes.copy(buf, at + 4);
          at += 4 + bytes.length;
          break;
        }
      }
    }
  }
  buf.writeInt16BE(-1, at);
  at += 2;
  if (at !== size) throw new Error(`COPY encoder: wrote ${at} of ${size} bytes`);
  return buf;
}
