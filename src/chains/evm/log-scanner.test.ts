import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandomInt as random } from '../../internal/random.js';
import { INDEXED_TOPICS, TRANSFER_TOPIC } from './abi.js';
import { transfersOfLogsAnswer } from './answer-parsing.js';
import { type ScannedTransfers, scanTransferLogs } from './log-scanner.js';
import type { RawLog } from './testing/fixture-node.js';
import { loadFixtureSet } from './testing/fixture-sets.js';

/**
 * The scanner is a shortcut, never a judge: whenever it reads an answer, the general path
 * (JSON.parse, the envelope checks of the RPC client, `transfersOfLogsAnswer`) must accept the
 * same text and give the same transfers. Returns both outcomes.
 */
function bothPaths(text: string, id: number, from: number, to: number) {
  const fast = scanTransferLogs(Buffer.from(text, 'utf8'), id, from, to);
  let slow: ScannedTransfers | Error;
  try {
    const envelope = JSON.parse(text) as Record<string, unknown>;
    if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) {
      throw new Error('not an object');
    }
    if (envelope.error !== undefined || !('result' in envelope) || envelope.id !== id) {
      throw new Error('not a plain answer to this request');
    }
    slow = transfersOfLogsAnswer(envelope.result, from, to);
  } catch (error) {
    slow = error as Error;
  }
  if (fast !== null) {
    assert.ok(
      !(slow instanceof Error),
      `the scanner read an answer the general path refuses: ${String(slow)}`,
    );
    assert.deepEqual(fast, slow);
  }
  return { fast, slow };
}

const hexToNumber = (hex: string): number => Number.parseInt(hex, 16);

/**
 * The recorded mainnet logs of one set the indexer asks for (Transfer's and the balance events'
 * topics), in chain order, and their block span.
 */
function mainnetLogs(dir: string): { logs: RawLog[]; from: number; to: number } {
  const logs = loadFixtureSet(dir)
    .logs.filter((log) => INDEXED_TOPICS.includes(log.topics[0]?.toLowerCase() ?? ''))
    .map((log) => ({ ...log, removed: false }))
    .sort(
      (a, b) =>
        hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) ||
        hexToNumber(a.logIndex) - hexToNumber(b.logIndex),
    );
  const numbers = logs.map((log) => hexToNumber(log.blockNumber));
  return { logs, from: Math.min(...numbers), to: Math.max(...numbers) };
}

const SETS = [
  'ethereum-etl/stream_blocks_17173049_17173050',
  'ethereum-etl/stream_blocks_1755634_1755635',
  'ethereum-etl/export_token_transfers_block_483920',
  'polygon-etl/stream_blocks_9013765-9013767',
  'polygon-etl/export_token_transfers_block_13572468',
];

const answer = (result: unknown, id = 7): string => JSON.stringify({ jsonrpc: '2.0', id, result });

describe('scanTransferLogs', () => {
  it('reads the real mainnet answers exactly as the general path does', () => {
    let transfers = 0;
    let events = 0;
    for (const dir of SETS) {
      const { logs, from, to } = mainnetLogs(dir);
      assert.ok(logs.length > 0, dir);
      const { fast } = bothPaths(answer(logs), 7, from, to);
      assert.ok(fast !== null, `${dir}: the plain answer took the general path`);
      assert.equal(fast.logCount, logs.length);
      transfers += fast.transfers.length;
      events += fast.events.length;
    }
    // 282 + 1 + 2 fungible transfers in the ethereum-etl sets alone (ERC-721 logs are only counted).
    assert.ok(transfers >= 285, `only ${transfers} transfers`);
    // WETH's 30 deposits and 31 withdrawals in blocks 17173049-17173050.
    assert.ok(events >= 61, `only ${events} balance events`);
  });

  it('reads answers in any layout: spaces, key order, extra keys, timestamps, removed: false', () => {
    const { logs, from, to } = mainnetLogs('ethereum-etl/stream_blocks_17173049_17173050');
    const rand = random(1);
    const reordered = logs.map((log, i) => {
      const entries = Object.entries({ ...log, blockTimestamp: `0x${(1_680_000_000 + i).toString(16)}` });
      for (let k = entries.length - 1; k > 0; k--) {
        const j = rand(k + 1);
        [entries[k], entries[j]] = [entries[j]!, entries[k]!];
      }
      return Object.fromEntries([
        ...entries,
        ['transactionLogIndex', '0x0'],
        ['type', 'mined'],
        ['n', 1.5e3],
      ]);
    });
    for (const text of [
      JSON.stringify({ result: reordered, id: 7, jsonrpc: '2.0' }, null, 2),
      answer(reordered).replaceAll(',', ' ,\r\n\t'),
    ]) {
      const { fast } = bothPaths(text, 7, from, to);
      assert.ok(fast !== null, 'a plain answer in another layout took the general path');
      assert.equal(fast.transfers[0]!.time, 1_680_000_000);
    }
    const { fast } = bothPaths(answer([]), 7, 1, 2);
    assert.deepEqual(fast, { transfers: [], events: [], logCount: 0 });
  });

  it('keeps apart addresses that end alike (the address cache is keyed by the last digits)', () => {
    const { logs, from, to } = mainnetLogs('ethereum-etl/stream_blocks_17173049_17173050');
    const word = (address: string): string => `0x${'0'.repeat(24)}${address}`;
    // Same last 7 digits, different elsewhere; each used twice, in turns, as token, from and to.
    const a = `${'1'.repeat(33)}abcdef0`;
    const b = `${'2'.repeat(33)}abcdef0`;
    const c = `${'1'.repeat(32)}3abcdef0`;
    const turns: [string, string, string][] = [
      [a, b, c],
      [b, c, a],
      [c, a, b],
    ];
    const mixed = logs.slice(0, 6).map((log, i) => {
      const [x, y, z] = turns[i % 3]!;
      return {
        ...log,
        address: `0x${x}`,
        topics: [TRANSFER_TOPIC, word(y), word(z)],
        data: `0x${'0'.repeat(62)}ff`,
      };
    });
    const { fast } = bothPaths(answer(mixed), 7, from, to);
    assert.ok(fast !== null);
    assert.deepEqual(
      fast.transfers.map((t) => [t.token, t.from, t.to].map((address) => address.slice(2))),
      mixed.map((_, i) => turns[i % 3]),
    );
  });

  it('leaves everything unusual to the general path', () => {
    const { logs, from, to } = mainnetLogs('ethereum-etl/stream_blocks_17173049_17173050');
    const text = answer(logs);
    const upper = structuredClone(logs);
    upper[3]!.transactionHash = upper[3]!.transactionHash.toUpperCase().replace('0X', '0x');
    const removed = structuredClone(logs) as Record<string, unknown>[];
    removed[5]!.removed = true;
    const nested = structuredClone(logs) as Record<string, unknown>[];
    nested[0]!.extra = { a: [1] };
    const unordered = [logs[1]!, logs[0]!, ...logs.slice(2)];
    const cases: [string, string, number, number, number][] = [
      ['upper-case hex', answer(upper), 7, from, to],
      ['a removed log', answer(removed), 7, from, to],
      ['a nested extra value', answer(nested), 7, from, to],
      ['logs out of order', answer(unordered), 7, from, to],
      ['another id', text, 8, from, to],
      ['a log outside the range', text, 7, from + 1, to],
      ['an escape', text.replace('"0x', '"\\u0030x'), 7, from, to],
      ['a duplicate key', text.replace('"data":', '"data":"0x","data":'), 7, from, to],
      [
        'an error answer',
        JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: -32005, message: 'x' } }),
        7,
        from,
        to,
      ],
      ['trailing text', `${text}x`, 7, from, to],
      ['a numeric id written 7.0', text.replace('"id":7', '"id":7.0'), 7, from, to],
    ];
    for (const [what, body, id, a, b] of cases) {
      assert.equal(bothPaths(body, id, a, b).fast, null, what);
    }
  });

  /** Random corruptions of `logs`' answer: both paths read each alike, or the scanner leaves it. */
  function corruptions(logs: RawLog[], from: number, to: number, count: number, seed: number): number {
    const base = answer(logs);
    const rand = random(seed);
    const alphabet = '0123456789abcdefABCDEF"{}[],: \\x-.eE';
    let read = 0;
    for (let n = 0; n < count; n++) {
      let text = base;
      const edits = 1 + rand(3);
      for (let e = 0; e < edits; e++) {
        const at = rand(text.length);
        const kind = rand(3);
        const c = alphabet[rand(alphabet.length)]!;
        if (kind === 0) text = text.slice(0, at) + c + text.slice(at + 1);
        else if (kind === 1) text = text.slice(0, at) + c + text.slice(at);
        else text = text.slice(0, at) + text.slice(at + 1);
      }
      if (bothPaths(text, 7, from, to).fast !== null) read++;
    }
    return read;
  }

  it('never reads an answer differently from the general path (5,000 random corruptions)', () => {
    const { logs, from, to } = mainnetLogs('ethereum-etl/stream_blocks_1755634_1755635');
    const read = corruptions(logs, from, to, 5_000, 42);
    // Most corruptions break the answer; some (a hex digit for another) leave a valid one, which
    // both paths must read alike. Both kinds must occur for the test to mean anything.
    assert.ok(read > 50 && read < 4_950, `${read} of 5,000 corrupted answers read`);
  });

  it('nor an answer with balance events (1,000 random corruptions of WETH deposits and withdrawals)', () => {
    const { logs } = mainnetLogs('ethereum-etl/stream_blocks_17173049_17173050');
    // Every balance event of the set and as many transfers, in chain order.
    const events = logs.filter((log) => log.topics[0] !== TRANSFER_TOPIC);
    const mixed = [
      ...events,
      ...logs.filter((log) => log.topics[0] === TRANSFER_TOPIC).slice(0, events.length),
    ].sort(
      (a, b) =>
        hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) ||
        hexToNumber(a.logIndex) - hexToNumber(b.logIndex),
    );
    const numbers = mixed.map((log) => hexToNumber(log.blockNumber));
    const [from, to] = [Math.min(...numbers), Math.max(...numbers)];
    assert.equal(bothPaths(answer(mixed), 7, from, to).fast?.events.length, events.length);
    const read = corruptions(mixed, from, to, 1_000, 18);
    assert.ok(read > 10 && read < 990, `${read} of 1,000 corrupted answers read`);
  });
});
