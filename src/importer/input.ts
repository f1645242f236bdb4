/**
 * Reading one export file as a stream of checked rows: gzip is recognised by its magic bytes
 * (whatever the file is called), the format by the first character of the text (`{` starts
 * JSON lines, anything else a CSV header) unless the caller names it.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import {
  COLUMN_INDEX,
  COLUMNS,
  type Column,
  ImportInputError,
  type ImportRow,
  parseRow,
  REQUIRED_COLUMNS,
} from './columns.js';
import { CsvSyntaxError, createCsvReader } from './csv.js';
import { JsonLineError, parseJsonLine } from './json-line.js';
import { LineTooLongError, MAX_LINE_CHARS, quote, safeName } from './text.js';

export type InputFormat = 'csv' | 'jsonl';

export interface ReadExportOptions {
  /** File path, or `-` for standard input. */
  path: string;
  /** Position of the file among the inputs (kept in each row). */
  fileIndex: number;
  /** Forces the format instead of detecting it. */
  format?: InputFormat;
  /** Called with the number of bytes read from the file (before decompression), for progress. */
  onBytes?: (bytes: number) => void;
  /** Called once the format is known; for CSV with the columns the header has. */
  onOpen?: (info: { format: InputFormat; gzip: boolean; columns: ReadonlySet<Column> | null }) => void;
}

/** Rows read from one chunk of the input, and the JSON-lines items that are not token transfers. */
export interface RowChunk {
  rows: ImportRow[];
  otherItems: number;
}

/** How a file is named in messages: as the user gave it (escaped if it holds control characters). */
export function displayName(path: string): string {
  return path === '-' ? '<stdin>' : safeName(path);
}

/**
 * The rows of one export, a chunk at a time (about 1 MiB of input each). Throws
 * {@link ImportInputError} naming `file:line` and the column for any malformed row.
 */
export async function* readExport(options: ReadExportOptions): AsyncGenerator<RowChunk> {
  const name = displayName(options.path);
  const raw: Readable =
    options.path === '-' ? process.stdin : createReadStream(options.path, { highWaterMark: 1 << 20 });
  const onBytes = options.onBytes;

  // Peek at the first two bytes for the gzip magic (1f 8b).
  const iterator = (raw as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  let rawDone = false;
  try {
    while (headBytes < 2) {
      const next = await iterator.next();
      if (next.done) {
        rawDone = true;
        break;
      }
      head.push(next.value);
      headBytes += next.value.length;
      onBytes?.(next.value.length);
    }
  } catch (error) {
    throw openError(name, error);
  }
  const first = Buffer.concat(head);
  const gzip = first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b;
  const other = otherCompression(first);
  if (other !== null) {
    if (options.path !== '-') raw.destroy();
    throw new ImportInputError(
      `${name}: the file is ${other}-compressed; only gzip is read (decompress it first, or pipe it in: ... | tokenquery import -)`,
    );
  }
  async function* rest(): AsyncGenerator<Buffer> {
    if (first.length > 0) yield first;
    if (rawDone) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      onBytes?.(next.value.length);
      yield next.value;
    }
  }
  let bytes: AsyncIterable<Buffer> = Readable.from(rest(), { objectMode: false });
  let gunzipDone: Promise<void> = Promise.resolve();
  if (gzip) {
    const gunzip = createGunzip();
    gunzipDone = pipeline(bytes as Readable, gunzip);
    gunzipDone.catch(() => {}); // the same error reaches the loop below through `gunzip`
    bytes = gunzip;
  }

  const decoder = new TextDecoder('utf-8', { fatal: true });
  let format: InputFormat | undefined = options.format;
  let parser: ((text: string, final: boolean) => void) | undefined;
  let out: ImportRow[] = [];
  let otherItems = 0;

  function start(text: string): void {
    if (format === undefined) {
      const firstChar = /[^\s\ufeff]/.exec(text)?.[0];
      format = firstChar === '{' ? 'jsonl' : 'csv';
    }
    if (format === 'csv') {
      const csv = csvRowParser(
        name,
        options.fileIndex,
        (row) => out.push(row),
        (columns) => options.onOpen?.({ format: 'csv', gzip, columns }),
      );
      parser = (chunk, final) => {
        if (chunk.length > 0) csv.push(chunk);
        if (final) csv.end();
      };
    } else {
      options.onOpen?.({ format: 'jsonl', gzip, columns: null });
      const jsonl = jsonLineRowParser(
        name,
        options.fileIndex,
        (row) => out.push(row),
        () => otherItems++,
      );
      parser = jsonl;
    }
  }

  // Blank text before the first character that tells the format, kept for the line numbers.
  let pending: string[] = [];
  let pendingLength = 0;
  const hold = (text: string) => {
    pending.push(text);
    pendingLength += text.length;
    if (pendingLength > MAX_LINE_CHARS) {
      throw new ImportInputError(`${name}: nothing but blank text in the first ${MAX_LINE_MIB}`);
    }
  };
  try {
    for await (const chunk of bytes) {
      const text = decoder.decode(chunk, { stream: true });
      if (parser === undefined) {
        // The format is decided on the first non-blank character.
        if (!/[^\s\ufeff]/.test(text)) {
          hold(text);
          continue;
        }
        pending.push(text);
        const all = pending.join('');
        pending = [];
        start(all);
        parser!(all, false);
      } else parser(text, false);
      if (out.length > 0 || otherItems > 0) {
        yield { rows: out, otherItems };
        out = [];
        otherItems = 0;
      }
    }
    const tail = decoder.decode();
    if (parser === undefined) {
      pending.push(tail);
      const all = pending.join('');
      if (!/[^\s\ufeff]/.test(all)) throw new ImportInputError(`${name}: the file is empty`);
      start(all);
      parser!(all, true);
    } else parser(tail, true);
    await gunzipDone;
  } catch (error) {
    throw inputError(name, error, gzip);
  } finally {
    if (options.path !== '-') raw.destroy();
  }
  if (out.length > 0 || otherItems > 0) yield { rows: out, otherItems };
}

const MAX_LINE_MIB = `${MAX_LINE_CHARS / (1 << 20)} MiB`;

/** CSV text → rows, the first record being the header. */
function csvRowParser(
  name: string,
  fileIndex: number,
  onRow: (row: ImportRow) => void,
  onHeader: (columns: ReadonlySet<Column>) => void,
) {
  /** For each column of COLUMNS, its position in the file's records, or -1. */
  let positions: number[] | null = null;
  let width = 0;
  const values: (string | undefined)[] = new Array(COLUMNS.length);
  return createCsvReader((fields, line) => {
    if (positions === null) {
      const names = fields.map((f) => f.trim().toLowerCase());
      positions = COLUMNS.map((column) => names.indexOf(column));
      width = fields.length;
      const missing = REQUIRED_COLUMNS.filter((column) => positions![COLUMN_INDEX[column]] === -1);
      if (missing.length > 0) {
        const shown = fields.length > 12 ? `${fields.slice(0, 12).join(',')},...` : fields.join(',');
        throw new ImportInputError(
          `${name}:${line}: the CSV header lacks ${missing.join(', ')} (the first line must name the columns; it reads ${quote(shown, 200)})`,
        );
      }
      onHeader(new Set(COLUMNS.filter((column) => positions![COLUMN_INDEX[column]] !== -1)));
      return;
    }
    if (fields.length !== width) {
      throw new ImportInputError(`${name}:${line}: ${fields.length} fields where the header has ${width}`);
    }
    for (let c = 0; c < positions.length; c++) {
      const p = positions[c]!;
      values[c] = p === -1 ? undefined : fields[p];
    }
    onRow(parseRow(values, `${name}:${line}`, fileIndex, line));
  });
}

/** JSON-lines text → rows; items with a `type` other than `token_transfer` are counted, not read. */
function jsonLineRowParser(
  name: string,
  fileIndex: number,
  onRow: (row: ImportRow) => void,
  onOther: () => void,
): (text: string, final: boolean) => void {
  let line = 1;
  const values: (string | null | undefined)[] = new Array(COLUMNS.length);
  const one = (text: string) => {
    if (text.trim() === '') return;
    let item: Map<string, string | null>;
    try {
      item = parseJsonLine(text);
    } catch (error) {
      if (error instanceof JsonLineError) {
        throw new ImportInputError(`${name}:${line}:${error.column}: malformed JSON: ${error.message}`);
      }
      throw error;
    }
    const type = item.get('type');
    if (type !== undefined && type !== 'token_transfer') {
      onOther();
      return;
    }
    for (let c = 0; c < COLUMNS.length; c++) values[c] = item.get(COLUMNS[c]!);
    onRow(parseRow(values, `${name}:${line}`, fileIndex, line));
  };
  // The line in progress when a chunk ends inside it, in pieces: joined once, when it ends.
  let parts: string[] = [];
  let partsLength = 0;
  return (text, final) => {
    let pos = 0;
    for (;;) {
      const newline = text.indexOf('\n', pos);
      if (newline === -1) break;
      if (partsLength + newline - pos > MAX_LINE_CHARS) throw new LineTooLongError(line, MAX_LINE_CHARS);
      if (parts.length === 0) one(text.slice(pos, newline));
      else {
        parts.push(text.slice(pos, newline));
        const whole = parts.join('');
        parts = [];
        partsLength = 0;
        one(whole);
      }
      line++;
      pos = newline + 1;
    }
    if (pos < text.length) {
      parts.push(pos === 0 ? text : text.slice(pos));
      partsLength += text.length - pos;
      if (partsLength > MAX_LINE_CHARS) throw new LineTooLongError(line, MAX_LINE_CHARS);
    }
    if (final && parts.length > 0) {
      const whole = parts.join('');
      parts = [];
      partsLength = 0;
      one(whole);
    }
  };
}

/** Magic bytes of compressions other than gzip, which the importer does not read. */
function otherCompression(first: Buffer): string | null {
  const starts = (...bytes: number[]) => bytes.every((b, i) => first[i] === b);
  if (starts(0x28, 0xb5, 0x2f, 0xfd)) return 'zstd';
  if (starts(0x42, 0x5a, 0x68)) return 'bzip2';
  if (starts(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00)) return 'xz';
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'zip';
  return null;
}

function openError(name: string, error: unknown): Error {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return new ImportInputError(`${name}: no such file`);
  if (code === 'EISDIR') return new ImportInputError(`${name}: is a directory, not an export file`);
  if (code === 'EACCES') return new ImportInputError(`${name}: permission denied`);
  return error instanceof Error ? error : new Error(String(error));
}

/** Turns reader faults into one-line user errors naming the file. */
function inputError(name: string, error: unknown, gzip: boolean): Error {
  if (error instanceof ImportInputError) return error;
  if (error instanceof LineTooLongError) {
    return new ImportInputError(
      `${name}:${error.line}: the line is longer than ${MAX_LINE_CHARS.toLocaleString('en-US')} characters (${MAX_LINE_MIB}), the most the importer reads as one row`,
    );
  }
  if (error instanceof CsvSyntaxError) {
    return new ImportInputError(`${name}:${error.line}: malformed CSV: ${error.message}`);
  }
  if (
    error instanceof TypeError &&
    (error as { code?: string }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA'
  ) {
    return new ImportInputError(
      `${name}: the text is not valid UTF-8${gzip ? '' : ' (a compressed file other than gzip?)'}`,
    );
  }
  const code = (error as { code?: string }).code;
  if (gzip && typeof code === 'string' && code.startsWith('Z_')) {
    return new ImportInputError(
      `${name}: the gzip data is corrupt or truncated (${(error as Error).message})`,
    );
  }
  return openError(name, error);
}
