import { readFileSync, statSync } from 'node:fs';
import { UserError } from './errors.js';

/**
 * Reads a JSON file the user named (a config file, a token list). Every failure is a one-line
 * `UserError` that starts with `label`: a missing file, a directory, a file over `maxBytes`, or
 * invalid JSON with its line and column.
 */
export function readJsonFile(
  path: string,
  options: { label: string; what: string; maxBytes: number },
): unknown {
  const { label, what, maxBytes } = options;
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > maxBytes) {
      throw new UserError(`${label}: ${size} bytes is too large for ${what} (at most ${maxBytes})`);
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code;
    throw new UserError(`${label}: cannot read ${what} (${why ?? 'unreadable'})`);
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UserError(`${label}: not valid JSON (${jsonErrorWhere(error, text)})`);
  }
}

/**
 * Where `JSON.parse` failed, as `unexpected '}' at line 4, column 1`. V8's own message gives a
 * position only for some errors (and a multi-line excerpt for others), so the text is scanned
 * again by a small JSON reader that stops at the first character JSON does not allow there.
 */
function jsonErrorWhere(error: unknown, text: string): string {
  const offset = firstJsonError(text);
  if (offset === undefined) return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  const c = text[offset];
  const shown = c === undefined ? '' : /[\x20-\x7e]/.test(c) ? c : JSON.stringify(c).slice(1, -1);
  const what = c === undefined ? 'unexpected end of the file' : `unexpected '${shown}'`;
  return `${what} at line ${line}, column ${column}`;
}

/** Offset of the first character that makes `text` invalid JSON; undefined if it is valid. */
export function firstJsonError(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
    throw new JsonSyntaxAt(i);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (c: string) => {
    if (text[i] !== c) fail();
    i++;
  };
  const string = () => {
    expect('"');
    while (text[i] !== '"') {
      if (i >= text.length || text.charCodeAt(i) < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        const escaped = /^(u[0-9a-fA-F]{4}|["\\/bfnrt])/.exec(text.slice(i, i + 5));
        if (escaped === null) fail();
        i += escaped![0].length - 1;
      }
      i++;
    }
    i++;
  };
  // A list of items between `open` and `close`, separated by commas.
  const items = (open: string, close: string, item: () => void) => {
    expect(open);
    space();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      item();
      space();
      if (text[i] === close) break;
      expect(',');
    }
    i++;
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === '{') {
      items('{', '}', () => {
        space();
        string();
        space();
        expect(':');
        value();
      });
    } else if (c === '[') {
      items('[', ']', value);
    } else if (c === '"') {
      string();
    } else {
      const token = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
      if (token === null) fail();
      i += token![0].length;
    }
  };
  try {
    value();
    space();
    return i < text.length ? i : undefined;
  } catch (error) {
    if (error instanceof JsonSyntaxAt) return error.offset;
    throw error;
  }
}

class JsonSyntaxAt {
  constructor(readonly offset: number) {}
}
