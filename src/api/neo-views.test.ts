import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressBalance, NeoTokenRecord } from '../store/types.js';
import { okBodyFromJson, SUCCESS_MSG } from './envelope.js';
import { neoBalanceList, neoBalanceListJson, neoBalanceListSchema } from './neo-views.js';

/** What the route's response schema (fast-json-stringify, through fastify) makes of `neoBalanceList`'s objects. */
let app: FastifyInstance;
let current: AddressBalance<NeoTokenRecord>[];
before(async () => {
  app = Fastify();
  app.get('/', { schema: { response: { 200: neoBalanceListSchema } } }, async () => ({
    code: 1,
    msg: SUCCESS_MSG,
    data: neoBalanceList(current),
  }));
  await app.ready();
});
after(() => app.close());

/** A NEP-5 token: a 20-byte script hash, balances in its own unit. */
const nep5 = (i: number, overrides: Partial<NeoTokenRecord> = {}): NeoTokenRecord => ({
  chain: 'neo',
  address: `0x${i.toString(16).padStart(40, '0')}`,
  name: `Token ${i}`,
  symbol: `T${i}`,
  decimals: 8,
  totalSupply: null,
  cap: null,
  burnedBalance: null,
  holderCount: 1,
  transferCount: 1,
  firstBlock: 1,
  icon: '',
  category: 'NEP5',
  createdAt: null,
  creator: null,
  ...overrides,
});

/** A global asset: a 32-byte id, balances stored in Fixed8 units (10^-8), shown in its precision. */
const asset = (i: number, decimals: number, category: string): NeoTokenRecord =>
  nep5(i, { address: `0x${i.toString(16).padStart(64, '0')}`, decimals, category });

const entry = (
  token: NeoTokenRecord,
  balance: bigint,
  transferCount = 1,
): AddressBalance<NeoTokenRecord> => ({
  token,
  balance,
  transferCount,
});

/** Strings JSON must escape, or that are not one byte per character in UTF-8. */
const HOSTILE = [
  'quote " and backslash \\',
  'control \u0000\u0001\n\t\u001f end',
  'Ünïcødé 中文 🚀',
  'lone surrogate \ud800 here',
  '',
  'z'.repeat(5001),
];

describe('neoBalanceListJson', () => {
  test('is byte for byte the schema serializer’s output', async () => {
    const cases: { name: string; entries: AddressBalance<NeoTokenRecord>[] }[] = [
      { name: 'no entries', entries: [] },
      {
        name: 'NEP-5 tokens and global assets (Fixed8 balances in the asset’s unit), in the order given',
        entries: [
          entry(asset(1, 0, 'GoverningToken'), 45n * 10n ** 8n, 3),
          entry(nep5(2), 2n ** 256n - 1n, 2 ** 31),
          entry(asset(3, 8, 'UtilityToken'), 123456789n),
          entry(nep5(4), -5n),
        ],
      },
      ...HOSTILE.map((text, i) => ({
        name: `hostile strings ${i}`,
        entries: [
          entry(nep5(1), 1n),
          entry(nep5(2, { name: text, symbol: text, category: text }), 2n),
          entry(nep5(3, { name: `${text}!` }), 3n),
        ],
      })),
    ];
    for (const c of cases) {
      current = c.entries;
      const expected = (await app.inject({ method: 'GET', url: '/' })).rawPayload;
      const actual = okBodyFromJson(neoBalanceListJson(c.entries));
      assert.equal(actual.toString(), expected.toString(), c.name);
      assert.ok(actual.equals(expected), c.name);
    }
    // The units: 45 NEO is 45 (precision 0), GAS keeps its 8 decimals, a negative balance shows 0.
    current = cases[1]!.entries;
    const data = (
      JSON.parse(okBodyFromJson(neoBalanceListJson(current)).toString()) as { data: { balance: string }[] }
    ).data;
    assert.deepEqual(
      data.map((e) => e.balance),
      ['45', String(2n ** 256n - 1n), '123456789', '0'],
    );
  });
});
