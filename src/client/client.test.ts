/**
 * The typed client against a running tokenquery: the API test fixture (a real server on a random
 * port over a real SQLite store seeded through the `Store` interface, see src/api/testing/fixture.ts).
 * Expected values are worked out here from the fixture's seed (transfers, metadata, the supplies
 * its JSDoc documents), never read back from the server. Also: the package's `tokenquery/client`
 * export, and that the client imports nothing but itself.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  ALICE,
  type ApiFixture,
  BIG,
  BSC_INDEXED,
  ETH_HEAD,
  ETH_INDEXED,
  ETH_TOKENS,
  ETH_TRANSFERS,
  HUGE_VALUE,
  NOSUPPLY,
  ODD_VALUE,
  OVERBURNED,
  startApiFixture,
  UNKNOWN,
  USDC,
} from '../api/testing/fixture.js';
import { ZERO_ADDRESS } from '../internal/chains.js';
import type { TransferRecord } from '../store/types.js';
import {
  createTokenqueryClient,
  type EvmTransfer,
  InvalidApiKeyError,
  InvalidParameterError,
  NoDataError,
  NotFoundError,
  type TokenqueryClient,
  UnsupportedCoinError,
} from './index.js';
import { rejectsWithApiError } from './testing/expect.js';

let fx: ApiFixture;
let client: TokenqueryClient;

before(async () => {
  fx = await startApiFixture();
  client = createTokenqueryClient({ baseUrl: fx.url, apiKey: fx.key });
});
after(async () => {
  await fx.close();
});

// ---- expected values, from the seed ----

const tokenOf = (address: string) => ETH_TOKENS.find((t) => t.address === address)!;
const transfersOf = (address: string) => ETH_TRANSFERS.filter((t) => t.token === address);

/**
 * docs/api.md#transfer-and-holder-counts: distinct addresses other than the zero address whose
 * balance is above zero.
 */
function holdersOf(address: string): number {
  const balances = new Map<string, bigint>();
  for (const t of transfersOf(address)) {
    balances.set(t.from, (balances.get(t.from) ?? 0n) - t.value);
    balances.set(t.to, (balances.get(t.to) ?? 0n) + t.value);
  }
  return [...balances].filter(([holder, balance]) => holder !== ZERO_ADDRESS && balance > 0n).length;
}

/**
 * Supplies as docs/api.md#supply-bodies and #evm-supplies write them, by hand from the fixture's
 * documented seed.
 */
const SUPPLY: Record<string, { total: string; max: string; circulating: string } | null> = {
  [USDC]: { total: '1.5', max: '1.5', circulating: '1.5' },
  [BIG]: { total: '1000000000', max: '2000000000', circulating: '900000000' },
  [NOSUPPLY]: null,
  [OVERBURNED]: { total: '5', max: '5', circulating: '0' },
};

/** Newest first: block, then log index, descending. */
const newestFirst = (a: TransferRecord, b: TransferRecord) =>
  b.blockNumber - a.blockNumber || b.logIndex - a.logIndex;

function expectedTransfers(address: string): EvmTransfer[] {
  const token = tokenOf(address);
  const d = String(token.decimals);
  return transfersOf(address)
    .sort(newestFirst)
    .map((t) => ({
      index: t.txIndex,
      block_no: t.blockNumber,
      token: address,
      tokenAddr: address,
      tokenSymbol: token.symbol,
      tokenDecimals: d,
      time: t.time,
      txid: t.txHash,
      tokenInfo: { h: address, f: token.name, s: token.symbol, d },
      from: t.from,
      to: t.to,
      value: t.value.toString(),
      conformations: ETH_HEAD - t.blockNumber + 1,
    }));
}

describe('typed client, EVM family, against a running tokenquery', () => {
  test('there are 23 operation functions: 11 EVM, 12 NEO (client.address.test.ts tests the 10 address ones)', () => {
    assert.deepEqual(Object.keys(client.evm).sort(), [
      'addressBalance',
      'addressBalances',
      'addressTokenTransfers',
      'addressTransfers',
      'circulatingSupply',
      'holders',
      'maxSupply',
      'tokenInfo',
      'tokens',
      'totalSupply',
      'transfers',
    ]);
    assert.deepEqual(Object.keys(client.neo).sort(), [
      'addressBalance',
      'addressBalances',
      'addressTokenTransfers',
      'addressTransfers',
      'assetInfo',
      'assets',
      'contracts',
      'holders',
      'maxSupply',
      'tokenInfo',
      'totalSupply',
      'transfers',
    ]);
  });

  test('Token Info: every token of the seed, exact', async () => {
    for (const token of ETH_TOKENS) {
      const info = await client.evm.tokenInfo({ chain: 'eth', address: token.address });
      assert.deepEqual(info, {
        network: 'ETH',
        tokenHash: token.address,
        transferCnt: transfersOf(token.address).length,
        holderCnt: holdersOf(token.address),
        tokenInfo: {
          h: token.address,
          p: 'ETH',
          f: token.name,
          s: token.symbol,
          d: String(token.decimals),
          t: SUPPLY[token.address]?.total ?? null,
        },
      });
    }
    // The same address on another chain is another token.
    const bsc = await client.evm.tokenInfo({ chain: 'bsc', address: USDC });
    assert.deepEqual([bsc.network, bsc.tokenInfo.s, bsc.tokenInfo.d], ['BSC', 'bUSDC', '18']);
  });

  test('Total, Max and Circulating Supply: exact decimal text; 404 when the supply is unknown', async () => {
    for (const [address, supply] of Object.entries(SUPPLY)) {
      const args = { chain: 'eth', address } as const;
      if (supply === null) {
        for (const call of [client.evm.totalSupply, client.evm.maxSupply, client.evm.circulatingSupply]) {
          await rejectsWithApiError(call(args), NoDataError, {
            code: 404,
            httpStatus: 200,
            message: '无数据',
          });
        }
        continue;
      }
      assert.deepEqual(
        {
          total: await client.evm.totalSupply(args),
          max: await client.evm.maxSupply(args),
          circulating: await client.evm.circulatingSupply(args),
        },
        supply,
        address,
      );
    }
  });

  test('Token Transaction List: newest first, raw values above 2^53 exact, paging', async () => {
    for (const token of ETH_TOKENS) {
      const all = await client.evm.transfers({ chain: 'eth', address: token.address, page: 1, size: 50 });
      assert.deepEqual(all, expectedTransfers(token.address), token.address);
    }
    const big = await client.evm.transfers({ chain: 'eth', address: NOSUPPLY });
    assert.deepEqual(
      big.map((t) => BigInt(t.value)),
      [ODD_VALUE, HUGE_VALUE],
    );
    // Pages of 2 over USDC's 5 transfers, then past the end.
    const expected = expectedTransfers(USDC);
    const pages = [];
    for (let page = 1; page <= 4; page++) {
      pages.push(await client.evm.transfers({ chain: 'eth', address: USDC, page, size: 2 }));
    }
    assert.deepEqual(pages, [expected.slice(0, 2), expected.slice(2, 4), expected.slice(4), []]);
    assert.equal(expected.length, 5);
  });

  test('Token List on Chain: ranked by holders, transfers, address; total; paging past the end', async () => {
    const ranked = ETH_TOKENS.map((t) => t.address).sort(
      (a, b) =>
        holdersOf(b) - holdersOf(a) || transfersOf(b).length - transfersOf(a).length || (a < b ? -1 : 1),
    );
    const page = await client.evm.tokens({ chain: 'eth' });
    assert.deepEqual(
      { page: page.page, size: page.size, total: page.total },
      { page: 1, size: 50, total: ETH_TOKENS.length },
    );
    assert.deepEqual(
      page.data,
      ranked.map((address) => {
        const token = tokenOf(address);
        return {
          h: address,
          p: 'ETH',
          f: token.name,
          s: token.symbol,
          d: String(token.decimals),
          t: SUPPLY[address]?.total ?? null,
          ic: '',
        };
      }),
    );
    const second = await client.evm.tokens({ chain: 'eth', page: 2, size: 3 });
    assert.deepEqual([second.page, second.size, second.total, second.data], [2, 3, 4, page.data.slice(3)]);
    const past = await client.evm.tokens({ chain: 'eth', page: 3, size: 3 });
    assert.deepEqual([past.total, past.data], [4, []]);
  });

  test('a bad or revoked key is InvalidApiKeyError (50003, HTTP 401), and no error holds the key', async () => {
    const wrongKey = `${fx.key.slice(0, -4)}zzzz`;
    const wrong = createTokenqueryClient({ baseUrl: fx.url, apiKey: wrongKey });
    const invalid = { code: 50003, httpStatus: 401, message: 'invalid apikey' };
    await rejectsWithApiError(
      wrong.evm.tokenInfo({ chain: 'eth', address: USDC }),
      InvalidApiKeyError,
      invalid,
      [wrongKey],
    );
    await rejectsWithApiError(
      wrong.evm.totalSupply({ chain: 'eth', address: USDC }),
      InvalidApiKeyError,
      invalid,
    );
    await rejectsWithApiError(wrong.neo.contracts(), InvalidApiKeyError, invalid);

    const { key, id } = await fx.addKey('to revoke');
    const revocable = createTokenqueryClient({ baseUrl: fx.url, apiKey: key });
    assert.equal((await revocable.evm.tokenInfo({ chain: 'eth', address: USDC })).tokenHash, USDC);
    assert.ok(await fx.store.keys.revokeApiKey(id, Date.now()));
    // Running servers refuse a revoked key within one second (docs/api.md#key-handling; the API's tests hold
    // it to that); the slack here only keeps a loaded machine from failing this test.
    const deadline = Date.now() + 5000;
    for (;;) {
      const outcome = await revocable.evm.tokenInfo({ chain: 'eth', address: USDC }).catch((error) => error);
      if (outcome instanceof InvalidApiKeyError) break;
      assert.ok(Date.now() < deadline, 'the revoked key still works');
      await new Promise((r) => setTimeout(r, 100));
    }
    await rejectsWithApiError(revocable.evm.tokens({ chain: 'eth' }), InvalidApiKeyError, invalid, [key]);
  });

  test('an unknown token is NoDataError (404 with HTTP 200) in every operation that takes one', async () => {
    const noData = { code: 404, httpStatus: 200, message: '无数据' };
    const args = { chain: 'eth', address: UNKNOWN } as const;
    await rejectsWithApiError(client.evm.tokenInfo(args), NoDataError, noData);
    await rejectsWithApiError(client.evm.totalSupply(args), NoDataError, noData);
    await rejectsWithApiError(client.evm.maxSupply(args), NoDataError, noData);
    await rejectsWithApiError(client.evm.circulatingSupply(args), NoDataError, noData);
    await rejectsWithApiError(client.evm.transfers(args), NoDataError, noData);
  });

  test('bad parameters are InvalidParameterError (10001) with the server message', async () => {
    for (const [page, size] of [
      [0, 10],
      [51, 10],
      [1, 51],
      [1, 0],
      [-1, 10],
      [1.5, 10],
      [Number.NaN, 10],
    ] as const) {
      const invalid = { code: 10001, httpStatus: 200, message: /^invalid parameter: (page|size) must be/ };
      await rejectsWithApiError(
        client.evm.transfers({ chain: 'eth', address: USDC, page, size }),
        InvalidParameterError,
        invalid,
      );
      await rejectsWithApiError(
        client.evm.tokens({ chain: 'eth', page, size }),
        InvalidParameterError,
        invalid,
      );
    }
    await rejectsWithApiError(
      // Letters in the hex (the seed's token addresses are all digits): ALICE's address.
      client.evm.tokenInfo({ chain: 'eth', address: ALICE.toUpperCase().replace('0X', '0x') }),
      InvalidParameterError,
      { code: 10001, httpStatus: 200, message: 'invalid parameter: address must be lower case' },
    );
    // Path characters in an argument stay inside their segment: a parameter error, not another path.
    for (const address of [`${USDC}/1/10`, `${USDC}?apikey=x`, '..%2Fstatus', `${USDC}#x`]) {
      await rejectsWithApiError(client.evm.tokenInfo({ chain: 'eth', address }), InvalidParameterError, {
        code: 10001,
        httpStatus: 200,
        message: /^invalid parameter: address/,
      });
    }
  });

  test('a chain the server does not serve is UnsupportedCoinError (50001), NEO included here', async () => {
    const unsupported = { code: 50001, httpStatus: 200, message: 'unsupport coin' };
    await rejectsWithApiError(
      client.evm.tokenInfo({ chain: 'kcs', address: USDC }),
      UnsupportedCoinError,
      unsupported,
    );
    await rejectsWithApiError(client.evm.tokens({ chain: 'kcs' }), UnsupportedCoinError, unsupported);
    // This server is configured without neo: each NEO operation reaches its route and is refused there.
    const hash = `0x${'ab'.repeat(20)}`;
    for (const call of [
      client.neo.tokenInfo({ hash }),
      client.neo.totalSupply({ hash }),
      client.neo.maxSupply({ hash }),
      client.neo.transfers({ hash }),
      client.neo.assetInfo({ hash }),
      client.neo.assets(),
      client.neo.contracts({ page: 1, size: 10 }),
    ]) {
      await rejectsWithApiError(call, UnsupportedCoinError, unsupported);
    }
  });

  test('a path the server does not have is NotFoundError (404 with HTTP 404)', async () => {
    // A base URL with a prefix this server does not have (a gateway path, say): every path is unknown.
    const prefixed = createTokenqueryClient({ baseUrl: `${fx.url}/tokenview`, apiKey: fx.key });
    const notFound = { code: 404, httpStatus: 404, message: 'not found' };
    await rejectsWithApiError(
      prefixed.evm.tokenInfo({ chain: 'eth', address: USDC }),
      NotFoundError,
      notFound,
    );
    await rejectsWithApiError(
      prefixed.evm.totalSupply({ chain: 'eth', address: USDC }),
      NotFoundError,
      notFound,
    );
    await rejectsWithApiError(prefixed.neo.assets(), NotFoundError, notFound);
  });

  test('tokenquery-only helpers: status and healthz', async () => {
    const status = await client.tokenquery.status();
    assert.deepEqual(
      { head: status.chains.eth?.head, indexed: status.chains.eth?.indexed },
      { head: ETH_HEAD, indexed: ETH_INDEXED },
    );
    assert.equal(status.chains.bsc?.indexed, BSC_INDEXED);
    assert.deepEqual(Object.keys(status.chains).sort(), ['bsc', 'eth', 'movr']);
    assert.equal(await client.tokenquery.healthz(), true);
  });

  test('a base URL with a trailing slash works the same', async () => {
    const slashed = createTokenqueryClient({ baseUrl: `${fx.url}/`, apiKey: fx.key });
    assert.equal(slashed.baseUrl, fx.url);
    assert.equal(await slashed.evm.totalSupply({ chain: 'eth', address: BIG }), '1000000000');
  });
});

describe('the package export', () => {
  test('tokenquery/client resolves through the exports map to this module, with declarations', async () => {
    // A specifier held in a variable: TypeScript must not resolve it at build time (the .d.ts
    // it points to is emitted by the same build).
    const specifier = 'tokenquery/client';
    const exported = (await import(specifier)) as Record<string, unknown>;
    const local = (await import('./index.js')) as Record<string, unknown>;
    assert.equal(exported.createTokenqueryClient, local.createTokenqueryClient);
    assert.deepEqual(Object.keys(exported).sort(), Object.keys(local).sort());

    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    const entry = pkg.exports['./client']!;
    const root = new URL('../../../', import.meta.url);
    assert.ok(existsSync(new URL(entry.default, root)), entry.default);
    const declarations = readFileSync(new URL(entry.types, root), 'utf8');
    assert.match(declarations, /createTokenqueryClient/);
    assert.match(declarations, /TokenqueryApiError/);
    // Every module the declarations re-export has its own declarations.
    for (const [, module] of declarations.matchAll(/from '\.\/([a-z-]+)\.js'/g)) {
      assert.ok(existsSync(new URL(`${module}.d.ts`, new URL(entry.types, root))), `${module}.d.ts`);
    }
  });

  test('the client imports nothing outside its own folder (no server code, no Node built-ins)', () => {
    const dir = new URL('./', import.meta.url);
    const modules = readdirSync(dir).filter((f) => f.endsWith('.js') && !f.endsWith('.test.js'));
    assert.ok(modules.includes('index.js') && modules.includes('client.js'));
    for (const file of modules) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      const specifiers = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*'([^']+)'/g)].map(
        (m) => m[1]!,
      );
      for (const specifier of specifiers) {
        assert.match(specifier, /^\.\/[a-z-]+\.js$/, `${file} imports ${specifier}`);
      }
      assert.doesNotMatch(source, /\bimport\s*\(/, `${file} has a dynamic import`);
      assert.doesNotMatch(source, /\brequire\s*\(/, `${file} requires`);
    }
  });
});
