import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BALANCE_EVENT_TOPICS,
  calldata,
  decodeAbiStringOrBytes32,
  decodeAddressWord,
  decodeAggregate3,
  decodeBalanceEventLog,
  decodeDecimals,
  decodeTransferLog,
  decodeUint,
  encodeAggregate3,
  TRANSFER_TOPIC,
} from './abi.js';
import type { EvmLog } from './types.js';

/** ABI encoding of a `string` return value, built independently of the decoder. */
function abiString(bytes: Uint8Array): string {
  const word = (n: number) => n.toString(16).padStart(64, '0');
  const body = Buffer.from(bytes).toString('hex');
  const padded = body.padEnd(Math.ceil(body.length / 64) * 64, '0');
  return `0x${word(32)}${word(bytes.length)}${padded}`;
}

const pad32 = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');

const baseLog: EvmLog = {
  address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
  topics: [
    TRANSFER_TOPIC,
    `0x${pad32('0x1B63142628311395CEAFEEA5667E7C9026C862CA')}`,
    `0x${pad32('0xac4df82fe37ea2187bc8c011a23d743b4f39019a')}`,
  ],
  data: `0x${'ff'.repeat(32)}`,
  blockNumber: 10,
  blockHash: `0x${'11'.repeat(32)}`,
  transactionHash: `0x${'AB'.repeat(32)}`,
  transactionIndex: 3,
  logIndex: 7,
};

describe('transfer log decoding', () => {
  test('a 3-topic, one-word log is a fungible transfer with lower-case fields and a uint256 value', () => {
    assert.deepEqual(decodeTransferLog(baseLog, 1_700_000_000), {
      token: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      blockNumber: 10,
      logIndex: 7,
      txIndex: 3,
      txHash: `0x${'ab'.repeat(32)}`,
      from: '0x1b63142628311395ceafeea5667e7c9026c862ca',
      to: '0xac4df82fe37ea2187bc8c011a23d743b4f39019a',
      value: 2n ** 256n - 1n,
      time: 1_700_000_000,
    });
  });

  test('an ERC-721 transfer (token id as a fourth topic, no data) is not fungible', () => {
    const erc721 = { ...baseLog, topics: [...baseLog.topics, `0x${pad32('0x2a')}`], data: '0x' };
    assert.equal(decodeTransferLog(erc721, 0), null);
  });

  test('other shapes are rejected: wrong topic, extra data, short data, two topics', () => {
    assert.equal(
      decodeTransferLog({ ...baseLog, topics: [`0x${'00'.repeat(32)}`, ...baseLog.topics.slice(1)] }, 0),
      null,
    );
    assert.equal(decodeTransferLog({ ...baseLog, data: `0x${'00'.repeat(64)}` }, 0), null);
    assert.equal(decodeTransferLog({ ...baseLog, data: `0x${'00'.repeat(31)}` }, 0), null);
    assert.equal(decodeTransferLog({ ...baseLog, topics: baseLog.topics.slice(0, 2) }, 0), null);
    // Four topics with a data word is neither ERC-20 nor ERC-721.
    assert.equal(
      decodeTransferLog({ ...baseLog, topics: [...baseLog.topics, `0x${pad32('0x2a')}`] }, 0),
      null,
    );
  });
});

describe('name and symbol decoding', () => {
  test('an ABI string is decoded as UTF-8', () => {
    assert.equal(decodeAbiStringOrBytes32(abiString(Buffer.from('Ünïcode Tøken 🚀'))), 'Ünïcode Tøken 🚀');
  });

  test('a long ABI string spanning several words is decoded whole', () => {
    const text = 'x'.repeat(100);
    assert.equal(decodeAbiStringOrBytes32(abiString(Buffer.from(text))), text);
  });

  test('trailing NULs are trimmed from both forms, inner ones kept', () => {
    assert.equal(decodeAbiStringOrBytes32(abiString(Buffer.from('ETH\0\0\0'))), 'ETH');
    assert.equal(decodeAbiStringOrBytes32(`0x${Buffer.from('MKR').toString('hex').padEnd(64, '0')}`), 'MKR');
    assert.equal(decodeAbiStringOrBytes32(abiString(Buffer.from('A\0B\0'))), 'A\0B');
  });

  test('invalid UTF-8 is replaced, never fatal', () => {
    const bytes = Uint8Array.from([0x41, 0xff, 0xfe, 0x42]);
    assert.equal(decodeAbiStringOrBytes32(abiString(bytes)), 'A\uFFFD\uFFFDB');
    assert.equal(decodeAbiStringOrBytes32(`0x41c3${'00'.repeat(30)}`), 'A\uFFFD');
  });

  test('empty, 0x and garbage answers read as ""', () => {
    for (const hex of [
      '',
      '0x',
      '0xzz',
      '0x123',
      `0x${'00'.repeat(31)}`,
      `0x${'ff'.repeat(64)}`,
      `0x${'00'.repeat(32)}`,
    ]) {
      assert.equal(decodeAbiStringOrBytes32(hex), '', hex);
    }
    // Offset inside the answer but a length running past its end.
    assert.equal(decodeAbiStringOrBytes32(`0x${pad32('0x20')}${pad32('0x40')}${'41'.repeat(32)}`), '');
  });
});

describe('uint and decimals decoding', () => {
  test('the first word is read as uint256', () => {
    assert.equal(decodeUint(`0x${pad32('0x033b2e3c9fd0803ce8000000')}`), 10n ** 27n);
    assert.equal(decodeUint(`0x${pad32('0x05')}${pad32('0x07')}`), 5n);
  });

  test('an answer shorter than a word has no value', () => {
    assert.equal(decodeUint('0x'), null);
    assert.equal(decodeUint('0x12'), null);
    assert.equal(decodeUint('nonsense'), null);
  });

  test('decimals: missing or absurd values read as 0', () => {
    assert.equal(decodeDecimals(`0x${pad32('0x12')}`), 18);
    assert.equal(decodeDecimals(`0x${pad32('0xff')}`), 255);
    assert.equal(decodeDecimals(`0x${pad32('0x100')}`), 0);
    assert.equal(decodeDecimals('0x'), 0);
    assert.equal(decodeDecimals(null), 0);
  });
});

describe('calldata', () => {
  test('selectors and the balanceOf argument are encoded as the ABI wants', () => {
    assert.equal(calldata.name(), '0x06fdde03');
    assert.equal(calldata.symbol(), '0x95d89b41');
    assert.equal(calldata.decimals(), '0x313ce567');
    assert.equal(calldata.totalSupply(), '0x18160ddd');
    assert.equal(calldata.cap(), '0x355274ea');
    assert.equal(
      calldata.balanceOf('0x000000000000000000000000000000000000dEaD'),
      `0x70a08231${'0'.repeat(24)}000000000000000000000000000000000000dead`,
    );
    assert.throws(() => calldata.balanceOf('0x1234'), TypeError);
  });
});

describe('Multicall3 aggregate3', () => {
  const word = (n: number | bigint) => n.toString(16).padStart(64, '0');
  const token = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
  const holder = '0x1b63142628311395ceafeea5667e7c9026c862ca';

  test('calldata: selector, array offset and length, tuple offsets, then each (address, true, bytes)', () => {
    const data = calldata.balanceOf(holder);
    const tuple = `${word(BigInt(token))}${word(1)}${word(96)}${word(36)}${data.slice(2).padEnd(128, '0')}`;
    assert.equal(
      encodeAggregate3([
        { target: token, data },
        { target: token, data },
      ]),
      `0x82ad56cb${word(32)}${word(2)}${word(64)}${word(64 + tuple.length / 2)}${tuple}${tuple}`,
    );
  });

  // (true, 32 bytes), (false, no bytes), as Multicall3 returns them.
  const answer =
    `0x${word(32)}${word(2)}${word(64)}${word(64 + 128)}` +
    `${word(1)}${word(64)}${word(32)}${word(42)}` +
    `${word(0)}${word(64)}${word(0)}`;

  test('results: success and return data of each call, in order', () => {
    assert.deepEqual(decodeAggregate3(answer, 2), [
      { success: true, data: `0x${word(42)}` },
      { success: false, data: '0x' },
    ]);
  });

  test('an answer that is not one of `count` well-formed results is null', () => {
    assert.equal(decodeAggregate3(answer, 3), null);
    assert.equal(decodeAggregate3(answer.slice(0, -64), 2), null);
    assert.equal(decodeAggregate3('0x', 2), null);
    assert.equal(
      decodeAggregate3(`0x${word(32)}${word(1)}${word(32)}${word(2)}${word(64)}${word(0)}`, 1),
      null,
    );
    assert.equal(decodeAggregate3(`0x${'ff'.repeat(32)}`, 1), null);
  });
});

describe('balance event decoding', () => {
  const USER = '0x1b63142628311395ceafeea5667e7c9026c862ca';
  const event = (topics: string[], data: string): EvmLog => ({ ...baseLog, topics, data });
  const common = {
    token: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
    blockNumber: 10,
    logIndex: 7,
    txHash: `0x${'ab'.repeat(32)}`,
  };

  test("WETH9's Deposit and Withdrawal name the indexed address and the amount", () => {
    const topic = `0x${pad32(USER.toUpperCase().replace('0X', ''))}`;
    assert.deepEqual(
      decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.deposit, topic], `0x${pad32('0x2a')}`)),
      {
        ...common,
        kind: 'deposit',
        holder: USER,
        amount: 42n,
      },
    );
    assert.deepEqual(
      decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.withdrawal, topic], `0x${'ff'.repeat(32)}`)),
      { ...common, kind: 'withdrawal', holder: USER, amount: 2n ** 256n - 1n },
    );
  });

  test("Tether's Issue and Redeem name only the amount (the owner is read from the node); DestroyedBlackFunds its user", () => {
    assert.deepEqual(decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.issue], `0x${pad32('0x64')}`)), {
      ...common,
      kind: 'issue',
      holder: null,
      amount: 100n,
    });
    assert.deepEqual(decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.redeem], `0x${pad32('0x1')}`)), {
      ...common,
      kind: 'redeem',
      holder: null,
      amount: 1n,
    });
    assert.deepEqual(
      decodeBalanceEventLog(
        event([BALANCE_EVENT_TOPICS.destroyedBlackFunds], `0x${pad32(USER)}${pad32('0x7')}`),
      ),
      { ...common, kind: 'destroyedBlackFunds', holder: USER, amount: 7n },
    );
  });

  test('the same topic in another layout is another event, and ignored', () => {
    const word = `0x${pad32('0x2a')}`;
    // Deposit(address, uint256) with nothing indexed: one topic, two words.
    assert.equal(
      decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.deposit], `${word}${pad32('0x1')}`)),
      null,
    );
    // Deposit(address indexed, uint256 indexed): three topics, no data.
    assert.equal(decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.deposit, word, word], '0x')), null);
    assert.equal(decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.issue, word], word)), null);
    assert.equal(decodeBalanceEventLog(event([BALANCE_EVENT_TOPICS.destroyedBlackFunds], word)), null);
    assert.equal(decodeBalanceEventLog(event([TRANSFER_TOPIC, word, word], word)), null);
    assert.equal(decodeBalanceEventLog(event([], '0x')), null);
  });

  test('owner() answers decode to an address, anything wider to null', () => {
    assert.equal(decodeAddressWord(`0x${pad32(USER)}`), USER);
    assert.equal(decodeAddressWord(`0x${'ff'.repeat(32)}`), null);
    assert.equal(decodeAddressWord('0x'), null);
    assert.equal(calldata.owner(), '0x8da5cb5b');
  });
});
