/**
 * The log scanner's interned address strings: one string object per address it meets (the
 * comment below says why). A cache with its own state, called when a log's address is not the
 * previous log's.
 */

/** Per byte: the value of a lower-case hex digit (the scanner has checked the digits already). */
const HEX_VALUE = new Uint8Array(256);
for (let d = 0; d < 16; d++) HEX_VALUE['0123456789abcdef'.charCodeAt(d)] = d;

/**
 * Addresses met before, as strings, found by the last 7 of their 40 hex digits (a small integer
 * key) and confirmed against their digits, kept as bytes beside them.
 *
 * A backfill's logs name the same few tokens and holders again and again. Giving each of them one
 * string object, made once, saves making (and later flattening) a new `"0x" + slice` per log, and
 * everything downstream keys maps by address: V8 keeps a string's hash in the string, so one
 * object per address is hashed once instead of once per transfer (the batch's grouping by holder,
 * the writer thread's dictionary, the balance cache). Two addresses with the same key take turns
 * in it. Everything is dropped when {@link INTERNED_LIMIT} addresses were made (about 150 bytes
 * each), so a long backfill of many holders does not keep them all.
 */
const INTERNED_LIMIT = 100_000;
const internedByKey = new Map<number, number>();
const internedStrings: string[] = [];
let internedDigits = new Uint8Array(40 * 1024);

/** The address whose 40 digits start at `b[digits]` (already checked lower-case hex), as `0x…`. */
export function internAddress(b: Buffer, digits: number): string {
  let key = 0;
  for (let k = digits + 33; k < digits + 40; k++) key = key * 16 + HEX_VALUE[b[k]!]!;
  const entry = internedByKey.get(key);
  if (entry !== undefined) {
    const at = entry * 40;
    let k = 0;
    while (k < 40 && internedDigits[at + k] === b[digits + k]) k++;
    if (k === 40) return internedStrings[entry]!;
  }
  if (internedStrings.length === INTERNED_LIMIT) {
    internedByKey.clear();
    internedStrings.length = 0;
  }
  const made = internedStrings.length;
  if ((made + 1) * 40 > internedDigits.length) {
    const grown = new Uint8Array(internedDigits.length * 2);
    grown.set(internedDigits);
    internedDigits = grown;
  }
  internedDigits.set(b.subarray(digits, digits + 40), made * 40);
  // A string of its own (a slice of the answer would keep the whole answer alive).
  const address = `0x${b.toString('latin1', digits, digits + 40)}`;
  internedStrings.push(address);
  internedByKey.set(key, made);
  return address;
}
