/**
 * The fast path for the biggest answers the indexer reads: `eth_getLogs` answers of thousands of
 * Transfer logs.
 *
 * The general path is `JSON.parse` (ten strings and two objects per log), then validation, then
 * decoding into a `TransferRecord`: three passes and most of the garbage of a backfill. This scanner
 * makes one pass over the answer's bytes, validates each log as it goes and builds the
 * `TransferRecord` (or only counts the log, for an ERC-721 one) straight from them.
 *
 * It is deliberately narrow. It accepts only the plain shape nodes send: a JSON-RPC envelope with
 * `jsonrpc`, `id` and `result`, logs with lower-case hex, no escapes, logs in chain order without
 * `removed: true`. For anything else (an error answer, upper-case hex, an escape, a log out of
 * order or out of range, a duplicate key, any malformed JSON) it returns null, and the caller
 * decodes the text with the general path, which then accepts or rejects the answer exactly as
 * before. So the scanner never decides that an answer is bad; it only ever saves work on good ones,
 * and for those it must give what the general path gives: `log-scanner.test.ts` checks that on
 * the real mainnet fixtures and on thousands of mutated answers.
 *
 * It is cheaper than JSON.parse, validation and decoding, with a fraction of the garbage
 * (docs/benchmarks.md, "Where the time goes"). Everything is read from the bytes, and the answer
 * is never made a string: `String#startsWith` and `indexOf` on a megabyte string cost more than
 * the comparisons they make, and each such string is a large-object allocation that brings the
 * next full garbage collection nearer. The strings a
 * transfer keeps (hashes, amounts) are copies of a few bytes, so no transfer keeps its answer alive.
 */
import { isAscii } from 'node:buffer';
import type { TransferRecord } from '../../internal/records.js';
import { scanPlainAnswer } from './log-scanner-loop.js';
import type { BalanceEvent } from './types.js';

/** What {@link scanTransferLogs} reads from one answer. */
export interface ScannedTransfers {
  /** Fungible transfers, in chain order; `time` is -1 where the log had no `blockTimestamp`. */
  transfers: TransferRecord[];
  /** Balance events (`decodeBalanceEventLog`), in chain order. */
  events: BalanceEvent[];
  /** Logs in the answer, transfers or not (for the range planner). */
  logCount: number;
}

/**
 * Reads the `eth_getLogs` answer `bytes` to the request with id `id`, for blocks `from..to`, or
 * returns null when it is not the plain shape (see the module comment).
 */
export function scanTransferLogs(
  bytes: Buffer,
  id: number,
  from: number,
  to: number,
): ScannedTransfers | null {
  // An ASCII body only, one byte per character (anything else is left to the general path).
  if (!isAscii(bytes)) return null;
  return scanPlainAnswer(bytes, id, from, to);
}
