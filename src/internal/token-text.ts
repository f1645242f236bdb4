/**
 * Names and symbols of tokens come from contracts (`name()`, `symbol()`, NEO asset names): anyone
 * who deploys a contract chooses them. A hostile one can answer a megabyte name, which would be
 * stored and served on every page that shows the token, or hide text behind control and bidi
 * characters. Every place where such text enters (the chain readers, the store's write of a new
 * token, the API's answers) cleans it with {@link cleanTokenText}, so the rule is the same in
 * every shape. docs/api.md ("EVM token metadata", "NEO names") documents the limits.
 */

/**
 * The longest token name kept, in code points. The official token-list schema allows 60;
 * real names run far below (`Wrapped liquid staked Ether 2.0` is 31), so no honest name is cut.
 */
export const MAX_TOKEN_NAME_CHARS = 128;
/** The longest token symbol kept, in code points (the token-list schema allows 20). */
export const MAX_TOKEN_SYMBOL_CHARS = 32;

/** Line breaks and tabs: they separate words, so they become a space rather than vanish. */
const SPACING = /[\t\n\v\f\r\u0085\u2028\u2029]/gu;
/**
 * Controls (C0, DEL, C1), lone surrogates, and format characters (bidi overrides and isolates,
 * zero-width space, word joiner, BOM, soft hyphen, tag characters...) except ZWNJ and ZWJ, which
 * emoji sequences and several scripts need.
 */
const HOSTILE = /[\p{Cc}\p{Cs}]|(?![\u200c\u200d])\p{Cf}/gu;
/** Anything {@link cleanTokenText} would change, apart from the length and surrounding spaces. */
const SUSPECT = /[\p{Cc}\p{Cs}\p{Cf}\u2028\u2029]/u;

/**
 * `text` as it may be stored and shown: line breaks and tabs as spaces, control, lone surrogate
 * and invisible format characters removed, white space trimmed, then cut to `maxChars` code points
 * (a surrogate pair is never split) and trimmed again. `""` when nothing visible is left, which
 * reads as "no name" (and lets a token list fill it).
 */
export function cleanTokenText(text: string, maxChars: number): string {
  if (!Number.isSafeInteger(maxChars) || maxChars < 1) {
    throw new RangeError(`maxChars must be a positive integer, got ${maxChars}`);
  }
  if (text.length <= maxChars && !SUSPECT.test(text) && text.trim() === text) return text;
  // Only a prefix can survive: each kept code point is at most two UTF-16 units. Cleaning
  // slices (growing, for text that is mostly stripped) keeps a megabyte answer cheap.
  let budget = maxChars * 2 + 64;
  let rest = text;
  let out = '';
  while (rest !== '') {
    let head = rest.slice(0, budget);
    // Do not cut a pair: its high half alone would be dropped as a lone surrogate.
    if (head.length < rest.length && /[\ud800-\udbff]$/.test(head)) head = rest.slice(0, budget + 1);
    rest = rest.slice(head.length);
    budget *= 2;
    out = (out + head.replace(SPACING, ' ').replace(HOSTILE, '')).trimStart();
    const cut = cutCodePoints(out, maxChars);
    if (cut !== null) return cut.trimEnd();
  }
  return out.trimEnd();
}

/** The first `max` code points of `text`, or null when it has no more than `max`. */
function cutCodePoints(text: string, max: number): string | null {
  if (text.length <= max) return null;
  let units = 0;
  let count = 0;
  while (units < text.length) {
    if (count === max) return text.slice(0, units);
    const code = text.charCodeAt(units);
    units += code >= 0xd800 && code <= 0xdbff && units + 1 < text.length ? 2 : 1;
    count++;
  }
  return null;
}

/** The metadata with its name and symbol cleaned ({@link cleanTokenText}); the same object when clean. */
export function cleanTokenMetadata<T extends { name: string; symbol: string }>(metadata: T): T {
  const name = cleanTokenText(metadata.name, MAX_TOKEN_NAME_CHARS);
  const symbol = cleanTokenText(metadata.symbol, MAX_TOKEN_SYMBOL_CHARS);
  if (name === metadata.name && symbol === metadata.symbol) return metadata;
  return { ...metadata, name, symbol };
}
