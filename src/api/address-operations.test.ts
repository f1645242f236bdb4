/**
 * The address operations and Token Holders over HTTP, on both families: a real server over a real
 * SQLite store seeded through the `Store` interface (testing/fixture.ts for eth, and
 * testing/address-seed.ts for NEO and a late-start kcs chain). Expected balances, counts and
 * orders are worked out here from the seeds (a small model of the eth transfers, and the NEO
 * seed's documented figures), never read back from the server; transfer records must equal the
 * records the Token Transaction List answers for the same transfers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../internal/chains.js';
import { indexBatch, transferRecord } from '../store/testing/batches.js';
import type { TransferRecord } from '../store/types.js';
import {
  GAS_ID,
  KCS_TOKEN,
  LATE_RECIPIENT,
  LATE_SENDER,
  N1,
  N2,
  N3,
  N4,
  NEO_ASSET_TRANSFERS,
  NEO_ID,
  NEO_NEP5_TRANSFERS,
  RPX,
  seedLateStart,
  seedNeoAddresses,
} from './testing/address-seed.js';
import {
  ALICE,
  type ApiFixture,
  BIG,
  BOB,
  CAROL,
  ETH_TOKENS,
  ETH_TRANSFERS,
  HUGE_VALUE,
  NOSUPPLY,
  ODD_VALUE,
  OVERBURNED,
  startApiFixture,
  UNKNOWN,
  USDC,
} from './testing/fixture.js';
import { assertError, assertShape, call, JSON_TYPE, okData } from './testing/http.js';

let fx: ApiFixture;
/** The same eth data on a server that serves eth only: NEO and kcs answer 50001. */
let ethOnly: ApiFixture;

before(async () => {
  fx = await startApiFixture({ chains: ['eth', 'bsc', 'movr', 'kcs', 'neo'] });
  await seedNeoAddresses(fx.store);
  await seedLateStart(fx.store);
  ethOnly = await startApiFixture({ chains: ['eth'] });
});
after(async () => {
  await fx.close();
  await ethOnly.close();
});

const withKey = (path: string, key: string) => `${path}?apikey=${key}`;
const get = (path: string, init?: RequestInit) => call(fx.url, withKey(path, fx.key), init);
const data = async (path: string) => okData(await get(path));

const NO_DATA = { http: 200, code: 404, msg: '无数据' };
const INVALID_KEY = { http: 401, code: 50003, msg: 'invalid apikey' };
const UNSUPPORTED = { http: 200, code: 50001, msg: 'unsupport coin' };
const invalid = (what: RegExp) => ({ http: 200, code: 10001, msg: what });

const upper = (address: string) => `0x${address.slice(2).toUpperCase()}`;

// ---- the model of the eth seed ----

const ethTransfersOf = (token: string) => ETH_TRANSFERS.filter((t) => t.token === token);
const names = (t: TransferRecord, address: string) => t.from === address || t.to === address;

function balanceOf(token: string, address: string): bigint {
  let balance = 0n;
  for (const t of ethTransfersOf(token)) {
    if (t.from === address) balance -= t.value;
    if (t.to === address) balance += t.value;
  }
  return balance;
}

function holdersOf(token: string): { address: string; balance: bigint }[] {
  const addresses = new Set(ethTransfersOf(token).flatMap((t) => [t.from, t.to]));
  return [...addresses]
    .filter((a) => a !== ZERO_ADDRESS)
    .map((address) => ({ address, balance: balanceOf(token, address) }))
    .filter((h) => h.balance > 0n)
    .sort((a, b) =>
      a.balance === b.balance ? (a.address < b.address ? -1 : 1) : a.balance > b.balance ? -1 : 1,
    );
}

/** Tokens ordered like the token list: holders desc, transfers desc, address asc. */
const TOKEN_ORDER = ETH_TOKENS.map((t) => t.address).sort((a, b) => {
  const byHolders = holdersOf(b).length - holdersOf(a).length;
  const byTransfers = ethTransfersOf(b).length - ethTransfersOf(a).length;
  return byHolders || byTransfers || (a < b ? -1 : 1);
});

function balanceEntry(token: string, address: string) {
  const meta = ETH_TOKENS.find((t) => t.address === token)!;
  const balance = balanceOf(token, address);
  return {
    network: 'ETH',
    hash: token,
    tokenInfo: { h: token, f: meta.name, s: meta.symbol, d: String(meta.decimals) },
    transferCnt: ethTransfersOf(token).filter((t) => names(t, address)).length,
    balance: (balance < 0n ? 0n : balance).toString(),
  };
}

const BALANCE_SHAPE = {
  network: 'string',
  hash: 'string',
  tokenInfo: 'object',
  transferCnt: 'number',
  balance: 'string',
} as const;
const HOLDER_PAGE_SHAPE = {
  page: 'number',
  size: 'number',
  total: 'number',
  exact: 'boolean',
  data: 'object',
} as const;
const HOLDER_SHAPE = {
  rank: 'number',
  address: 'string',
  balance: 'string',
  percentage: 'string|null',
} as const;

/** Newest first: block, then log index, descending. */
const newestFirst = (list: TransferRecord[]) =>
  [...list].sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);

/** The Token Transaction List's record of `t`, as that operation answers it. */
async function listRecordOf(t: TransferRecord, family: 'eth' | 'neo'): Promise<unknown> {
  const path =
    family === 'eth'
      ? `/vipapi/eth/token/tokentrans/${t.token}/1/50`
      : `/vipapi/neo/token/tokentrans/${t.token}/1/50`;
  const records = (await data(path)) as Record<string, unknown>[];
  const found = records.filter(
    (r) => r.txid === t.txHash && r.block_no === t.blockNumber && r.from === t.from && r.to === t.to,
  );
  assert.equal(found.length, 1, `record of ${t.txHash} in the transaction list`);
  return found[0];
}

// ---- EVM ----

describe('EVM Address Token Balances', () => {
  test('one entry per token held, ordered like the token list, exact types', async () => {
    for (const address of [ALICE, BOB, CAROL, DEAD_ADDRESS]) {
      const entries = (await data(`/vipapi/eth/address/tokenbalance/${address}`)) as Record<
        string,
        unknown
      >[];
      for (const entry of entries) {
        assertShape(entry, BALANCE_SHAPE);
        assertShape(entry.tokenInfo, { h: 'string', f: 'string', s: 'string', d: 'string' });
      }
      const held = TOKEN_ORDER.filter((token) => balanceOf(token, address) > 0n);
      assert.ok(held.length > 0);
      assert.deepEqual(
        entries,
        held.map((token) => balanceEntry(token, address)),
        address,
      );
    }
  });

  test('balances above 2^53 are exact integer text', async () => {
    const entries = (await data(`/vipapi/eth/address/tokenbalance/${BOB}`)) as {
      hash: string;
      balance: string;
    }[];
    assert.equal(entries.find((e) => e.hash === NOSUPPLY)?.balance, (HUGE_VALUE - ODD_VALUE).toString());
  });

  test('an unknown address and the zero address hold nothing: []', async () => {
    assert.deepEqual(await data(`/vipapi/eth/address/tokenbalance/${UNKNOWN}`), []);
    assert.deepEqual(await data(`/vipapi/eth/address/tokenbalance/${ZERO_ADDRESS}`), []);
  });

  test('a negative computed balance (history started late) is no holding', async () => {
    assert.deepEqual(await data(`/vipapi/kcs/address/tokenbalance/${LATE_SENDER}`), []);
    const [entry] = (await data(`/vipapi/kcs/address/tokenbalance/${LATE_RECIPIENT}`)) as {
      balance: string;
    }[];
    assert.equal(entry?.balance, '5');
  });
});

describe('EVM Address Token Balance', () => {
  const one = (address: string, token: string, chain = 'eth') =>
    get(`/vipapi/${chain}/address/tokenbalance/${address}/${token}`);

  test('an array with exactly one entry, for held and not held tokens alike', async () => {
    for (const address of [ALICE, BOB, CAROL]) {
      for (const token of TOKEN_ORDER) {
        const entries = okData(await one(address, token)) as Record<string, unknown>[];
        assert.equal(entries.length, 1);
        assertShape(entries[0], BALANCE_SHAPE);
        assert.deepEqual(entries, [balanceEntry(token, address)], `${address} ${token}`);
      }
    }
  });

  test('an address the token never named: balance "0", transferCnt 0', async () => {
    const entries = okData(await one(UNKNOWN, USDC)) as { balance: string; transferCnt: number }[];
    assert.deepEqual(entries, [balanceEntry(USDC, UNKNOWN)]);
    assert.deepEqual([entries[0]!.balance, entries[0]!.transferCnt], ['0', 0]);
  });

  test('the zero address holds "0" but counts its mints', async () => {
    const [entry] = okData(await one(ZERO_ADDRESS, USDC)) as { balance: string; transferCnt: number }[];
    assert.equal(entry!.balance, '0');
    assert.equal(entry!.transferCnt, ethTransfersOf(USDC).filter((t) => names(t, ZERO_ADDRESS)).length);
  });

  test('a negative computed balance shows as "0"', async () => {
    const [entry] = okData(await one(LATE_SENDER, KCS_TOKEN, 'kcs')) as Record<string, unknown>[];
    assert.deepEqual(entry, {
      network: 'KCS',
      hash: KCS_TOKEN,
      tokenInfo: { h: KCS_TOKEN, f: 'Late', s: 'LATE', d: '0' },
      transferCnt: 1,
      balance: '0',
    });
  });

  test('an unknown token is 404 无数据, whatever the address', async () => {
    assertError(await one(ALICE, UNKNOWN), NO_DATA, [fx.key]);
    assertError(await one(UNKNOWN, ALICE), NO_DATA, [fx.key]);
  });
});

describe('EVM Address Token Transfers and Address Transfers', () => {
  test("one token: the token list's records that name the address, newest first", async () => {
    for (const address of [ALICE, BOB, CAROL, ZERO_ADDRESS, DEAD_ADDRESS]) {
      const records = (await data(`/vipapi/eth/address/tokentrans/${address}/${USDC}/1/50`)) as unknown[];
      const expected = newestFirst(ethTransfersOf(USDC).filter((t) => names(t, address)));
      assert.ok(expected.length > 0);
      assert.deepEqual(records, await Promise.all(expected.map((t) => listRecordOf(t, 'eth'))), address);
    }
  });

  test('every token: the records of each token list, newest first across tokens', async () => {
    for (const address of [ALICE, BOB, ZERO_ADDRESS]) {
      const records = (await data(`/vipapi/eth/address/tokentrans/${address}/1/50`)) as unknown[];
      const expected = newestFirst(ETH_TRANSFERS.filter((t) => names(t, address)));
      assert.ok(new Set(expected.map((t) => t.token)).size > 1);
      assert.deepEqual(records, await Promise.all(expected.map((t) => listRecordOf(t, 'eth'))), address);
    }
  });

  test('pages are consecutive slices; a page past the end is []', async () => {
    for (const path of [
      `/vipapi/eth/address/tokentrans/${ALICE}`,
      `/vipapi/eth/address/tokentrans/${ALICE}/${USDC}`,
    ]) {
      const all = (await data(`${path}/1/50`)) as unknown[];
      const pages: unknown[] = [];
      for (let page = 1; page <= 3; page++) pages.push(...((await data(`${path}/${page}/2`)) as unknown[]));
      assert.deepEqual(pages, all);
      assert.deepEqual(await data(`${path}/${Math.ceil(all.length / 2) + 1}/2`), []);
      assert.deepEqual(await data(`${path}/50/50`), []);
    }
  });

  test('an unknown address has no transfers: []', async () => {
    assert.deepEqual(await data(`/vipapi/eth/address/tokentrans/${UNKNOWN}/1/10`), []);
    assert.deepEqual(await data(`/vipapi/eth/address/tokentrans/${UNKNOWN}/${USDC}/1/10`), []);
  });

  test('an address known on another token has no transfers of this one: []', async () => {
    assert.deepEqual(await data(`/vipapi/eth/address/tokentrans/${CAROL}/${BIG}/1/10`), []);
  });

  test('an unknown token is 404 无数据', async () => {
    assertError(await get(`/vipapi/eth/address/tokentrans/${ALICE}/${UNKNOWN}/1/10`), NO_DATA, [fx.key]);
  });
});

describe('EVM Token Holders', () => {
  const holders = (token: string, page: number | string, size: number | string, chain = 'eth') =>
    get(`/vipapi/${chain}/token/holders/${token}/${page}/${size}`);

  test('a page object ranked by balance, exact types and percentages', async () => {
    const page = okData(await holders(USDC, 1, 10)) as Record<string, unknown>;
    assertShape(page, HOLDER_PAGE_SHAPE);
    for (const entry of page.data as unknown[]) assertShape(entry, HOLDER_SHAPE);
    const expected = holdersOf(USDC);
    assert.deepEqual(
      expected.map((h) => h.address),
      [ALICE, BOB, CAROL, DEAD_ADDRESS],
    );
    // Total supply 1 500 000: 650 000, 299 999, 50 000 and 1, truncated to 6 digits.
    const percentages = ['43.333333', '19.999933', '3.333333', '0.000066'];
    assert.deepEqual(page, {
      page: 1,
      size: 10,
      total: expected.length,
      exact: true,
      data: expected.map((h, i) => ({
        rank: i + 1,
        address: h.address,
        balance: h.balance.toString(),
        percentage: percentages[i],
      })),
    });
  });

  test('percentage "100" for the one holder of the whole supply; null when the supply is unknown', async () => {
    const big = okData(await holders(BIG, 1, 10)) as { data: unknown[] };
    assert.deepEqual(big.data, [
      { rank: 1, address: ALICE, balance: (10n ** 27n).toString(), percentage: '100' },
    ]);
    const noSupply = okData(await holders(NOSUPPLY, 1, 10)) as { total: number; data: unknown[] };
    assert.deepEqual(noSupply, {
      page: 1,
      size: 10,
      total: 2,
      exact: true,
      data: [
        { rank: 1, address: BOB, balance: (HUGE_VALUE - ODD_VALUE).toString(), percentage: null },
        { rank: 2, address: CAROL, balance: ODD_VALUE.toString(), percentage: null },
      ],
    });
  });

  test('ranks continue across pages; a page past the end keeps the page object with data []', async () => {
    const all = (okData(await holders(USDC, 1, 50)) as { data: unknown[] }).data;
    const second = okData(await holders(USDC, 2, 3)) as { page: number; data: { rank: number }[] };
    assert.equal(second.page, 2);
    assert.deepEqual(second.data, all.slice(3));
    assert.equal(second.data[0]!.rank, 4);
    assert.deepEqual(okData(await holders(USDC, 3, 2)), {
      page: 3,
      size: 2,
      total: 4,
      exact: true,
      data: [],
    });
    assert.deepEqual(okData(await holders(USDC, 50, 50)), {
      page: 50,
      size: 50,
      total: 4,
      exact: true,
      data: [],
    });
  });

  test('the zero address and negative balances are never holders', async () => {
    assert.deepEqual(okData(await holders(KCS_TOKEN, 1, 10, 'kcs')), {
      page: 1,
      size: 10,
      total: 1,
      exact: true,
      data: [{ rank: 1, address: LATE_RECIPIENT, balance: '5', percentage: null }],
    });
  });

  test('an unknown token is 404 无数据', async () => {
    assertError(await holders(UNKNOWN, 1, 10), NO_DATA, [fx.key]);
  });
});

// ---- NEO ----

const NEO_INFO = { h: NEO_ID, f: 'NEO', s: 'NEO', d: '0', c: 'GoverningToken' };
const GAS_INFO = { h: GAS_ID, f: 'GAS', s: 'GAS', d: '8', c: 'UtilityToken' };
const RPX_INFO = { h: RPX, f: 'Red Pulse Token', s: 'RPX', d: '8', c: 'NEP5' };
const neoEntry = (tokenInfo: { h: string }, transferCnt: number, balance: string) => ({
  network: 'NEO',
  hash: tokenInfo.h,
  tokenInfo,
  transferCnt,
  balance,
});

describe('NEO Address Token Balance(s)', () => {
  test('global assets answer in the unit of value and d (NEO whole, GAS 10^-8), NEP-5 raw', async () => {
    // NEO and RPX have 2 holders and 3 transfers each: by address. GAS has 1 holder.
    assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N1}`), [
      neoEntry(NEO_INFO, 2, '70'),
      neoEntry(RPX_INFO, 2, '600000000'),
    ]);
    assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N2}`), [
      neoEntry(NEO_INFO, 2, '80'),
      neoEntry(GAS_INFO, 1, '500000000'),
    ]);
    // A self-transfer counts once.
    assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N3}`), [
      neoEntry(RPX_INFO, 2, '400000000'),
    ]);
  });

  test('exact keys and JSON types', async () => {
    for (const entry of (await data(`/vipapi/neo/address/tokenbalance/${N2}`)) as Record<string, unknown>[]) {
      assertShape(entry, BALANCE_SHAPE);
      assertShape(entry.tokenInfo, { h: 'string', f: 'string', s: 'string', d: 'string', c: 'string' });
    }
  });

  test('an unknown address holds nothing', async () => {
    assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N4}`), []);
    assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N4}/${NEO_ID}`), [
      neoEntry(NEO_INFO, 0, '0'),
    ]);
  });

  test('one token, in any spelling of its hash or asset id', async () => {
    for (const token of [
      NEO_ID,
      NEO_ID.slice(2),
      NEO_ID.toUpperCase(),
      `0X${NEO_ID.slice(2).toUpperCase()}`,
    ]) {
      assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N1}/${token}`), [
        neoEntry(NEO_INFO, 2, '70'),
      ]);
    }
    assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N1}/${RPX.slice(2)}`), [
      neoEntry(RPX_INFO, 2, '600000000'),
    ]);
    assert.deepEqual(await data(`/vipapi/neo/address/tokenbalance/${N3}/${GAS_ID}`), [
      neoEntry(GAS_INFO, 0, '0'),
    ]);
  });

  test('an unknown token is 404 无数据', async () => {
    assertError(await get(`/vipapi/neo/address/tokenbalance/${N1}/0x${'9'.repeat(40)}`), NO_DATA, [fx.key]);
    assertError(await get(`/vipapi/neo/address/tokenbalance/${N1}/0x${'9'.repeat(64)}`), NO_DATA, [fx.key]);
  });
});

describe('NEO Address Token Transfers and Address Transfers', () => {
  test("the NEO Token Transaction List's records, newest first, across assets and NEP-5", async () => {
    const all = [...NEO_ASSET_TRANSFERS, ...NEO_NEP5_TRANSFERS];
    for (const address of [N1, N2, N3]) {
      const expected = newestFirst(all.filter((t) => names(t, address)));
      const records = (await data(`/vipapi/neo/address/tokentrans/${address}/1/50`)) as unknown[];
      assert.deepEqual(records, await Promise.all(expected.map((t) => listRecordOf(t, 'neo'))), address);
      for (const token of [NEO_ID, GAS_ID, RPX]) {
        const mine = expected.filter((t) => t.token === token);
        const one = (await data(
          `/vipapi/neo/address/tokentrans/${address}/${token.slice(2)}/1/50`,
        )) as unknown[];
        assert.deepEqual(
          one,
          await Promise.all(mine.map((t) => listRecordOf(t, 'neo'))),
          `${address} ${token}`,
        );
      }
    }
    // A self-transfer is one record.
    assert.equal(((await data(`/vipapi/neo/address/tokentrans/${N3}/${RPX}/1/50`)) as unknown[]).length, 2);
  });

  test('records keep the NEO shape: confirmations, value in the asset unit', async () => {
    const [newest] = (await data(`/vipapi/neo/address/tokentrans/${N2}/${NEO_ID}/1/1`)) as Record<
      string,
      unknown
    >[];
    assert.equal(newest!.value, '30');
    assert.equal(typeof newest!.confirmations, 'number');
    assert.equal(newest!.conformations, undefined);
  });

  test('unknown address [], page past the end [], unknown token 404', async () => {
    assert.deepEqual(await data(`/vipapi/neo/address/tokentrans/${N4}/1/10`), []);
    assert.deepEqual(await data(`/vipapi/neo/address/tokentrans/${N4}/${RPX}/1/10`), []);
    assert.deepEqual(await data(`/vipapi/neo/address/tokentrans/${N1}/2/50`), []);
    assert.deepEqual(await data(`/vipapi/neo/address/tokentrans/${N1}/${RPX}/50/50`), []);
    assertError(await get(`/vipapi/neo/address/tokentrans/${N1}/0x${'9'.repeat(40)}/1/10`), NO_DATA, [
      fx.key,
    ]);
  });
});

describe('NEO Token Holders', () => {
  test('an asset: balances in its own unit, percentage against its issued amount', async () => {
    assert.deepEqual(await data(`/vipapi/neo/token/holders/${NEO_ID}/1/10`), {
      page: 1,
      size: 10,
      total: 2,
      exact: true,
      data: [
        { rank: 1, address: N2, balance: '80', percentage: '53.333333' },
        { rank: 2, address: N1, balance: '70', percentage: '46.666666' },
      ],
    });
    assert.deepEqual(await data(`/vipapi/neo/token/holders/${GAS_ID.slice(2)}/1/10`), {
      page: 1,
      size: 10,
      total: 1,
      exact: true,
      data: [{ rank: 1, address: N2, balance: '500000000', percentage: '100' }],
    });
  });

  test('a NEP-5 token, paged, exact types', async () => {
    const page = (await data(
      `/vipapi/neo/token/holders/${RPX.toUpperCase().replace('0X', '0x')}/1/10`,
    )) as Record<string, unknown>;
    assertShape(page, HOLDER_PAGE_SHAPE);
    for (const entry of page.data as unknown[]) assertShape(entry, HOLDER_SHAPE);
    assert.deepEqual(page.data, [
      { rank: 1, address: N1, balance: '600000000', percentage: '0.6' },
      { rank: 2, address: N3, balance: '400000000', percentage: '0.4' },
    ]);
    assert.deepEqual(await data(`/vipapi/neo/token/holders/${RPX}/2/1`), {
      page: 2,
      size: 1,
      total: 2,
      exact: true,
      data: [{ rank: 2, address: N3, balance: '400000000', percentage: '0.4' }],
    });
    assert.deepEqual(await data(`/vipapi/neo/token/holders/${RPX}/3/1`), {
      page: 3,
      size: 1,
      total: 2,
      exact: true,
      data: [],
    });
  });

  test('an unknown token is 404 无数据', async () => {
    assertError(await get(`/vipapi/neo/token/holders/0x${'9'.repeat(64)}/1/10`), NO_DATA, [fx.key]);
  });
});

// ---- every operation: errors, keys, HEAD ----

interface Operation {
  name: string;
  /** Builds the path from the address, the token and page/size. */
  path: (p: { address: string; token: string; page: string; size: string; chain?: string }) => string;
  takesToken: boolean;
  paged: boolean;
  /** Whether `address` is the token (Token Holders). */
  addressIsToken?: boolean;
}

const EVM_OPS: Operation[] = [
  {
    name: 'balances',
    path: (p) => `/vipapi/${p.chain ?? 'eth'}/address/tokenbalance/${p.address}`,
    takesToken: false,
    paged: false,
  },
  {
    name: 'balance',
    path: (p) => `/vipapi/${p.chain ?? 'eth'}/address/tokenbalance/${p.address}/${p.token}`,
    takesToken: true,
    paged: false,
  },
  {
    name: 'transfers',
    path: (p) => `/vipapi/${p.chain ?? 'eth'}/address/tokentrans/${p.address}/${p.token}/${p.page}/${p.size}`,
    takesToken: true,
    paged: true,
  },
  {
    name: 'all transfers',
    path: (p) => `/vipapi/${p.chain ?? 'eth'}/address/tokentrans/${p.address}/${p.page}/${p.size}`,
    takesToken: false,
    paged: true,
  },
  {
    name: 'holders',
    path: (p) => `/vipapi/${p.chain ?? 'eth'}/token/holders/${p.token}/${p.page}/${p.size}`,
    takesToken: true,
    paged: true,
    addressIsToken: true,
  },
];
const NEO_OPS: Operation[] = EVM_OPS.map((op) => ({ ...op, path: (p) => op.path({ ...p, chain: 'neo' }) }));

const EVM_OK = { address: ALICE, token: USDC, page: '1', size: '10' };
const NEO_OK = { address: N1, token: RPX, page: '1', size: '10' };

for (const [family, ops, ok] of [
  ['EVM', EVM_OPS, EVM_OK],
  ['NEO', NEO_OPS, NEO_OK],
] as const) {
  describe(`${family}: every operation's error rows`, () => {
    for (const op of ops) {
      test(op.name, async () => {
        const path = op.path(ok);
        assert.equal((await get(path)).status, 200);
        // The key: missing, unknown, on an otherwise bad request too (the key comes first).
        assertError(await call(fx.url, path), INVALID_KEY);
        assertError(await call(fx.url, withKey(path, `tq_${'Z'.repeat(43)}`)), INVALID_KEY, [fx.key]);
        assertError(await call(fx.url, op.path({ ...ok, address: '0x12', page: '0' })), INVALID_KEY);
        // The chain.
        if (family === 'EVM') assertError(await get(op.path({ ...ok, chain: 'btc' })), UNSUPPORTED, [fx.key]);
        assertError(
          await call(
            ethOnly.url,
            withKey(op.path({ ...ok, chain: family === 'EVM' ? 'kcs' : 'neo' }), ethOnly.key),
          ),
          UNSUPPORTED,
          [ethOnly.key],
        );
        // The holder address (not for Token Holders).
        if (!op.addressIsToken) {
          const bad =
            family === 'EVM' ? ['0x12', `${ALICE}00`, 'alice'] : ['0x12', N1.slice(1), `${N1.slice(0, -1)}x`];
          for (const address of bad) {
            assertError(await get(op.path({ ...ok, address })), invalid(/^invalid parameter: address/), [
              fx.key,
            ]);
          }
          if (family === 'EVM') {
            assertError(
              await get(op.path({ ...ok, address: upper(ALICE) })),
              invalid(/address must be lower case/),
            );
          } else {
            // A right-looking address whose checksum fails.
            const wrongChecksum = `${N1.slice(0, -1)}${N1.endsWith('i') ? 'j' : 'i'}`;
            assertError(await get(op.path({ ...ok, address: wrongChecksum })), invalid(/checksum/));
            // An EVM address is no NEO address.
            assertError(await get(op.path({ ...ok, address: ALICE })), invalid(/NEO address/));
          }
        }
        // The token.
        if (op.takesToken) {
          // (The fixture's token addresses are digits only: an address with letters, upper case.)
          const badToken = family === 'EVM' ? `0x${'AB'.repeat(20)}` : '0x12';
          assertError(
            await get(op.path({ ...ok, token: badToken })),
            invalid(family === 'EVM' ? /lower case/ : /NEO script hash/),
          );
          const unknown = family === 'EVM' ? UNKNOWN : `0x${'9'.repeat(40)}`;
          assertError(await get(op.path({ ...ok, token: unknown })), NO_DATA, [fx.key]);
          // Parameters before the token: an unknown token with a bad page is 10001.
          if (op.paged)
            assertError(await get(op.path({ ...ok, token: unknown, page: '51' })), invalid(/page/));
        }
        // Paging.
        if (op.paged) {
          assertError(
            await get(op.path({ ...ok, page: '51' })),
            invalid(/page must be an integer from 1 to 50/),
          );
          assertError(
            await get(op.path({ ...ok, size: '0' })),
            invalid(/size must be an integer from 1 to 50/),
          );
          for (const bad of ['-1', '1.0', '+2', 'x']) {
            assertError(await get(op.path({ ...ok, page: bad })), invalid(/page/));
          }
          const past = okData(await get(op.path({ ...ok, page: '50', size: '50' })));
          if (op.addressIsToken) assert.deepEqual((past as { data: unknown }).data, []);
          else assert.deepEqual(past, []);
        }
        // HEAD: the same head, no body.
        const [got, head] = await Promise.all([get(path), get(path, { method: 'HEAD' })]);
        assert.equal(head.status, 200);
        assert.equal(head.headers.get('content-type'), JSON_TYPE);
        assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(got.text)));
        assert.equal(head.text, '');
        // Other methods: 405.
        const post = await get(path, { method: 'POST' });
        assert.equal(post.status, 405);
        assert.equal(post.headers.get('allow'), 'GET, HEAD');
      });
    }
  });
}

describe('answers follow the store (response cache)', () => {
  test('a new batch changes balances, transfers and holders at once', async () => {
    const newcomer = `0x${'d3'.repeat(20)}`;
    const paths = [
      `/vipapi/kcs/address/tokenbalance/${newcomer}`,
      `/vipapi/kcs/address/tokenbalance/${LATE_RECIPIENT}/${KCS_TOKEN}`,
      `/vipapi/kcs/address/tokentrans/${newcomer}/1/10`,
      `/vipapi/kcs/token/holders/${KCS_TOKEN}/1/10`,
    ];
    // Twice each, so the cache keeps them (it admits an answer asked for twice).
    const earlier = [];
    for (const path of paths) {
      await data(path);
      earlier.push(await data(path));
    }
    await fx.store.writer.applyBatch(
      indexBatch({
        chain: 'kcs',
        fromBlock: 511,
        toBlock: 512,
        transfers: [
          transferRecord({
            token: KCS_TOKEN,
            blockNumber: 512,
            from: LATE_RECIPIENT,
            to: newcomer,
            value: 2n,
          }),
        ],
      }),
    );
    const [balances, balance, transfers, holders] = await Promise.all(paths.map(data));
    assert.deepEqual(earlier[0], []);
    assert.equal((earlier[2] as unknown[]).length, 0);
    assert.deepEqual(
      (balances as { balance: string }[]).map((e) => e.balance),
      ['2'],
    );
    assert.deepEqual(
      (balance as { balance: string; transferCnt: number }[]).map((e) => [e.balance, e.transferCnt]),
      [['3', 2]],
    );
    assert.equal((transfers as unknown[]).length, 1);
    assert.deepEqual(
      (holders as { data: { address: string; balance: string }[] }).data.map((h) => [h.address, h.balance]),
      [
        [LATE_RECIPIENT, '3'],
        [newcomer, '2'],
      ],
    );
  });
});

describe('OVERBURNED and the rest of the seed', () => {
  test('every eth token has its holders, and their balances sum to what the model gives', async () => {
    for (const token of [USDC, BIG, NOSUPPLY, OVERBURNED]) {
      const page = okData(await get(`/vipapi/eth/token/holders/${token}/1/50`)) as {
        total: number;
        data: { address: string; balance: string }[];
      };
      assert.deepEqual(
        page.data.map((h) => [h.address, h.balance]),
        holdersOf(token).map((h) => [h.address, h.balance.toString()]),
      );
      assert.equal(page.total, holdersOf(token).length);
    }
  });
});
