/**
 * A streaming RFC 4180 CSV reader: text goes in chunk by chunk, records come out as soon as they
 * are complete, so a multi-gigabyte export never sits in memory.
 *
 * Accepted: `,` separators; `\n` or `\r\n` line ends; fields in double quotes, which may hold
 * commas, line breaks and doubled quotes (`""`); a UTF-8 byte order mark at the start; blank
 * lines (skipped). Refused with the line number: a quote inside an unquoted field, text after
 * a closing quote, and a quoted field still open at the end of the input.
 *
 * Written here rather than taken from npm because the importer needs exact line numbers for its
 * error messages and a fast path for the common case (a line without any quote is one
 * `split(',')`), which is what keeps parsing far from being the import's bottleneck.
 */

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

/**
 * A reader that calls `onRecord(fields, line)` for each record, `line` being the physical line
 * (1-based) where the record starts. Throws {@link CsvSyntaxError} from `push`/`end`.
 */
export function createCsvReader(onRecord: (fields: string[], line: number) => void): CsvReader {
  let buffer = '';
  /** Physical line number at which `buffer` starts. */
  let line = 1;
  let started = false;

  function parse(final: boolean): void {
    const text = buffer;
    const n = text.length;
    let pos = 0;
    // Position of the next `"` at or after `pos` (n when none): found once per chunk, not per
    // line, so that a quote-free chunk is scanned for quotes only once.
    let nextQuote = text.indexOf('"');
    if (nextQuote === -1) nextQuote = n;
    while (pos < n) {
      let newline = text.indexOf('\n', pos);
      if (newline === -1) {
        if (!final) break;
        newline = n;
      }
      if (nextQuote < pos) {
        nextQuote = text.indexOf('"', pos);
        if (nextQuote === -1) nextQuote = n;
      }
      if (nextQuote >= newline) {
        let end = newline;
        if (end > pos && text.charCodeAt(end - 1) === 13 /* \r */) end--;
        if (end > pos) onRecord(text.slice(pos, end).split(','), line);
        line++;
        pos = newline + 1;
        continue;
      }
      const record = parseQuotedRecord(text, pos, final, line);
      if (record === null) break; // a quoted field goes on in the next chunk
      onRecord(record.fields, line);
      line += record.lines;
      pos = record.next;
    }
    buffer = pos >= n ? '' : text.slice(pos);
  }

  return {
    push(chunk) {
      if (!started && chunk.length > 0) {
        started = true;
        if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      }
      buffer = buffer.length === 0 ? chunk : buffer + chunk;
      parse(false);
    },
    end() {
      parse(true);
      buffer = '';
    },
  };
}

/**
 * One record that holds at least one quote, starting at `start`. Returns null when the text ends
 * before the record does and more may come (`final` false).
 */
function parseQuotedRecord(
  text: string,
  start: number,
  final: boolean,
  line: number,
): { fields: string[]; next: number; lines: number } | null {
  const n = text.length;
  const fields: string[] = [];
  let lines = 0;
  let i = start;
  for (;;) {
    if (text.charCodeAt(i) === 34 /* " */) {
      let value = '';
      let from = i + 1;
      let j: number;
      for (;;) {
        j = text.indexOf('"', from);
        if (j === -1 || (j + 1 === n && !final)) {
          if (!final) return null;
          throw new CsvSyntaxError('a quoted field is not closed before the end of the input', line);
        }
        if (text.charCodeAt(j + 1) === 34) {
          value += text.slice(from, j + 1);
          from = j + 2;
          continue;
        }
        value += text.slice(from, j);
        break;
      }
      for (let k = value.indexOf('\n'); k !== -1; k = value.indexOf('\n', k + 1)) lines++;
      fields.push(value);
      i = j + 1;
      const c = text.charCodeAt(i);
      if (c === 44 /* , */) {
        i++;
        continue;
      }
      if (i >= n) return final ? { fields, next: n, lines: lines + 1 } : null;
      if (c === 10) return { fields, next: i + 1, lines: lines + 1 };
      if (c === 13 && text.charCodeAt(i + 1) === 10) return { fields, next: i + 2, lines: lines + 1 };
      if (c === 13 && i + 1 >= n && !final) return null;
      throw new CsvSyntaxError(`unexpected ${JSON.stringify(text[i])} after a closing quote`, line);
    }
    // An unquoted field: up to the next comma or line break.
    let j = i;
    let c = 0;
    while (j < n) {
      c = text.charCodeAt(j);
      if (c === 44 || c === 10) break;
      if (c === 34) throw new CsvSyntaxError('a quote inside an unquoted field', line);
      j++;
    }
    if (j >= n && !final) return null;
    let end = j;
    if ((j >= n || c === 10) && end > i && text.charCodeAt(end - 1) === 13) end--;
    fields.push(text.slice(i, end));
    if (j >= n) return { fields, next: n, lines: lines + 1 };
    if (c === 10) return { fields, next: j + 1, lines: lines + 1 };
    i = j + 1;
  }
}
