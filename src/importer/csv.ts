/**
 * A streaming RFC 4180 CSV reader: text goes in chunk by chunk, records come out as soon as they
 * are complete, so a multi-gigabyte export never sits in memory.
 *
 * Accepted: `,` separators; `\n` or `\r\n` line ends; fields in double quotes, which may hold
 * commas, line breaks and doubled quotes (`""`); a UTF-8 byte order mark at the start; blank
 * lines (skipped). Refused with the line number: a quote inside an unquoted field, text after
 * a closing quote, a quoted field still open at the end of the input, and a record longer than
 * the maximum line length.
 *
 * Every character is looked at once: a record cut by the end of a chunk is carried on from
 * where it stopped (its fields so far, and the state of the field it is in), never parsed again
 * from its start, so a long record costs its length and not its length times its chunks.
 *
 * Written here rather than taken from npm because the importer needs exact line numbers for its
 * error messages and a fast path for the common case (a line without any quote is one
 * `split(',')`), which is what keeps parsing far from being the import's bottleneck. csv-parse
 * was measured against it for issue #15 (`bench/import-csv-parse.ts`) and read slower.
 */
import { LineTooLongError, MAX_LINE_CHARS, quote } from './text.js';

/** A CSV syntax error; `line` is the physical line (1-based) where the bad record starts. */
export class CsvSyntaxError extends Error {
  override name = 'CsvSyntaxError';
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.line = line;
  }
}

export interface CsvReader {
  /** Parses `chunk`, calling the record callback for every record it completes. */
  push(chunk: string): void;
  /** The input has ended: parses what is left (a last line without a line break). */
  end(): void;
}

export interface CsvReaderOptions {
  /** The longest record, in characters without its final line break (default {@link MAX_LINE_CHARS}). */
  maxLineChars?: number;
}

/** Where the reader is inside a record carried over from one chunk to the next. */
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** Just after a quote inside a quoted field: the closing one, or the first of a doubled one. */
const QUOTE_SEEN = 3;
/** A `\r` after a closing quote, which must be followed by `\n`. */
const CR_AFTER_QUOTE = 4;

/**
 * A reader that calls `onRecord(fields, line)` for each record, `line` being the physical line
 * (1-based) where the record starts. Throws {@link CsvSyntaxError} and {@link LineTooLongError}
 * from `push`/`end`.
 */
export function createCsvReader(
  onRecord: (fields: string[], line: number) => void,
  options: CsvReaderOptions = {},
): CsvReader {
  const max = options.maxLineChars ?? MAX_LINE_CHARS;
  /** Physical line at the reading position. */
  let line = 1;
  let started = false;
  // The record in progress when one is carried over (or has quotes): see `record`.
  let inRecord = false;
  let recordLine = 1;
  /** Characters of the record in the chunks before the current one. */
  let recordLength = 0;
  let fields: string[] = [];
  let value = '';
  let quoted = false;
  let state = FIELD_START;

  /** The record ends at `newline`, an index in the chunk whose part of the record began at `from`. */
  function finish(from: number, newline: number): number {
    if (recordLength + newline - from > max) throw new LineTooLongError(recordLine, max);
    line++;
    // A blank line (or a lone \r) is no record; a quoted empty field is one.
    if (quoted || fields.length > 1 || fields[0] !== '') onRecord(fields, recordLine);
    inRecord = false;
    fields = [];
    quoted = false;
    state = FIELD_START;
    return newline + 1;
  }

  /** The chunk ended inside the record: it goes on in the next one. */
  function carry(text: string, from: number): number {
    recordLength += text.length - from;
    if (recordLength > max) throw new LineTooLongError(recordLine, max);
    return -1;
  }

  /**
   * Reads the record in progress from `i` on; returns the position after its line break, or -1
   * when the chunk ends first.
   */
  function record(text: string, i: number): number {
    const n = text.length;
    const from = i;
    for (;;) {
      switch (state) {
        case FIELD_START:
          if (i >= n) return carry(text, from);
          if (text.charCodeAt(i) === 34 /* " */) {
            quoted = true;
            state = QUOTED;
            i++;
          } else state = UNQUOTED;
          continue;
        case UNQUOTED: {
          let j = i;
          let c = 0;
          while (j < n) {
            c = text.charCodeAt(j);
            if (c === 44 /* , */ || c === 10 /* \n */) break;
            if (c === 34) throw new CsvSyntaxError('a quote inside an unquoted field', recordLine);
            j++;
          }
          value = value.length === 0 ? text.slice(i, j) : value + text.slice(i, j);
          if (j >= n) return carry(text, from);
          if (c === 10 && value.charCodeAt(value.length - 1) === 13) value = value.slice(0, -1);
          fields.push(value);
          value = '';
          if (c === 10) return finish(from, j);
          state = FIELD_START;
          i = j + 1;
          continue;
        }
        case QUOTED: {
          const j = text.indexOf('"', i);
          const end = j === -1 ? n : j;
          for (let k = text.indexOf('\n', i); k !== -1 && k < end; k = text.indexOf('\n', k + 1)) line++;
          value = value.length === 0 ? text.slice(i, end) : value + text.slice(i, end);
          if (j === -1) return carry(text, from);
          state = QUOTE_SEEN;
          i = j + 1;
          continue;
        }
        case QUOTE_SEEN: {
          if (i >= n) return carry(text, from);
          const c = text.charCodeAt(i);
          if (c === 34) {
            value += '"';
            state = QUOTED;
            i++;
            continue;
          }
          if (c === 44 || c === 10) {
            fields.push(value);
            value = '';
            if (c === 10) return finish(from, i);
            state = FIELD_START;
            i++;
            continue;
          }
          if (c === 13) {
            state = CR_AFTER_QUOTE;
            i++;
            continue;
          }
          throw new CsvSyntaxError(`unexpected ${quote(text[i]!)} after a closing quote`, recordLine);
        }
        default: // CR_AFTER_QUOTE
          if (i >= n) return carry(text, from);
          if (text.charCodeAt(i) !== 10) throw crAfterQuote();
          fields.push(value);
          value = '';
          return finish(from, i);
      }
    }
  }

  const crAfterQuote = () =>
    new CsvSyntaxError(`unexpected ${quote('\r')} after a closing quote`, recordLine);

  return {
    push(text) {
      if (!started && text.length > 0) {
        started = true;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      const n = text.length;
      let pos = 0;
      if (inRecord) {
        pos = record(text, 0);
        if (pos === -1) return;
      }
      // Position of the next `"` at or after `pos` (n when none): found once per chunk, not per
      // line, so that a quote-free chunk is scanned for quotes only once.
      let nextQuote = text.indexOf('"', pos);
      if (nextQuote === -1) nextQuote = n;
      while (pos < n) {
        const newline = text.indexOf('\n', pos);
        if (nextQuote < pos) {
          nextQuote = text.indexOf('"', pos);
          if (nextQuote === -1) nextQuote = n;
        }
        if (newline !== -1 && nextQuote >= newline) {
          if (newline - pos > max) throw new LineTooLongError(line, max);
          let end = newline;
          if (end > pos && text.charCodeAt(end - 1) === 13 /* \r */) end--;
          if (end > pos) onRecord(text.slice(pos, end).split(','), line);
          line++;
          pos = newline + 1;
          continue;
        }
        // A record with quotes, or one the chunk cuts: read field by field.
        inRecord = true;
        recordLine = line;
        recordLength = 0;
        pos = record(text, pos);
        if (pos === -1) return;
      }
    },
    end() {
      if (!inRecord) return;
      switch (state) {
        case QUOTED:
          throw new CsvSyntaxError('a quoted field is not closed before the end of the input', recordLine);
        case CR_AFTER_QUOTE:
          throw crAfterQuote();
        case UNQUOTED:
          fields.push(value.charCodeAt(value.length - 1) === 13 ? value.slice(0, -1) : value);
          break;
        case QUOTE_SEEN:
          fields.push(value);
          break;
        default: // FIELD_START, after a comma
          fields.push('');
      }
      value = '';
      if (quoted || fields.length > 1 || fields[0] !== '') onRecord(fields, recordLine);
      inRecord = false;
      fields = [];
    },
  };
}
