/**
 * The config file and token lists through the real CLI: `config check`, one-line errors, and
 * `start --config` against a real anvil chain where a contract at the real 1inch address answers
 * `name()` and `symbol()` with nothing, so the Uniswap default list (npm) repairs it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type AnvilInstance, startAnvil } from '../devchain/anvil.js';
import { getAccounts } from '../devchain/chain.js';
import { type DeployedToken, deployToken, mintToken, readNameSymbol } from '../devchain/deploy.js';
import { rpc } from '../devchain/rpc.js';
import {
  apiUrl,
  assertOneLineError,
  type CliProcess,
  eventually,
  getJson,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

const UNISWAP_LIST = createRequire(import.meta.url).resolve(
  '@uniswap/default-token-list/build/uniswap-default.tokenlist.json',
);
const MAINNET_FIXTURE = fileURLToPath(
  new URL('../../../fixtures/evm/crosscheck/uniswap_default_tokenlist_mainnet.json', import.meta.url),
);
const SCHEMA = fileURLToPath(new URL('../../../docs/tokenquery.config.schema.json', import.meta.url));
const uniswap = JSON.parse(readFileSync(UNISWAP_LIST, 'utf8')) as {
  tokens: { chainId: number; address: string; name: string; symbol: string; logoURI?: string }[];
};
const ONE_INCH = uniswap.tokens.find((t) => t.chainId === 1 && t.symbol === '1INCH')!;

/** Credentials that must never appear in any output. */
const RPC_SECRET = 'rpc-s3cret';
const DB_SECRET = 'db-s3cret';

function writeJson(dir: string, name: string, value: unknown): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

after(() => removeTempDirs());

describe('config check', () => {
  test('a bad file: exit 2 and one line per problem, each naming the field, no secret', async () => {
    const dir = tempDir();
    const path = writeJson(dir, 'bad.json', {
      prot: 8080,
      db: `postgres://tq:${DB_SECRET}@db/tq`,
      logLevel: 'verbose',
      chains: { eth: { rpc: `ftp://u:${RPC_SECRET}@node/x` }, tron: {} },
    });
    const result = await runCli(['config', 'check', '--config', path]);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.deepEqual(lines(result.stderr), [
      `tokenquery: ${path}: prot: unknown key (did you mean "port"?)`,
      `tokenquery: ${path}: logLevel: must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"`,
      `tokenquery: ${path}: chains.eth.rpc: must be an http(s) URL`,
      `tokenquery: ${path}: chains.tron: unknown chain (known: eth, bsc, kcs, movr, neo)`,
    ]);
    assert.doesNotMatch(result.stderr, /s3cret/);

    // Any other command shows the first problem, counts the rest and says where to see them.
    const start = await runCli(['start', '--config', path]);
    assertOneLineError(
      start,
      /^tokenquery: .*bad\.json: prot: unknown key \(did you mean "port"\?\) \(and 3 more\); `tokenquery config check` lists them all$/,
      [RPC_SECRET, DB_SECRET],
    );
  });

  test('a trusted-proxy range over public space in the file is one line naming trustProxyAny', async () => {
    const dir = tempDir();
    const wide = writeJson(dir, 'wide.json', { trustProxy: ['192.168.0.0/16', '0.0.0.0/0'] });
    const forced = writeJson(dir, 'forced.json', { trustProxy: '::/0', trustProxyAny: true });
    const [serve, check] = await Promise.all([
      runCli(['serve', '--config', wide, '--db', join(dir, 'db.sqlite'), '--port', '0']),
      runCli(['config', 'check', '--config', forced]),
    ]);
    assertOneLineError(
      serve,
      /^tokenquery: .*wide\.json: trustProxy: 0\.0\.0\.0\/0 covers public addresses .*, or trustProxyAny: true to trust it anyway$/,
    );
    assert.equal(check.code, 0, check.stderr);
    assert.deepEqual((JSON.parse(check.stdout) as { trustProxy: string[] }).trustProxy, ['::/0']);
  });

  test('a good file found in the working directory: the effective settings, secrets redacted', async () => {
    const dir = tempDir();
    writeJson(dir, 'tokenquery.config.json', {
      $schema: SCHEMA,
      db: `postgres://tq:${DB_SECRET}@db.internal:5432/tokenquery`,
      port: 9100,
      chains: { eth: { fromBlock: 5 }, bsc: { rpc: `https://u:${RPC_SECRET}@bsc.example/v3/${RPC_SECRET}` } },
      tokenLists: [UNISWAP_LIST],
    });
    const result = await runCli(['config', 'check', '--log-level', 'warn'], {
      cwd: dir,
      env: { TOKENQUERY_RPC: `eth=http://op:${RPC_SECRET}@127.0.0.1:8545`, TOKENQUERY_PORT: '9200' },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout + result.stderr, /s3cret/);
    const effective = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.deepEqual(effective, {
      configFile: join(dir, 'tokenquery.config.json'),
      db: 'postgres://db.internal:5432/tokenquery',
      host: '127.0.0.1',
      port: 9200,
      logLevel: 'warn',
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      idleTimeoutMs: 72_000,
      maxConnections: 4096,
      chains: {
        eth: { rpc: 'http://127.0.0.1:8545/…', fromBlock: 5, finality: 64, pollIntervalMs: 1000 },
        bsc: { rpc: 'https://bsc.example/…', fromBlock: 0, finality: 64, pollIntervalMs: 1000 },
      },
      tokenLists: [
        {
          path: UNISWAP_LIST,
          name: 'Uniswap Labs Default',
          version: '22.21.0',
          tokens: { eth: 407, bsc: 97, kcs: 0, movr: 0 },
          otherChains: uniswap.tokens.filter((t) => t.chainId !== 1 && t.chainId !== 56).length,
        },
      ],
    });
  });

  test('a malformed token list is one line naming it for serve, and listed in full by config check', async () => {
    const serve = await runCli(['serve', '--token-list', MAINNET_FIXTURE, '--port', '0']);
    assertOneLineError(
      serve,
      /^tokenquery: .*uniswap_default_tokenlist_mainnet\.json: name: must be a non-empty string \(and 2 more\); `tokenquery config check` lists them all$/,
    );
    const check = await runCli(['config', 'check', '--token-list', MAINNET_FIXTURE]);
    assert.equal(check.code, 2);
    assert.deepEqual(
      lines(check.stderr).map((line) => line.replace(MAINNET_FIXTURE, 'F')),
      [
        'tokenquery: F: name: must be a non-empty string',
        'tokenquery: F: timestamp: must be an ISO 8601 date-time string',
        'tokenquery: F: version: must be {"major", "minor", "patch"} with non-negative integers',
      ],
    );
    const notJson = writeJson(tempDir(), 'x.json', {});
    writeFileSync(notJson, '{"name": "x", tokens: []}');
    assertOneLineError(
      await runCli(['serve', '--token-list', notJson, '--port', '0']),
      /^tokenquery: .*x\.json: not valid JSON \(unexpected 't' at line 1, column 15\)$/,
    );
  });
});

describe('start --config with token lists, against a real chain', () => {
  let anvil: AnvilInstance;
  let named: DeployedToken;
  let cli: CliProcess;
  let base: string;
  let key: string;
  let configPath: string;
  const oneInch = ONE_INCH.address.toLowerCase();

  before(async () => {
    anvil = await startAnvil();
    const [deployer, holder] = await getAccounts(anvil.url);
    named = await deployToken(anvil.url, {
      kind: 'standard',
      name: 'Real Name',
      symbol: 'REAL',
      decimals: 18,
      initialSupply: 10n ** 21n,
    });
    // The demo token's code at the real 1inch address, with empty storage: name() and symbol() return "".
    const code = await rpc<string>(anvil.url, 'eth_getCode', [named.address, 'latest']);
    await rpc(anvil.url, 'anvil_setCode', [oneInch, code]);
    assert.deepEqual(await readNameSymbol(anvil.url, oneInch), { name: '', symbol: '' });
    await mintToken(anvil.url, oneInch, { to: holder!, amount: 5n * 10n ** 18n, from: deployer! });

    const dir = tempDir();
    const mine = writeJson(join(dir, 'lists'), 'mine.json', {
      name: 'Mine',
      timestamp: '2024-05-01T00:00:00Z',
      version: { major: 1, minor: 0, patch: 0 },
      tokens: [
        {
          chainId: 1,
          address: named.address,
          name: 'List Name',
          symbol: 'LIST',
          decimals: 18,
          logoURI: 'https://icons.example/real.png',
        },
      ],
    });
    configPath = writeJson(join(dir, 'etc'), 'tokenquery.json', {
      $schema: SCHEMA,
      db: '../data/tq.sqlite',
      port: 0,
      pollIntervalMs: 100,
      chains: { eth: { rpc: anvil.url.replace('http://', `http://operator:${RPC_SECRET}@`), finality: 2 } },
      tokenLists: [UNISWAP_LIST, '../lists/mine.json'],
    });
    assert.ok(mine);
    // Another working directory: the file's relative paths are relative to the file.
    cli = spawnCli(['start', '--config', configPath], { cwd: tempDir() });
    base = await apiUrl(cli, 'tokenquery started');
    const created = await runCli(['keys', 'create', '--config', configPath], { cwd: tempDir() });
    assert.equal(created.code, 0, created.stderr);
    key = lines(created.stdout).at(-1)!;
  });

  after(async () => {
    await cli?.stop('SIGKILL');
    await anvil?.stop();
  });

  const tokenInfo = (address: string) =>
    eventually(
      async () => {
        const answer = await getJson(`${base}/vipapi/eth/token/${address}?apikey=${key}`);
        return answer.body.code === 1
          ? (answer.body.data as { tokenInfo: Record<string, string> })
          : undefined;
      },
      20_000,
      `Token Info for ${address}`,
    );

  test('the contract that answers nothing gets the list name and symbol', async () => {
    const data = await tokenInfo(oneInch);
    assert.equal(data.tokenInfo.f, ONE_INCH.name);
    assert.equal(data.tokenInfo.s, ONE_INCH.symbol);
  });

  test('a token whose contract has a name keeps it, and gets the icon of the list', async () => {
    const data = await tokenInfo(named.address);
    assert.deepEqual([data.tokenInfo.f, data.tokenInfo.s], ['Real Name', 'REAL']);
    const page = await getJson(`${base}/vipapi/eth/tokens/1/50?apikey=${key}`);
    const entries = (page.body.data as { data: { h: string; f: string; ic: string }[] }).data;
    const byAddress = new Map(entries.map((e) => [e.h, e]));
    assert.deepEqual(byAddress.get(named.address), {
      ...byAddress.get(named.address),
      f: 'Real Name',
      ic: 'https://icons.example/real.png',
    });
    assert.equal(byAddress.get(oneInch)?.ic, ONE_INCH.logoURI);
  });

  test('the logs name the lists and never show the RPC credentials', async () => {
    const output = cli.stdout() + cli.stderr();
    assert.doesNotMatch(output, new RegExp(RPC_SECRET));
    assert.match(output, /token list loaded/);
    assert.match(output, /"tokens":504/);
  });
});
