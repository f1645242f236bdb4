/**
 * Limits on, and display of, the untrusted text of an export file.
 */

/**
 * The longest line (in characters, its line break aside) the importer reads: a row of a
 * token-transfers export is a few hundred characters, so a longer line is not one, and the
 * limit bounds the memory a line can take (a gzip of one endless line included). A CSV record
 * whose quoted fields hold line breaks counts as one line, from the line where it starts.
 */
export const MAX_LINE_CHARS = 1 << 20;

/** A line over {@link MAX_LINE_CHARS}; `line` is the physical line (1-based) where it starts. */
export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
  readonly line: number;
  constructor(line: number, max: number) {
    super(`the line is longer than ${max.toLocaleString('en-US')} characters`);
    this.line = line;
  }
}

/**
 * Untrusted text for a message: in double quotes, escaped as JSON escapes it, plus the C1
 * controls, DEL and the invisible or reordering format characters JSON leaves as they are, so
 * that nothing from the file can move the cursor, recolour or retitle the terminal, or hide
 * text. Cut at `max` characters.
 */
export function quote(value: string, max = 80): string {
  const cut = value.length > max ? `${value.slice(0, max - 3)}...` : value;
  return JSON.stringify(cut).replace(UNSAFE, escapeChar);
}

/** Like {@link quote} for a file name: left as it is unless it holds such characters. */
export function safeName(name: string): string {
  return hasControl(name) || UNSAFE_TEST.test(name) ? quote(name, Infinity) : name;
}

/** Whether `text` holds a C0 control character (which JSON escapes, and a terminal obeys). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 32) return true;
  return false;
}

const UNSAFE_CLASS =
  '[\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb]';
const UNSAFE = new RegExp(UNSAFE_CLASS, 'g');
const UNSAFE_TEST = new RegExp(UNSAFE_CLASS);
const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
