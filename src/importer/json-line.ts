/**
 * One line of a JSON-lines export as a flat map of texts, with numbers kept exactly as written.
 *
 * `JSON.parse` cannot be used: ethereum-etl writes `value` as a bare JSON number that often
 * exceeds 2^53 (it would come back rounded), and Node 20's reviver does not see the source text.
 * This scanner keeps every scalar as its text: strings unescaped, numbers as their literal
 * (`7056176614974947328`, or `1.5e18`, which the column checks then refuse), `true`/`false`
 * as those words, `null` as null. Nested objects and arrays are skipped over and read as
 * {@link NESTED}, which no column accepts.
 */

/** The text given to an object or array value: never a valid column value. */
export const NESTED = '<a JSON object or array>';

/** A malformed line; `column` is the 1-based character position of the fault. */
export class JsonLineError extends Error {
  override name = 'JsonLineError';
  readonly column: number;
  constructor(message: string, column: number) {
    super(message);
    this.column = column;
  }
}

/** Parses one line holding one JSON object. Keys map to their values' texts (see the module comment). */
export function parseJsonLine(text: string): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const n = text.length;
  let i = 0;

  const fail = (message: string, at = i): never => {
    throw new JsonLineError(message, at + 1);
  };
  const skipSpace = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 13 || c === 10) i++;
      else return;
    }
  };

  function readString(): string {
    // At the opening quote. Fast path: no escapes.
    const start = ++i;
    for (;;) {
      if (i >= n) fail('a string is not closed', start - 1);
      const c = text.charCodeAt(i);
      if (c === 34) {
        const value = text.slice(start, i);
        i++;
        return value;
      }
      if (c === 92) break;
      if (c < 32) fail('a control character inside a string');
      i++;
    }
    let value = text.slice(start, i);
    for (;;) {
      if (i >= n) fail('a string is not closed', start - 1);
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return value;
      }
      if (c < 32) fail('a control character inside a string');
      if (c !== 92) {
        value += text[i];
        i++;
        continue;
      }
      const e = text[i + 1];
      i += 2;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          value += e;
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'n':
          value += '\n';
          break;
        case 'r':
          value += '\r';
          break;
        case 't':
          value += '\t';
          break;
        case 'u': {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('a bad \\u escape', i - 2);
          value += String.fromCharCode(Number.parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          fail('a bad escape in a string', i - 2);
      }
    }
  }

  function readNumber(): string {
    const start = i;
    if (text.charCodeAt(i) === 45 /* - */) i++;
    const digits = () => {
      const from = i;
      while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
      if (i === from) fail('a malformed number', start);
    };
    if (text.charCodeAt(i) === 48 /* 0 */) i++;
    else digits();
    if (text.charCodeAt(i) === 46 /* . */) {
      i++;
      digits();
    }
    const e = text.charCodeAt(i);
    if (e === 101 || e === 69) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === 43 || sign === 45) i++;
      digits();
    }
    return text.slice(start, i);
  }

  /** Skips a nested object or array (at its opening bracket), strings included. */
  function skipNested(): void {
    const start = i;
    let depth = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        readString();
        continue;
      }
      if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        depth--;
        if (depth === 0) {
          i++;
          return;
        }
      }
      i++;
    }
    fail('an object or array is not closed', start);
  }

  function readValue(): string | null {
    const c = text.charCodeAt(i);
    if (c === 34) return readString();
    if (c === 45 || (c >= 48 && c <= 57)) return readNumber();
    if (c === 123 || c === 91) {
      skipNested();
      return NESTED;
    }
    for (const [word, value] of [
      ['true', 'true'],
      ['false', 'false'],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    return fail(i >= n ? 'the line ends where a value should be' : 'an unexpected character');
  }

  skipSpace();
  if (text.charCodeAt(i) !== 123) fail('expected a JSON object ({ ... }) on the line');
  i++;
  skipSpace();
  if (text.charCodeAt(i) === 125) i++;
  else {
    for (;;) {
      skipSpace();
      if (text.charCodeAt(i) !== 34) fail('expected a key in double quotes');
      const key = readString();
      skipSpace();
      if (text.charCodeAt(i) !== 58) fail('expected ":" after a key');
      i++;
      skipSpace();
      out.set(key, readValue());
      skipSpace();
      const c = text.charCodeAt(i);
      i++;
      if (c === 125) break;
      if (c !== 44) fail('expected "," or "}"', i - 1);
    }
  }
  skipSpace();
  if (i < n) fail('unexpected text after the object');
  return out;
}
