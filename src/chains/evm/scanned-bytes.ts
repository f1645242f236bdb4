/**
 * What the log scanner's hot loop (`log-scanner-loop.ts`) compares bytes with, and its decoding of
 * the balance events (WETH9's, Tether's: see abi.ts) from the bytes of a log, kept apart from the
 * loop. The loop hands in its buffer and the positions it found; nothing here holds state.
 */
import { BALANCE_EVENT_LAYOUT, BALANCE_EVENT_TOPICS } from './abi.js';
import { internAddress } from './address-interning.js';
import type { BalanceEvent, BalanceEventKind } from './types.js';

/** Whether `b` holds `expected` at `at`. Byte by byte: `String#startsWith` costs more than the comparison. */
export function bytesAt(b: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (at + expected.length > b.length) return false;
  for (let k = 0; k < expected.length; k++) if (b[at + k] !== expected[k]) return false;
  return true;
}

export const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** The balance events' topics (abi.ts), compared only with a topic that is not Transfer's. */
const BALANCE_TOPIC_BYTES = Object.entries(BALANCE_EVENT_TOPICS).map(
  ([kind, topic]) => [kind as BalanceEventKind, ascii(topic)] as const,
);

/** The balance event whose topic is at `at`, or null. */
export function balanceKindAt(b: Uint8Array, at: number): BalanceEventKind | null {
  for (const [kind, topic] of BALANCE_TOPIC_BYTES) if (bytesAt(b, at, topic)) return kind;
  return null;
}

/** A balance event in its contract's layout, as `decodeBalanceEventLog` decodes it, or null. */
export function scannedBalanceEvent(
  b: Buffer,
  kind: BalanceEventKind,
  address: number,
  topics: readonly number[],
  topicCount: number,
  data: number,
  dataDigits: number,
  blockNumber: number,
  logIndex: number,
  txHash: number,
): BalanceEvent | null {
  const layout = BALANCE_EVENT_LAYOUT[kind];
  if (topicCount !== layout.topics || dataDigits !== 64 * layout.words) return null;
  let holder: string | null = null;
  if (layout.topics === 2) holder = internAddress(b, topics[1]! + 26);
  else if (kind === 'destroyedBlackFunds') holder = internAddress(b, data + 26);
  const amountAt = data + 2 + 64 * (layout.words - 1);
  return {
    kind,
    token: internAddress(b, address + 2),
    blockNumber,
    logIndex,
    txHash: b.toString('latin1', txHash, txHash + 66),
    holder,
    amount: BigInt(`0x${b.toString('latin1', amountAt, amountAt + 64)}`),
  };
}
