/**
 * Validation at the EVM source's edge: node answers (logs, block headers, quantities) checked and
 * decoded, so that malformed data becomes a retryable `InvalidRpcResponseError` and never reaches
 * the indexer; the caller's addresses and block numbers checked too. Also the general path of
 * `getTransfers`, for the answers the log scanner leaves to it.
 */
import type { TransferRecord } from '../../internal/records.js';
import { InvalidRpcResponseError } from '../jsonrpc/errors.js';
import { BALANCE_EVENT_OF_TOPIC, decodeBalanceEventLog, decodeTransferLog, TRANSFER_TOPIC } from './abi.js';
import type { ScannedTransfers } from './log-scanner.js';
import type { BalanceEvent, EvmBlockHeader, EvmLog } from './types.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * The general path of `getTransfers`, for the answers `scanTransferLogs` leaves to it: the
 * `result` of an `eth_getLogs` answer, validated and decoded. The scanner's tests hold the two
 * paths to the same output.
 */
export function transfersOfLogsAnswer(result: unknown, from: number, to: number): ScannedTransfers {
  const logs = parseLogs(result, from, to);
  const transfers: TransferRecord[] = [];
  const events: BalanceEvent[] = [];
  for (const log of logs) {
    if (log.topics[0] === TRANSFER_TOPIC) {
      const transfer = decodeTransferLog(log, log.blockTimestamp ?? -1);
      if (transfer !== null) transfers.push(transfer);
    } else {
      const event = decodeBalanceEventLog(log);
      if (event !== null) events.push(event);
    }
  }
  return { transfers, events, logCount: logs.length };
}

/**
 * The logs of an `eth_getLogs` result for blocks `from..to`, validated, in chain order, without
 * the `removed` ones; all of them with the Transfer topic or a balance event's (`INDEXED_TOPICS`).
 */
export function parseLogs(raw: unknown, from: number, to: number): EvmLog[] {
  if (!Array.isArray(raw)) throw new InvalidRpcResponseError('eth_getLogs result is not an array');
  const logs: EvmLog[] = [];
  const hashOfBlock = new Map<number, string>();
  for (const item of raw) {
    if (!isRecord(item)) throw new InvalidRpcResponseError('eth_getLogs: log is not an object');
    if (item.removed !== undefined && typeof item.removed !== 'boolean') {
      throw new InvalidRpcResponseError('eth_getLogs: log.removed is not a boolean');
    }
    if (item.removed === true) continue;
    const log = parseLog(item);
    if (log.blockNumber < from || log.blockNumber > to) {
      throw new InvalidRpcResponseError(`eth_getLogs: log of block ${log.blockNumber} outside ${from}-${to}`);
    }
    const topic0 = log.topics[0];
    if (topic0 !== TRANSFER_TOPIC && (topic0 === undefined || !BALANCE_EVENT_OF_TOPIC.has(topic0)))
      throw new InvalidRpcResponseError(
        'eth_getLogs: log without the Transfer topic or a balance event topic',
      );
    // Two hashes for one height mean the node reorganised during the query: ask again.
    const known = hashOfBlock.get(log.blockNumber);
    if (known === undefined) hashOfBlock.set(log.blockNumber, log.blockHash);
    else if (known !== log.blockHash) {
      throw new InvalidRpcResponseError(`eth_getLogs: two block hashes for block ${log.blockNumber}`);
    }
    logs.push(log);
  }
  // Nodes answer in chain order already, which this sort checks in linear time.
  logs.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  for (let i = 1; i < logs.length; i++) {
    const [a, b] = [logs[i - 1]!, logs[i]!];
    if (a.blockNumber === b.blockNumber && a.logIndex === b.logIndex) {
      throw new InvalidRpcResponseError(`eth_getLogs: duplicate log ${b.blockNumber}:${b.logIndex}`);
    }
  }
  return logs;
}

/*
 * Validation of the hex fields of logs runs for every log of a backfill, so it is written for
 * speed: one pass over the characters with a lookup table, and no new string unless the node
 * sent upper-case digits (regular expressions and toLowerCase cost several times as much; see
 * docs/benchmarks.md, "Where the time goes").
 */

/** Per ASCII code: 1 for 0-9 and a-f, 2 for A-F, 0 for anything else. */
const HEX_DIGIT = new Uint8Array(128);
for (const c of '0123456789abcdef') HEX_DIGIT[c.charCodeAt(0)] = 1;
for (const c of 'ABCDEF') HEX_DIGIT[c.charCodeAt(0)] = 2;

/**
 * `value` if it is `0x` followed by hex digits (`digits` of them, or any even number when
 * `digits` is -1), lower-cased; otherwise an InvalidRpcResponseError naming `field`.
 */
function parseHex(value: unknown, digits: number, field: string): string {
  if (
    typeof value !== 'string' ||
    (digits === -1 ? value.length % 2 !== 0 : value.length !== digits + 2) ||
    value.charCodeAt(0) !== 48 /* 0 */ ||
    value.charCodeAt(1) !== 120 /* x */
  ) {
    throw new InvalidRpcResponseError(`${field} is malformed`);
  }
  let kinds = 0;
  for (let i = 2; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const kind = code < 128 ? HEX_DIGIT[code]! : 0;
    if (kind === 0) throw new InvalidRpcResponseError(`${field} is malformed`);
    kinds |= kind;
  }
  return kinds & 2 ? value.toLowerCase() : value;
}

function parseLog(item: Record<string, unknown>): EvmLog {
  const topics = item.topics;
  if (!Array.isArray(topics) || topics.length > 4)
    throw new InvalidRpcResponseError('eth_getLogs: bad log.topics');
  const parsedTopics: string[] = new Array(topics.length);
  for (let i = 0; i < topics.length; i++) parsedTopics[i] = parseHex(topics[i], 64, 'log.topics[]');
  const log: EvmLog = {
    address: parseHex(item.address, 40, 'log.address'),
    topics: parsedTopics,
    data: parseHex(item.data, -1, 'log.data'),
    blockNumber: parseQuantity(item.blockNumber, 'log.blockNumber'),
    blockHash: parseHex(item.blockHash, 64, 'log.blockHash'),
    transactionHash: parseHex(item.transactionHash, 64, 'log.transactionHash'),
    transactionIndex: parseQuantity(item.transactionIndex, 'log.transactionIndex'),
    logIndex: parseQuantity(item.logIndex, 'log.logIndex'),
  };
  if (item.blockTimestamp !== undefined && item.blockTimestamp !== null) {
    log.blockTimestamp = parseQuantity(item.blockTimestamp, 'log.blockTimestamp');
  }
  return log;
}

/** A block header from `eth_getBlockByNumber`, which must be block `expected`. */
export function parseHeader(raw: unknown, expected: number): EvmBlockHeader {
  if (!isRecord(raw)) throw new InvalidRpcResponseError('eth_getBlockByNumber: block is not an object');
  const header: EvmBlockHeader = {
    number: parseQuantity(raw.number, 'block.number'),
    hash: parseHex(raw.hash, 64, 'block.hash'),
    parentHash: parseHex(raw.parentHash, 64, 'block.parentHash'),
    timestamp: parseQuantity(raw.timestamp, 'block.timestamp'),
  };
  if (header.number !== expected) {
    throw new InvalidRpcResponseError(
      `eth_getBlockByNumber: asked for block ${expected}, got ${header.number}`,
    );
  }
  return header;
}

/** A JSON-RPC quantity (`0x` and 1 to 16 hex digits) that fits in a safe integer. */
export function parseQuantity(value: unknown, field: string): number {
  if (
    typeof value !== 'string' ||
    value.length < 3 ||
    value.length > 18 ||
    value.charCodeAt(0) !== 48 /* 0 */ ||
    value.charCodeAt(1) !== 120 /* x */
  ) {
    throw new InvalidRpcResponseError(`${field} is not a hex quantity`);
  }
  for (let i = 2; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 128 || HEX_DIGIT[code] === 0) {
      throw new InvalidRpcResponseError(`${field} is not a hex quantity`);
    }
  }
  // Number() reads `0x…` as hexadecimal; the characters were checked above.
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new InvalidRpcResponseError(`${field} is out of range`);
  return n;
}

/** A caller's address, checked and lower-cased (a TypeError otherwise). */
export function normalizeAddress(address: string): string {
  if (!ADDRESS.test(address)) throw new TypeError(`not an EVM address: ${address}`);
  return address.toLowerCase();
}

/** A caller's block number, checked (a RangeError otherwise). */
export function assertBlockNumber(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a block number: ${n}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
