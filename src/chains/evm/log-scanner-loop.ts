/**
 * The hot path of the log scanner (`log-scanner.ts` says what it accepts and why): the answer being
 * scanned, as module state, the readers over its bytes, and the loop over its logs. They stay
 * together in this one module on purpose: the readers are module functions over module state (see
 * "the answer being scanned" below), and the byte tables and key names they compare with are this
 * module's own constants. The byte comparison and the balance events' decoding are in
 * `scanned-bytes.ts`, called with this module's buffer.
 */
import type { TransferRecord } from '../../internal/records.js';
import { TRANSFER_TOPIC } from './abi.js';
import { internAddress } from './address-interning.js';
import type { ScannedTransfers } from './log-scanner.js';
import { ascii, balanceKindAt, bytesAt, scannedBalanceEvent } from './scanned-bytes.js';
import type { BalanceEvent } from './types.js';

/** Per byte: 0 for 0-9 and a-f, 1 for anything else (upper case goes to the general path). */
const NOT_LOWER_HEX = new Uint8Array(256).fill(1);
for (const c of '0123456789abcdef') NOT_LOWER_HEX[c.charCodeAt(0)] = 0;
/** Per byte: the value of a lower-case hex digit. */
const HEX_VALUE = new Uint8Array(256);
for (let d = 0; d < 16; d++) HEX_VALUE['0123456789abcdef'.charCodeAt(d)] = d;

const QUOTE = 34;
const COMMA = 44;
const COLON = 58;
const ZERO = 48;
const X = 120;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const BACKSLASH = 92;

// Bits of the keys seen in one log: a key seen twice sends the answer to the general path
// (JSON.parse keeps the last value; not worth imitating).
const ADDRESS = 1;
const TOPICS = 2;
const DATA = 4;
const BLOCK_NUMBER = 8;
const BLOCK_HASH = 16;
const TX_HASH = 32;
const TX_INDEX = 64;
const LOG_INDEX = 128;
const REMOVED = 256;
const BLOCK_TIMESTAMP = 512;
const REQUIRED = ADDRESS | TOPICS | DATA | BLOCK_NUMBER | BLOCK_HASH | TX_HASH | TX_INDEX | LOG_INDEX;

/** Whether `b[first..close)` are all lower-case hex digits, without a branch per byte (the hot loop). */
function allLowerHex(b: Uint8Array, first: number, close: number): boolean {
  let bad = 0;
  for (let j = first; j < close; j++) bad |= NOT_LOWER_HEX[b[j]!]!;
  return bad === 0;
}

/** Whether `b[a..a+length)` equals `b[c..c+length)`. */
function sameBytes(b: Uint8Array, a: number, c: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (b[a + k] !== b[c + k]) return false;
  return true;
}

const NAME = {
  jsonrpc: ascii('jsonrpc'),
  id: ascii('id'),
  result: ascii('result'),
  address: ascii('address'),
  removed: ascii('removed'),
  topics: ascii('topics'),
  data: ascii('data'),
  blockNumber: ascii('blockNumber'),
  blockHash: ascii('blockHash'),
  transactionHash: ascii('transactionHash'),
  transactionIndex: ascii('transactionIndex'),
  logIndex: ascii('logIndex'),
  blockTimestamp: ascii('blockTimestamp'),
};
const TRANSFER_TOPIC_BYTES = ascii(TRANSFER_TOPIC);
const FALSE = ascii('false');
const NULL = ascii('null');
const LITERALS = [NULL, ascii('true'), FALSE];
const VERSION = ascii('"2.0"');

const TOKEN_ROLE = 0;
const FROM_ROLE = 1;
const TO_ROLE = 2;

/** Thrown inside the scanner for "not the plain shape"; caught at the top and turned into null. */
class NotPlain extends Error {}
const NOT_PLAIN = new NotPlain();

/**
 * The transfers of the ASCII `eth_getLogs` answer `bytes` to the request `id` for blocks
 * `from..to`, or null when it is not the plain shape.
 */
export function scanPlainAnswer(
  bytes: Buffer,
  id: number,
  from: number,
  to: number,
): ScannedTransfers | null {
  try {
    return scan(bytes, id, from, to);
  } catch (error) {
    if (error === NOT_PLAIN) return null;
    throw error;
  }
}

// ---- the answer being scanned ----
// Module state, set by `scan` for one answer at a time (scanning is synchronous and never
// re-entered), and the readers below are module functions. As closures made inside `scan`, each
// answer made new functions, so a call the optimized code had seen go to one went to another the
// next time ("wrong call target"): V8 threw that code away and compiled these hot functions again,
// several times over a backfill's first seconds.
const EMPTY = Buffer.alloc(0);
let b: Buffer = EMPTY;
let end = 0;
/** Where the last string or key read starts. */
let at = 0;
/** The last quantity read. */
let quantity = 0;
/** The length of the last key read. */
let keyLength = 0;
/** Blocks the answer must stay in. */
let fromBlock = 0;
let toBlock = 0;
// The previous transfer's token, sender and recipient: consecutive logs often repeat them (one
// token's transfers, one sender's batch), and comparing 40 bytes of the answer, which are in the
// CPU's cache, is cheaper than the address cache's lookup, which mostly is not.
const recentAt = [-1, -1, -1];
const recentAddress = ['', '', ''];

function scan(answer: Buffer, id: number, from: number, to: number): ScannedTransfers {
  b = answer;
  end = answer.length;
  at = 0;
  fromBlock = from;
  toBlock = to;
  recentAt.fill(-1);
  recentAddress.fill('');
  try {
    return scanEnvelope(id);
  } finally {
    b = EMPTY; // the answer is not kept alive
  }
}

// ---- small readers; each returns the position after what it read ----
// Characters are read from the bytes (the body is ASCII, one byte per character, or not scanned).
function ws(i: number): number {
  while (i < end) {
    const c = b[i]!;
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
    i++;
  }
  return i;
}
function expect(i: number, code: number): number {
  i = ws(i);
  if (b[i] !== code) throw NOT_PLAIN;
  return i + 1;
}
/**
 * A `"0x…"` string of `digits` characters (-1: any even number); `at` is its `0`. With
 * `checkDigits` false the digits are left for the caller to check: a value that is then compared
 * with bytes already checked (the Transfer topic, the previous log's block hash) needs no pass
 * of its own.
 */
function hexString(i: number, digits: number, checkDigits = true): number {
  i = ws(i);
  if (b[i] !== QUOTE || b[i + 1] !== ZERO || b[i + 2] !== X) throw NOT_PLAIN;
  at = i + 1;
  const first = i + 3;
  let close = first;
  if (digits === -1) {
    while (close < end && b[close] !== QUOTE) close++;
    if (close === end || (close - first) % 2 !== 0) throw NOT_PLAIN;
  } else {
    close = first + digits;
    if (close >= end || b[close] !== QUOTE) throw NOT_PLAIN;
  }
  if (checkDigits && !allLowerHex(b, first, close)) throw NOT_PLAIN;
  return close + 1;
}
/** A `"0x…"` quantity of 1 to 16 lower-case hex digits that fits a safe integer, into `quantity`. */
function quantityString(i: number): number {
  i = ws(i);
  if (b[i] !== QUOTE || b[i + 1] !== ZERO || b[i + 2] !== X) throw NOT_PLAIN;
  let j = i + 3;
  let n = 0;
  while (j < end) {
    const c = b[j]!;
    if (c === QUOTE) break;
    if (NOT_LOWER_HEX[c] !== 0) throw NOT_PLAIN;
    n = n * 16 + HEX_VALUE[c]!;
    j++;
  }
  const digits = j - i - 3;
  if (j >= end || digits < 1 || digits > 16 || n > Number.MAX_SAFE_INTEGER) throw NOT_PLAIN;
  quantity = n;
  return j + 1;
}
/** A key and its colon; the key is at `at`, `keyLength` characters long. */
function key(i: number): number {
  i = ws(i);
  if (b[i] !== QUOTE) throw NOT_PLAIN;
  let close = i + 1;
  while (close < end && b[close] !== QUOTE) {
    if (b[close] === BACKSLASH) throw NOT_PLAIN;
    close++;
  }
  if (close === end) throw NOT_PLAIN;
  at = i + 1;
  keyLength = close - at;
  return expect(close + 1, COLON);
}
function isKey(name: Uint8Array): boolean {
  return keyLength === name.length && bytesAt(b, at, name);
}
/** The bit of the log key just read, or 0 for a key the general path ignores. */
function logKeyBit(): number {
  switch (keyLength) {
    case 7:
      return isKey(NAME.address) ? ADDRESS : isKey(NAME.removed) ? REMOVED : 0;
    case 6:
      return isKey(NAME.topics) ? TOPICS : 0;
    case 4:
      return isKey(NAME.data) ? DATA : 0;
    case 11:
      return isKey(NAME.blockNumber) ? BLOCK_NUMBER : 0;
    case 9:
      return isKey(NAME.blockHash) ? BLOCK_HASH : 0;
    case 15:
      return isKey(NAME.transactionHash) ? TX_HASH : 0;
    case 16:
      return isKey(NAME.transactionIndex) ? TX_INDEX : 0;
    case 8:
      return isKey(NAME.logIndex) ? LOG_INDEX : 0;
    case 14:
      return isKey(NAME.blockTimestamp) ? BLOCK_TIMESTAMP : 0;
    default:
      return 0;
  }
}
/** A value of a key this scanner does not use: a string without escapes, a number, or a literal. */
function skipSimpleValue(i: number): number {
  i = ws(i);
  const c = b[i];
  if (c === QUOTE) {
    const close = b.indexOf(QUOTE, i + 1);
    if (close === -1) throw NOT_PLAIN;
    for (let j = i + 1; j < close; j++) {
      const k = b[j]!;
      if (k === BACKSLASH || k < 32) throw NOT_PLAIN;
    }
    return close + 1;
  }
  for (const literal of LITERALS) if (bytesAt(b, i, literal)) return i + literal.length;
  // A number, as JSON writes it.
  const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(b.toString('latin1', i, i + 40));
  if (match === null) throw NOT_PLAIN;
  return i + match[0].length;
}

// The previous transfer's token, sender and recipient: consecutive logs often repeat them (one
// token's transfers, one sender's batch), and comparing 40 bytes of the answer, which are in the
// CPU's cache, is cheaper than the address cache's lookup, which mostly is not.
function addressOf(role: number, digits: number): string {
  const last = recentAt[role]!;
  if (last !== -1 && sameBytes(b, digits, last, 40)) return recentAddress[role]!;
  recentAt[role] = digits;
  const address = internAddress(b, digits);
  recentAddress[role] = address;
  return address;
}

function scanEnvelope(id: number): ScannedTransfers {
  // ---- the envelope: {"jsonrpc":"2.0","id":<id>,"result":[ … ]}, keys in any order ----
  let i = expect(0, OPEN_BRACE);
  let sawJsonrpc = false;
  let sawId = false;
  let result: ScannedTransfers | null = null;
  for (;;) {
    i = key(i);
    if (isKey(NAME.jsonrpc) && !sawJsonrpc) {
      sawJsonrpc = true;
      i = ws(i);
      if (!bytesAt(b, i, VERSION)) throw NOT_PLAIN;
      i += 5;
    } else if (isKey(NAME.id) && !sawId) {
      sawId = true;
      i = ws(i);
      const digits = ascii(String(id));
      if (!bytesAt(b, i, digits)) throw NOT_PLAIN;
      i += digits.length;
      const after = b[i]!;
      if (after >= 48 && after <= 57) throw NOT_PLAIN; // a longer number
      if (after === 46 || after === 101 || after === 69) throw NOT_PLAIN; // 1.0, 1e0: let JSON.parse judge
    } else if (isKey(NAME.result) && result === null) {
      const logs = readLogs(i);
      result = logs.value;
      i = logs.next;
    } else throw NOT_PLAIN;
    i = ws(i);
    const c = b[i];
    if (c === COMMA) {
      i++;
      continue;
    }
    if (c === CLOSE_BRACE) break;
    throw NOT_PLAIN;
  }
  if (!sawJsonrpc || !sawId || result === null || ws(i + 1) !== end) throw NOT_PLAIN;
  return result;
}

/** The `result` array. */
function readLogs(start: number): { value: ScannedTransfers; next: number } {
  const transfers: TransferRecord[] = [];
  const events: BalanceEvent[] = [];
  let logCount = 0;
  let previousBlock = -1;
  let previousLogIndex = -1;
  let previousBlockHashAt = -1;
  let previousTxHashAt = -1;
  let previousTxHash = '';
  let i = expect(start, OPEN_BRACKET);
  i = ws(i);
  if (b[i] === CLOSE_BRACKET) return { value: { transfers, events, logCount }, next: i + 1 };
  for (;;) {
    // ---- one log ----
    i = expect(i, OPEN_BRACE);
    let seen = 0;
    let address = 0;
    const topics = [0, 0, 0, 0];
    let topicCount = 0;
    let data = 0;
    let dataDigits = 0;
    let blockNumber = 0;
    let blockHash = 0;
    let txHash = 0;
    let txIndex = 0;
    let logIndex = 0;
    let time = -1;
    for (;;) {
      i = key(i);
      const bit = logKeyBit();
      switch (bit) {
        case ADDRESS:
          i = hexString(i, 40);
          address = at;
          break;
        case REMOVED:
          i = ws(i);
          // `removed: true` logs are dropped by the general path; rare enough to leave to it.
          if (!bytesAt(b, i, FALSE)) throw NOT_PLAIN;
          i += 5;
          break;
        case TOPICS:
          i = expect(i, OPEN_BRACKET);
          i = ws(i);
          if (b[i] === CLOSE_BRACKET) i++;
          else {
            for (;;) {
              if (topicCount === 4) throw NOT_PLAIN;
              // The first topic must be one asked for, byte for byte (checked below).
              i = hexString(i, 64, topicCount !== 0);
              topics[topicCount++] = at;
              i = ws(i);
              const c = b[i++];
              if (c === CLOSE_BRACKET) break;
              if (c !== COMMA) throw NOT_PLAIN;
            }
          }
          break;
        case DATA:
          i = hexString(i, -1);
          data = at;
          dataDigits = i - 1 - at - 2;
          break;
        case BLOCK_NUMBER:
          i = quantityString(i);
          blockNumber = quantity;
          break;
        case BLOCK_HASH:
          // Checked below: against the previous log's in the same block, else digit by digit.
          i = hexString(i, 64, false);
          blockHash = at;
          break;
        case TX_HASH:
          i = hexString(i, 64);
          txHash = at;
          break;
        case TX_INDEX:
          i = quantityString(i);
          txIndex = quantity;
          break;
        case LOG_INDEX:
          i = quantityString(i);
          logIndex = quantity;
          break;
        case BLOCK_TIMESTAMP:
          i = ws(i);
          if (bytesAt(b, i, NULL)) i += 4;
          else {
            i = quantityString(i);
            time = quantity;
          }
          break;
        default:
          // Keys the general path ignores (`transactionLogIndex`, `type`, …): a value of any
          // simple kind is skipped, nested ones go to the general path.
          i = skipSimpleValue(i);
      }
      if ((seen & bit) !== 0) throw NOT_PLAIN;
      seen |= bit;
      i = ws(i);
      const c = b[i++];
      if (c === CLOSE_BRACE) break;
      if (c !== COMMA) throw NOT_PLAIN;
    }
    if ((seen & REQUIRED) !== REQUIRED) throw NOT_PLAIN;

    // ---- the general path's checks, on numbers and positions ----
    if (blockNumber < fromBlock || blockNumber > toBlock) throw NOT_PLAIN;
    if (topicCount === 0) throw NOT_PLAIN;
    // Transfer, or else one of the balance events (rare: compared only when it is not Transfer).
    const isTransfer = bytesAt(b, topics[0]!, TRANSFER_TOPIC_BYTES);
    const kind = isTransfer ? null : balanceKindAt(b, topics[0]!);
    if (!isTransfer && kind === null) throw NOT_PLAIN;
    if (blockNumber === previousBlock) {
      if (logIndex <= previousLogIndex || !sameBytes(b, blockHash, previousBlockHashAt, 66)) throw NOT_PLAIN;
    } else if (blockNumber < previousBlock) {
      // Chain order only: anything else is sorted (or refused) by the general path.
      throw NOT_PLAIN;
    } else if (!allLowerHex(b, blockHash + 2, blockHash + 66)) {
      throw NOT_PLAIN;
    }
    previousBlockHashAt = blockHash;

    previousBlock = blockNumber;
    previousLogIndex = logIndex;
    logCount++;

    // ---- decoding: fungible transfers (3 topics and one 32-byte word), as decodeTransferLog ----
    if (kind !== null) {
      const event = scannedBalanceEvent(
        b,
        kind,
        address,
        topics,
        topicCount,
        data,
        dataDigits,
        blockNumber,
        logIndex,
        txHash,
      );
      if (event !== null) events.push(event);
    } else if (topicCount === 3 && dataDigits === 64) {
      // One string per transaction: consecutive logs of a transaction share its hash.
      if (previousTxHashAt === -1 || !sameBytes(b, txHash, previousTxHashAt, 66)) {
        previousTxHashAt = txHash;
        previousTxHash = b.toString('latin1', txHash, txHash + 66);
      }
      transfers.push({
        token: addressOf(TOKEN_ROLE, address + 2),
        blockNumber,
        logIndex,
        txIndex,
        txHash: previousTxHash,
        // An indexed address is left-padded to 32 bytes; the address is the low 20 bytes.
        from: addressOf(FROM_ROLE, topics[1]! + 26),
        to: addressOf(TO_ROLE, topics[2]! + 26),
        value: BigInt(b.toString('latin1', data, data + 66)),
        time,
      });
    }

    i = ws(i);
    const c = b[i++];
    if (c === CLOSE_BRACKET) break;
    if (c !== COMMA) throw NOT_PLAIN;
  }
  return { value: { transfers, events, logCount }, next: i };
}
