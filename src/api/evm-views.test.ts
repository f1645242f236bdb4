import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressBalance, TokenLabel, TokenRecord, TransferRecord } from '../store/types.js';
import { okBodyFromJson, SUCCESS_MSG } from './envelope.js';
import {
  balanceList,
  balanceListJson,
  balanceListSchema,
  transferList,
  transferListJson,
  transferListSchema,
} from './evm-views.js';

/**
 * What the routes' response schemas (fast-json-stringify, through fastify) make of `transferList`'s
 * and `balanceList`'s objects.
 */
let app: FastifyInstance;
let current: { token: TokenRecord; transfers: TransferRecord[]; head: number };
let currentBalances: AddressBalance[];
before(async () => {
  app = Fastify();
  app.get('/', { schema: { response: { 200: transferListSchema } } }, async () => ({
    code: 1,
    msg: SUCCESS_MSG,
    data: transferList(current.token, current.transfers, current.head),
  }));
  app.get('/balances', { schema: { response: { 200: balanceListSchema } } }, async () => ({
    code: 1,
    msg: SUCCESS_MSG,
    data: balanceList(currentBalances),
  }));
  await app.ready();
});
after(() => app.close());

async function bySchema(token: TokenRecord, transfers: TransferRecord[], head: number): Promise<Buffer> {
  current = { token, transfers, head };
  return (await app.inject({ method: 'GET', url: '/' })).rawPayload;
}

const TOKEN: TokenRecord = {
  chain: 'eth',
  address: `0x${'12'.repeat(20)}`,
  name: 'Demo Token',
  symbol: 'DEMO',
  decimals: 18,
  totalSupply: 10n ** 27n,
  cap: null,
  burnedBalance: null,
  holderCount: 2,
  transferCount: 2,
  firstBlock: 1,
  icon: '',
};

function transfer(block: number, log: number, overrides: Partial<TransferRecord> = {}): TransferRecord {
  return {
    token: TOKEN.address,
    blockNumber: block,
    logIndex: log,
    txIndex: log + 3,
    txHash: `0x${block.toString(16).padStart(64, '0')}`,
    from: `0x${'a1'.repeat(20)}`,
    to: `0x${'b2'.repeat(20)}`,
    value: BigInt(block) * 10n ** 18n,
    time: 1_700_000_000 + block,
    ...overrides,
  };
}

/** Strings JSON must escape, or that are not one byte per character in UTF-8. */
const HOSTILE = [
  'quote " and backslash \\',
  'control \u0000\u0001\n\t\u001f end',
  'Ünïcødé 中文 🚀',
  'lone surrogate \ud800 here',
  '',
  'x'.repeat(41),
  `"${'y'.repeat(60)}"`,
  'z'.repeat(5001),
];

describe('transferListJson', () => {
  test('is byte for byte the schema serializer’s output', async () => {
    const cases: { name: string; token: TokenRecord; transfers: TransferRecord[]; head: number }[] = [
      { name: 'empty page', token: TOKEN, transfers: [], head: 10 },
      {
        name: 'plain page',
        token: TOKEN,
        transfers: [transfer(9, 1), transfer(9, 0), transfer(3, 7)],
        head: 12,
      },
      {
        name: 'head behind the records',
        token: TOKEN,
        transfers: [transfer(20, 0), transfer(5, 0)],
        head: 6,
      },
      {
        name: 'extreme values',
        token: { ...TOKEN, decimals: 0 },
        transfers: [
          transfer(2 ** 40, 2 ** 20, { value: 2n ** 256n - 1n, time: 0, txIndex: 0 }),
          transfer(1, 0, { value: 0n }),
        ],
        head: 2 ** 40,
      },
      ...HOSTILE.map((text, i) => ({
        name: `hostile token strings ${i}`,
        token: { ...TOKEN, name: text, symbol: text },
        transfers: [transfer(4, 0)],
        head: 4,
      })),
      ...HOSTILE.map((text, i) => ({
        name: `hostile record strings ${i}`,
        token: TOKEN,
        // A store gives back any string it was given (NEO addresses, odd hex, ...).
        transfers: [transfer(4, 1), transfer(4, 0, { txHash: text, from: text, to: `${text}!` })],
        head: 4,
      })),
    ];
    for (const c of cases) {
      const expected = await bySchema(c.token, c.transfers, c.head);
      const actual = okBodyFromJson(transferListJson(c.token, c.transfers, c.head));
      assert.equal(actual.toString(), expected.toString(), c.name);
      assert.ok(actual.equals(expected), c.name);
    }
  });
});

describe('balanceListJson', () => {
  const label = (i: number, overrides: Partial<TokenLabel> = {}): TokenLabel => ({
    chain: 'eth',
    address: `0x${i.toString(16).padStart(40, '0')}`,
    name: `Token ${i}`,
    symbol: `T${i}`,
    decimals: 18,
    ...overrides,
  });
  const entry = (token: TokenLabel, balance: bigint, transferCount = 1): AddressBalance => ({
    token,
    balance,
    transferCount,
  });

  test('is byte for byte the schema serializer’s output', async () => {
    const cases: { name: string; entries: AddressBalance[] }[] = [
      { name: 'no entries', entries: [] },
      {
        name: 'entries in the order given',
        entries: [entry(label(3), 5n, 2), entry(label(1), 10n ** 18n, 7), entry(label(2), 1n)],
      },
      {
        name: 'exact balances around 2^53, 2^64 and 2^256 - 1; a negative one shown as 0',
        entries: [
          entry(label(1, { decimals: 0 }), 2n ** 53n + 1n, 2 ** 31),
          entry(label(2), 2n ** 64n - 1n),
          entry(label(3, { decimals: 255 }), 2n ** 256n - 1n, 0),
          entry(label(4), -(2n ** 70n)),
        ],
      },
      {
        name: 'entries of two chains (network per entry)',
        entries: [entry(label(1), 1n), entry(label(2, { chain: 'bsc' }), 2n), entry(label(3), 3n)],
      },
      ...HOSTILE.map((text, i) => ({
        name: `hostile token strings ${i}`,
        // A store gives back any string it was given as an address too (NEO, odd hex, ...).
        entries: [
          entry(label(1), 1n),
          entry(label(2, { name: text, symbol: text }), 2n),
          entry(label(3, { address: text, name: `${text}!` }), 3n),
        ],
      })),
      {
        // Not one byte per character: the data text is two-byte, okBodyFromJson's slower path.
        name: 'long non-Latin-1 names',
        entries: Array.from({ length: 40 }, (_, i) =>
          entry(label(i, { name: `名${'n'.repeat(i * 50)}` }), 1n),
        ),
      },
      {
        name: 'every hostile string in one list',
        entries: HOSTILE.map((text, i) => entry(label(i, { name: text, symbol: `${i}${text}` }), BigInt(i))),
      },
    ];
    for (const c of cases) {
      currentBalances = c.entries;
      const expected = (await app.inject({ method: 'GET', url: '/balances' })).rawPayload;
      const actual = okBodyFromJson(balanceListJson(c.entries));
      assert.equal(actual.toString(), expected.toString(), c.name);
      assert.ok(actual.equals(expected), c.name);
      // And it is JSON whose entries hold the exact balances.
      const data = (JSON.parse(actual.toString()) as { data: { balance: string }[] }).data;
      assert.deepEqual(
        data.map((e) => e.balance),
        c.entries.map((e) => String(e.balance < 0n ? 0n : e.balance)),
        c.name,
      );
    }
  });
});
