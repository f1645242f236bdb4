import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CsvSyntaxError, createCsvReader } from './csv.js';
import { LineTooLongError } from './text.js';

/** All records of `text`, fed in chunks of the given sizes (cycled). */
function read(
  text: string,
  sizes: number[] = [text.length || 1],
  maxLineChars?: number,
): [string[], number][] {
  const out: [string[], number][] = [];
  const reader = createCsvReader(
    (fields, line) => out.push([fields, line]),
    maxLineChars === undefined ? {} : { maxLineChars },
  );
  let pos = 0;
  for (let k = 0; pos < text.length; k++) {
    const size = sizes[k % sizes.length]!;
    reader.push(text.slice(pos, pos + size));
    pos += size;
  }
  reader.end();
  return out;
}

/** RFC 4180 writer, to round-trip random records. */
function write(records: string[][], eol: string): string {
  const cell = (v: string) => (/[",\r\n]/.test(v) || v === '' ? `"${v.replaceAll('"', '""')}"` : v);
  return records.map((r) => r.map(cell).join(',')).join(eol) + eol;
}

describe('CSV reader', () => {
  test('plain records, with line numbers, CRLF and LF alike, blank lines skipped', () => {
    assert.deepEqual(read('a,b\r\n1,2\r\n\r\n3,4'), [
      [['a', 'b'], 1],
      [['1', '2'], 2],
      [['3', '4'], 4],
    ]);
    assert.deepEqual(read('\ufeffa,b\n1,\n'), [
      [['a', 'b'], 1],
      [['1', ''], 2],
    ]);
  });

  test('quoted fields hold commas, doubled quotes and line breaks; lines are counted through them', () => {
    const text = 'x,y\n"a,b","say ""hi"""\n"two\nlines",z\r\nlast,"q"\n';
    assert.deepEqual(read(text), [
      [['x', 'y'], 1],
      [['a,b', 'say "hi"'], 2],
      [['two\nlines', 'z'], 3],
      [['last', 'q'], 5],
    ]);
  });

  test('any chunking gives the same records (random records, every chunk size from 1 to 9)', () => {
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const alphabet = ['a', '0', 'x', ',', '"', '\n', '\r\n', ' ', 'é'];
    const records = Array.from({ length: 200 }, () =>
      Array.from({ length: 1 + Math.floor(random() * 5) }, () =>
        Array.from(
          { length: Math.floor(random() * 6) },
          () => alphabet[Math.floor(random() * alphabet.length)],
        ).join(''),
      ),
    );
    for (const eol of ['\n', '\r\n']) {
      const text = write(records, eol);
      const whole = read(text).map(([fields]) => fields);
      assert.deepEqual(whole, records);
      for (let size = 1; size <= 9; size++) assert.deepEqual(read(text, [size, size + 3]), read(text));
    }
  });

  test('malformed quoting is refused with the line of the record', () => {
    const fails = (text: string, message: RegExp, line: number) =>
      assert.throws(
        () => read(text),
        (e: unknown) => e instanceof CsvSyntaxError && message.test(e.message) && e.line === line,
      );
    fails('a,b\n1,x"y\n', /a quote inside an unquoted field/, 2);
    fails('a,b\n"1"x,2\n', /unexpected "x" after a closing quote/, 2);
    fails('a,b\n\n"1,2\n3,4\n', /not closed before the end/, 3);
  });

  test('a record longer than the maximum is refused with its first line, however the text is cut', () => {
    // 10 characters (a \r included, the \n not) is the most; quoted line breaks count too.
    const ok = 'a,b\n123456789\r\n"1\n3",5678\n';
    for (let size = 1; size <= ok.length; size++) {
      assert.deepEqual(read(ok, [size], 10), [
        [['a', 'b'], 1],
        [['123456789'], 2],
        [['1\n3', '5678'], 3],
      ]);
    }
    for (const [text, line] of [
      ['a,b\n\n12345678901\n', 3],
      ['a,b\n"1\n3",56789\n', 2],
      ['a,b\n12345678901', 2],
    ] as const) {
      for (let size = 1; size <= text.length; size++) {
        assert.throws(
          () => read(text, [size], 10),
          (e: unknown) => e instanceof LineTooLongError && e.line === line,
          `${JSON.stringify(text)} in chunks of ${size}`,
        );
      }
    }
  });
});
