/**
 * Token lists: validation against the real Uniswap default list (npm @uniswap/default-token-list,
 * 1,723 entries on 26 chains) and hostile entries, the overlay's rules, and the overlay in a
 * running API over a real SQLite store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { ZERO_ADDRESS } from '../internal/chains.js';
import { ProblemsError, UserError } from '../internal/errors.js';
import { silentLogger } from '../internal/logger.js';
import { MAX_TOKEN_NAME_CHARS, MAX_TOKEN_SYMBOL_CHARS } from '../internal/token-text.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createTestApiKey } from '../store/testing/api-key.js';
import { indexBatch, transferRecord } from '../store/testing/batches.js';
import type { Store, TokenRecord } from '../store/types.js';
import { type ApiServer, startApiServer } from './server.js';
import { call, okData } from './testing/http.js';
import {
  createTokenOverlay,
  parseTokenList,
  readTokenList,
  type TokenList,
  withTokenOverlay,
} from './token-list.js';

/** The real Uniswap default list, as npm ships it. */
const UNISWAP_LIST = createRequire(import.meta.url).resolve(
  '@uniswap/default-token-list/build/uniswap-default.tokenlist.json',
);
/** The repository's copy of the chainId-1 entries of the same list (name, symbol, decimals only). */
const MAINNET_FIXTURE = fileURLToPath(
  new URL('../../../fixtures/evm/crosscheck/uniswap_default_tokenlist_mainnet.json', import.meta.url),
);

interface RawToken {
  chainId: number;
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  logoURI?: string;
}
const raw = JSON.parse(readFileSync(UNISWAP_LIST, 'utf8')) as { tokens: RawToken[] } & Record<
  string,
  unknown
>;
const mainnet = raw.tokens.filter((t) => t.chainId === 1);
const listed = (symbol: string, chainId = 1): RawToken => {
  const token = raw.tokens.find((t) => t.symbol === symbol && t.chainId === chainId);
  assert.ok(token, `${symbol} is in the list`);
  return token;
};
const ONE_INCH = listed('1INCH');
const AAVE = listed('AAVE');
const USDC = listed('USDC');

const tmp = mkdtempSync(join(tmpdir(), 'tq-token-list-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A valid list around `tokens`. */
const list = (tokens: unknown[], extra: Record<string, unknown> = {}) => ({
  name: 'Test',
  timestamp: '2024-01-01T00:00:00.000Z',
  version: { major: 1, minor: 2, patch: 3 },
  tokens,
  ...extra,
});

function problemsOf(json: unknown): string[] {
  try {
    parseTokenList(json, 'list.json');
    return [];
  } catch (error) {
    assert.ok(error instanceof ProblemsError, String(error));
    for (const line of error.problems) assert.ok(!line.includes('\n'));
    return [...error.problems];
  }
}

describe('reading a token list', () => {
  test('the real Uniswap default list: its Ethereum and BNB Chain entries, other chains skipped', () => {
    const parsed = readTokenList(UNISWAP_LIST);
    assert.equal(parsed.name, raw.name);
    assert.equal(parsed.version, '22.21.0');
    const counts = { eth: 0, bsc: 0, other: 0 };
    for (const key of parsed.entries.keys()) counts[key.split(' ')[0] as 'eth' | 'bsc']++;
    const onChain = (id: number) =>
      new Set(raw.tokens.filter((t) => t.chainId === id).map((t) => t.address)).size;
    assert.deepEqual(counts, { eth: onChain(1), bsc: onChain(56), other: 0 });
    assert.equal(counts.eth, 407);
    assert.equal(
      parsed.otherChains,
      raw.tokens.filter((t) => ![1, 56, 321, 1285].includes(t.chainId)).length,
      'Solana (base58 addresses), Arbitrum, Base... are skipped, not errors',
    );
    // Every mainnet entry is there, keyed by its lower-case address, with its logo as the icon.
    for (const token of mainnet) {
      const entry = parsed.entries.get(`eth ${token.address.toLowerCase()}`);
      // Names and symbols are trimmed: the list has `"SOL Wormhole "`.
      assert.deepEqual(entry, {
        name: token.name.trim(),
        symbol: token.symbol.trim(),
        icon: token.logoURI ?? '',
      });
    }
    assert.ok(
      [...parsed.entries.values()].some((e) => e.icon.startsWith('ipfs://')),
      'ipfs:// logos are kept',
    );
  });

  test("the repository's mainnet fixture holds the same names and symbols, but is not a token list itself", () => {
    const fixture = JSON.parse(readFileSync(MAINNET_FIXTURE, 'utf8')) as { tokens: RawToken[] };
    const parsed = readTokenList(UNISWAP_LIST);
    assert.equal(fixture.tokens.length, 407);
    for (const token of fixture.tokens) {
      const entry = parsed.entries.get(`eth ${token.address.toLowerCase()}`);
      assert.deepEqual([entry?.name, entry?.symbol], [token.name.trim(), token.symbol.trim()]);
    }
    // It is the entries alone (no name, timestamp, version; no chainId): refused, naming what is missing.
    assert.throws(
      () => readTokenList(MAINNET_FIXTURE),
      (error: unknown) =>
        error instanceof ProblemsError &&
        error.problems.join('\n') ===
          [
            `${MAINNET_FIXTURE}: name: must be a non-empty string`,
            `${MAINNET_FIXTURE}: timestamp: must be an ISO 8601 date-time string`,
            `${MAINNET_FIXTURE}: version: must be {"major", "minor", "patch"} with non-negative integers`,
          ].join('\n'),
    );
  });

  test('malformed entries are named by position and symbol; the first 20 problems are listed', () => {
    const good = { chainId: 1, address: ONE_INCH.address, name: 'x', symbol: 'X', decimals: 18 };
    assert.deepEqual(
      problemsOf(
        list([
          good,
          { ...good, address: '0x1234' },
          { ...good, symbol: 'BAD', name: 'Line\nbreak', decimals: 256 },
          { ...good, symbol: 'S'.repeat(21) },
          { ...good, name: 'N'.repeat(61) },
          { ...good, symbol: 'LOGO', logoURI: 'not a uri' },
          { ...good, chainId: '1' },
          { ...good, symbol: 7 },
          'text',
        ]),
      ),
      [
        'list.json: tokens[1] (X): address must be 0x and 40 hex digits',
        'list.json: tokens[2] (BAD): name must not hold control characters',
        'list.json: tokens[2] (BAD): decimals must be an integer from 0 to 255',
        `list.json: tokens[3] (${'S'.repeat(20)}): symbol must be at most 20 characters`,
        'list.json: tokens[4] (X): name must be at most 60 characters',
        'list.json: tokens[5] (LOGO): logoURI must be a URI',
        'list.json: tokens[6] (X): chainId must be a positive integer',
        'list.json: tokens[7]: symbol must be a string',
        'list.json: tokens[8]: must be an object',
      ],
    );
    const many = problemsOf(list(Array.from({ length: 25 }, () => ({ ...good, address: 'nope' }))));
    assert.equal(many.length, 21);
    assert.equal(many.at(-1), 'list.json: 5 more problems not shown');
    assert.deepEqual(problemsOf(list([])), ['list.json: tokens: must be a non-empty array']);
    assert.deepEqual(problemsOf([1]), ['list.json: not a token list (expected a JSON object)']);
  });

  test('unknown chains, extra keys, odd logos and duplicates are tolerated', () => {
    const parsed = parseTokenList(
      list(
        [
          { chainId: 501000101, address: 'So11111111111111111111111111111111111111112', name: 'Wrapped SOL' },
          {
            chainId: 1285,
            address: USDC.address,
            name: 'USD Coin',
            symbol: 'USDC',
            decimals: 6,
            tags: ['x'],
          },
          {
            chainId: 321,
            address: AAVE.address,
            name: '',
            symbol: '',
            decimals: 0,
            logoURI: 'javascript:alert(1)',
          },
          { chainId: 1, address: USDC.address, name: 'First', symbol: 'A', decimals: 6, logoURI: 'ar://abc' },
          { chainId: 1, address: USDC.address.toLowerCase(), name: 'Second', symbol: 'B', decimals: 6 },
          {
            chainId: 56,
            address: AAVE.address,
            name: 'Big',
            symbol: 'BIG',
            decimals: 0,
            logoURI: `https://x/${'a'.repeat(2048)}`,
          },
        ],
        { keywords: ['extra'], _source: 'ignored' },
      ),
      'list.json',
    );
    assert.equal(parsed.otherChains, 1);
    assert.equal(parsed.duplicates, 1);
    assert.equal(parsed.ignoredIcons, 2, 'javascript: and a logo over 2048 characters are left out');
    assert.deepEqual(Object.fromEntries(parsed.entries), {
      [`movr ${USDC.address.toLowerCase()}`]: { name: 'USD Coin', symbol: 'USDC', icon: '' },
      [`kcs ${AAVE.address.toLowerCase()}`]: { name: '', symbol: '', icon: '' },
      [`eth ${USDC.address.toLowerCase()}`]: { name: 'First', symbol: 'A', icon: 'ar://abc' },
      [`bsc ${AAVE.address.toLowerCase()}`]: { name: 'Big', symbol: 'BIG', icon: '' },
    });
  });

  test('files: missing, not JSON, too large are one-line user errors naming the file', () => {
    assert.throws(() => readTokenList(join(tmp, 'none.json')), {
      shortMessage: `${join(tmp, 'none.json')}: cannot read the token list (no such file)`,
    });
    const broken = join(tmp, 'broken.json');
    writeFileSync(broken, '{"name": "x",\n "tokens": [1,]}');
    assert.throws(() => readTokenList(broken), {
      shortMessage: `${broken}: not valid JSON (unexpected ']' at line 2, column 15)`,
    });
    assert.throws(() => readTokenList(tmp), UserError);
  });
});

/** A token record as a store answers it. */
function record(token: RawToken | { address: string }, fields: Partial<TokenRecord> = {}): TokenRecord {
  return {
    chain: 'eth',
    address: token.address.toLowerCase(),
    name: '',
    symbol: '',
    decimals: 18,
    totalSupply: null,
    cap: null,
    burnedBalance: null,
    holderCount: 1,
    transferCount: 1,
    firstBlock: 1,
    icon: '',
    ...fields,
  };
}

describe('the overlay', () => {
  const uniswap = readTokenList(UNISWAP_LIST);
  const overlay = createTokenOverlay([uniswap]);

  test('an empty on-chain name and symbol are repaired, and the icon filled', () => {
    assert.deepEqual(
      overlay.apply(record(ONE_INCH)),
      record(ONE_INCH, {
        name: ONE_INCH.name,
        symbol: ONE_INCH.symbol,
        icon: ONE_INCH.logoURI!,
      }),
    );
  });

  test('an on-chain name or symbol that is not empty is never replaced', () => {
    const onChain = record(AAVE, { name: 'Aave Token', symbol: '' });
    assert.deepEqual(overlay.apply(onChain), { ...onChain, symbol: 'AAVE', icon: AAVE.logoURI! });
    const both = record(AAVE, { name: 'Aave Token', symbol: 'aave', icon: 'https://own/icon.png' });
    assert.equal(overlay.apply(both), both, 'nothing to change: the very same object');
  });

  test('tokens not in the list, and the same address on another chain, pass through untouched', () => {
    const stranger = record({ address: `0x${'ab'.repeat(20)}` });
    assert.equal(overlay.apply(stranger), stranger);
    const otherChain = record(ONE_INCH, { chain: 'movr' });
    assert.equal(overlay.apply(otherChain), otherChain);
  });

  test('several lists: the first with a value wins, field by field', () => {
    const mine = parseTokenList(
      list([
        { chainId: 1, address: ONE_INCH.address, name: 'Mine', symbol: '', decimals: 18 },
        { chainId: 1, address: `0x${'cd'.repeat(20)}`, name: 'Only mine', symbol: 'OM', decimals: 0 },
      ]),
      'mine.json',
    );
    const merged = createTokenOverlay([mine, uniswap]);
    assert.deepEqual(merged.get('eth', ONE_INCH.address.toLowerCase()), {
      name: 'Mine',
      symbol: ONE_INCH.symbol,
      icon: ONE_INCH.logoURI,
    });
    assert.equal(merged.size, uniswap.entries.size + 1);
  });
});

describe('token lists in a running API', () => {
  let store: Store;
  let server: ApiServer;
  let key: string;
  const plain = `0x${'ee'.repeat(20)}`;

  before(async () => {
    store = await openSqliteStore({ path: join(tmp, 'api.sqlite'), logger: silentLogger() });
    const holder = `0x${'a1'.repeat(20)}`;
    const tokens = [ONE_INCH.address, AAVE.address, plain].map((a) => a.toLowerCase());
    await store.writer.applyBatch(
      indexBatch({
        fromBlock: 1,
        toBlock: 3,
        transfers: tokens.map((token, i) =>
          transferRecord({
            token,
            blockNumber: i + 1,
            txHash: `0x${String(i + 1).padStart(64, '0')}`,
            from: ZERO_ADDRESS,
            to: holder,
            value: 10n ** 18n,
            time: 1_700_000_000 + i,
          }),
        ),
        tokens: [
          // What a contract whose name() and symbol() return nothing gives the indexer.
          { address: tokens[0]!, name: '', symbol: '', decimals: 18 },
          { address: tokens[1]!, name: 'Aave Token', symbol: 'AAVE', decimals: 18 },
          { address: tokens[2]!, name: '', symbol: '', decimals: 0 },
        ],
      }),
    );
    key = (await createTestApiKey(store, 't')).key;
    const lists: TokenList[] = [readTokenList(UNISWAP_LIST)];
    server = await startApiServer({
      store: withTokenOverlay(store, createTokenOverlay(lists)),
      logger: silentLogger(),
      chains: ['eth'],
      host: '127.0.0.1',
      port: 0,
    });
  });

  after(async () => {
    await server?.close();
    await store?.close();
  });

  const get = async (path: string) => okData(await call(server.url, `${path}?apikey=${key}`));

  test('Token Info: the empty name and symbol come from the list', async () => {
    const data = (await get(`/vipapi/eth/token/${ONE_INCH.address.toLowerCase()}`)) as {
      tokenInfo: { f: string; s: string };
    };
    assert.equal(data.tokenInfo.f, '1inch');
    assert.equal(data.tokenInfo.s, '1INCH');
    const aave = (await get(`/vipapi/eth/token/${AAVE.address.toLowerCase()}`)) as {
      tokenInfo: { f: string };
    };
    assert.equal(aave.tokenInfo.f, 'Aave Token', 'the on-chain name stays');
  });

  test('Token List on Chain: ic holds the logo; tokens not listed keep ""', async () => {
    const page = (await get('/vipapi/eth/tokens/1/10')) as { data: { h: string; f: string; ic: string }[] };
    const byAddress = new Map(page.data.map((t) => [t.h, t]));
    assert.equal(byAddress.get(ONE_INCH.address.toLowerCase())?.ic, ONE_INCH.logoURI);
    assert.equal(byAddress.get(ONE_INCH.address.toLowerCase())?.f, '1inch');
    assert.equal(byAddress.get(AAVE.address.toLowerCase())?.ic, AAVE.logoURI);
    assert.equal(byAddress.get(AAVE.address.toLowerCase())?.f, 'Aave Token');
    assert.deepEqual([byAddress.get(plain)?.f, byAddress.get(plain)?.ic], ['', '']);
  });

  test('Token Transaction List: the records carry the repaired symbol and name', async () => {
    const records = (await get(`/vipapi/eth/token/tokentrans/${ONE_INCH.address.toLowerCase()}/1/10`)) as {
      tokenSymbol: string;
      tokenInfo: { f: string; s: string };
    }[];
    assert.equal(records.length, 1);
    assert.deepEqual([records[0]?.tokenSymbol, records[0]?.tokenInfo.f], ['1INCH', '1inch']);
  });

  test('the store itself keeps what the chain said', async () => {
    const stored = await store.reader.getToken('eth', ONE_INCH.address.toLowerCase());
    assert.deepEqual([stored?.name, stored?.symbol, stored?.icon], ['', '', '']);
  });
});

describe('a store written before names were capped', () => {
  let store: Store;
  let server: ApiServer;
  let key: string;
  const token = `0x${'77'.repeat(20)}`;
  const hostileName = `\u202e${'Evil\u0007Name '.repeat(100_000)}`;
  const hostileSymbol = `\u001b[2J\u0000${'S'.repeat(100)}`;

  before(async () => {
    const path = join(tmp, 'old.sqlite');
    const writing = await openSqliteStore({ path, logger: silentLogger() });
    await writing.writer.applyBatch(
      indexBatch({
        fromBlock: 1,
        toBlock: 1,
        transfers: [
          transferRecord({
            token,
            blockNumber: 1,
            from: ZERO_ADDRESS,
            to: `0x${'a1'.repeat(20)}`,
            value: 1n,
          }),
        ],
        tokens: [{ address: token, name: 'Clean', symbol: 'CLN', decimals: 18 }],
      }),
    );
    key = (await createTestApiKey(writing)).key;
    await writing.close();
    // What an older version wrote for a hostile contract, before the store capped anything.
    const db = new Database(path);
    db.prepare('UPDATE tokens SET name = ?, symbol = ?').run(hostileName, hostileSymbol);
    db.close();
    store = await openSqliteStore({ path, logger: silentLogger() });
    assert.equal((await store.reader.getToken('eth', token))?.name.length, hostileName.length);
    server = await startApiServer({
      // As `serve` wires it, with no token list configured.
      store: withTokenOverlay(store, createTokenOverlay([])),
      logger: silentLogger(),
      chains: ['eth'],
      host: '127.0.0.1',
      port: 0,
    });
  });

  after(async () => {
    await server?.close();
    await store?.close();
  });

  const expectedName = 'Evil\u0007Name '
    .replace('\u0007', '')
    .repeat(20)
    .slice(0, MAX_TOKEN_NAME_CHARS)
    .trimEnd();
  const expectedSymbol = `[2J${'S'.repeat(MAX_TOKEN_SYMBOL_CHARS - 3)}`;
  const get = async (path: string) => {
    const answer = await call(server.url, `${path}?apikey=${key}`);
    assert.ok(answer.text.length < 10_000, `${path} answers ${answer.text.length} characters`);
    return okData(answer);
  };

  test('Token Info, Token List on Chain and Token Transaction List serve the name and symbol capped and clean', async () => {
    const info = (await get(`/vipapi/eth/token/${token}`)) as { tokenInfo: { f: string; s: string } };
    assert.deepEqual([info.tokenInfo.f, info.tokenInfo.s], [expectedName, expectedSymbol]);
    const page = (await get('/vipapi/eth/tokens/1/10')) as { data: { f: string; s: string }[] };
    assert.deepEqual([page.data[0]?.f, page.data[0]?.s], [expectedName, expectedSymbol]);
    const records = (await get(`/vipapi/eth/token/tokentrans/${token}/1/10`)) as {
      tokenSymbol: string;
      tokenInfo: { f: string; s: string };
    }[];
    assert.deepEqual(
      [records[0]?.tokenSymbol, records[0]?.tokenInfo.f, records[0]?.tokenInfo.s],
      [expectedSymbol, expectedName, expectedSymbol],
    );
  });
});
