import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { ProblemsError, UserError } from '../internal/errors.js';
import { API_LIMIT_ENV } from './api-limits.js';
import {
  CONFIG_ENV,
  CONFIG_FILE_NAME,
  CONFIG_FILE_SCHEMA,
  CONFIG_SCHEMA_PATH,
  configJsonSchema,
  findConfigFile,
  parseConfigFile,
  readConfigFile,
} from './file.js';
import { HTTP_LIMIT_ENV } from './http-limits.js';
import { DEFAULTS, ENV, loadConfig } from './load.js';
import type { ObjectSchema, Schema } from './schema.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'tq-config-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
/** Writes `content` (an object as JSON, or raw text) to a fresh folder and returns the file's path. */
function writeConfig(content: unknown, name = CONFIG_FILE_NAME): string {
  const dir = join(tmp, `c${n++}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** The problem lines of parsing `json` as a config file (none: it is valid). */
function problemsOf(json: unknown): string[] {
  try {
    parseConfigFile(json, 'cfg.json', join(tmp, 'cfg.json'));
    return [];
  } catch (error) {
    assert.ok(error instanceof ProblemsError, String(error));
    for (const line of error.problems) assert.ok(!line.includes('\n'), 'each problem is one line');
    return [...error.problems];
  }
}

const SECRET_RPC = 'https://user:rpc-secret@node.example/v3/key-secret';
const SECRET_DB = 'postgres://tq:db-secret@db.example:5432/tokenquery';

describe('config file validation', () => {
  test('a complete file is accepted and every field arrives', () => {
    const path = writeConfig({
      $schema: './docs/tokenquery.config.schema.json',
      db: SECRET_DB,
      dbRead: 'postgres://tq:pw@replica/tokenquery',
      host: '0.0.0.0',
      port: 9000,
      logLevel: 'debug',
      pollIntervalMs: 250,
      chains: {
        eth: { rpc: SECRET_RPC, fromBlock: 17_000_000, finality: 12 },
        neo: { rpc: 'http://neo:10332' },
      },
      tokenLists: ['lists/uniswap.json', '/abs/other.json'],
      rateLimit: '600/min',
      rateBurst: 20,
      redis: 'redis://:pw@cache:6379/0',
      trustProxy: ['10.0.0.0/8', 'loopback'],
      anonymousRateLimit: '2/s',
    });
    const file = readConfigFile(path);
    const config = loadConfig({}, {}, file);
    assert.equal(config.db, SECRET_DB);
    assert.equal(config.dbRead, 'postgres://tq:pw@replica/tokenquery');
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 9000);
    assert.equal(config.logLevel, 'debug');
    assert.deepEqual(
      config.chains.map((c) => [c.name, c.rpcUrl, c.fromBlock, c.finalityDepth, c.pollIntervalMs]),
      [
        ['eth', SECRET_RPC, 17_000_000, 12, 250],
        ['neo', 'http://neo:10332', 0, 64, 250],
      ],
    );
    assert.deepEqual(config.tokenLists, [join(path, '..', 'lists/uniswap.json'), '/abs/other.json']);
    assert.deepEqual(config.limits, {
      defaultRateLimit: { perSecond: 10, burst: 20 },
      redis: 'redis://:pw@cache:6379/0',
      trustProxy: ['10.0.0.0/8', 'loopback'],
      anonymousRateLimit: { perSecond: 2, burst: 2 },
    });
    assert.equal(
      loadConfig({}, {}, readConfigFile(writeConfig({ anonymousRateLimit: 'off' }))).limits
        .anonymousRateLimit,
      null,
    );
    assert.deepEqual(
      loadConfig({}, {}, readConfigFile(writeConfig({ trustProxy: '127.0.0.1, ::1' }))).limits.trustProxy,
      ['127.0.0.1/32', '::1/128'],
    );
  });

  test('reconcile: a switch for the EVM chains, off unless the file, the variable or the flag turns it on', () => {
    const on = (file: unknown, env: NodeJS.ProcessEnv = {}, raw: { reconcile?: boolean } = {}) =>
      loadConfig(
        { rpc: ['eth=http://a', 'bsc=http://b', 'neo=http://n'], ...raw },
        env,
        readConfigFile(writeConfig(file)),
      ).chains.map((c) => [c.name, c.reconcile === true]);
    assert.deepEqual(on({}), [
      ['eth', false],
      ['bsc', false],
      ['neo', false],
    ]);
    // NEO has no tokens whose balances move without a log: its chain never reconciles.
    assert.deepEqual(on({ reconcile: true }), [
      ['eth', true],
      ['bsc', true],
      ['neo', false],
    ]);
    assert.deepEqual(on({ reconcile: true }, { TOKENQUERY_RECONCILE: '0' })[0], ['eth', false]);
    assert.deepEqual(on({}, { TOKENQUERY_RECONCILE: 'yes' })[0], ['eth', true]);
    assert.deepEqual(on({}, { TOKENQUERY_RECONCILE: '0' }, { reconcile: true })[0], ['eth', true]);
    assert.throws(() => on({}, { TOKENQUERY_RECONCILE: 'maybe' }), {
      shortMessage: 'TOKENQUERY_RECONCILE must be 1 or 0 (true or false), got "maybe"',
    });
    assert.deepEqual(problemsOf({ reconcile: 'yes' }).length, 1);
  });

  test('every flag and variable has its field in the file', () => {
    const where: Record<string, string> = {
      rpc: 'chains.eth.rpc',
      ws: 'chains.eth.ws',
      fromBlock: 'chains.eth.fromBlock',
      finality: 'chains.eth.finality',
      db: 'db',
      dbRead: 'dbRead',
      port: 'port',
      host: 'host',
      pollInterval: 'pollIntervalMs',
      logLevel: 'logLevel',
      tokenList: 'tokenLists',
      reconcile: 'reconcile',
      rateLimit: 'rateLimit',
      rateBurst: 'rateBurst',
      redis: 'redis',
      trustProxy: 'trustProxy',
      trustProxyAny: 'trustProxyAny',
      operatorListen: 'operatorListen',
      anonymousRateLimit: 'anonymousRateLimit',
      requestTimeout: 'requestTimeoutMs',
      headersTimeout: 'headersTimeoutMs',
      idleTimeout: 'idleTimeoutMs',
      maxConnections: 'maxConnections',
    };
    assert.deepEqual(
      Object.keys(where).sort(),
      [...Object.keys(ENV), ...Object.keys(API_LIMIT_ENV), ...Object.keys(HTTP_LIMIT_ENV)].sort(),
    );
    for (const path of Object.values(where)) {
      let schema: Schema | undefined = CONFIG_FILE_SCHEMA;
      for (const key of path.split('.')) schema = (schema as ObjectSchema | undefined)?.properties[key];
      assert.ok(schema, `${path} is in the file's schema`);
      assert.ok(schema.description.length > 20, `${path} is described`);
    }
  });

  test('a trusted-proxy range over public space is refused, naming trustProxyAny, which forces it', () => {
    const wide = (json: unknown) => () => loadConfig({}, {}, readConfigFile(writeConfig(json), 'cfg.json'));
    for (const trustProxy of [['0.0.0.0/0'], '10.0.0.0/8, ::/0']) {
      assert.throws(wide({ trustProxy }), (error: unknown) => {
        assert.ok(error instanceof UserError, String(error));
        assert.match(
          error.shortMessage,
          /^cfg\.json: trustProxy: (0\.0\.0\.0|::)\/0 covers public addresses .*, or trustProxyAny: true to trust it anyway$/,
        );
        return true;
      });
      assert.doesNotThrow(wide({ trustProxy, trustProxyAny: true }));
    }
    assert.throws(wide({ trustProxy: '::/0', trustProxyAny: false }), /covers public addresses/);
    assert.throws(
      wide({ trustProxyAny: true }),
      /cfg\.json: trustProxyAny needs a --trust-proxy to go with it/,
    );
    // The flag forces a range from the file, and a private range needs nothing.
    assert.deepEqual(
      loadConfig({ trustProxyAny: true }, {}, readConfigFile(writeConfig({ trustProxy: '::/0' }))).limits,
      { trustProxy: ['::/0'] },
    );
    assert.deepEqual(
      loadConfig({}, {}, readConfigFile(writeConfig({ trustProxy: ['fd00::/8', '192.168.0.0/16'] }))).limits,
      { trustProxy: ['fd00::/8', '192.168.0.0/16'] },
    );
  });

  test('the bad field is named, with what is wrong: the message the README promises', () => {
    assert.deepEqual(problemsOf({ chains: { eth: { rpc: 'ftp://node/x' } } }), [
      'cfg.json: chains.eth.rpc: must be an http(s) URL',
    ]);
    assert.deepEqual(problemsOf({ chains: { eth: { rpc: 'not a url' } } }), [
      'cfg.json: chains.eth.rpc: must be an http(s) URL',
    ]);
    assert.deepEqual(problemsOf({ port: 65_536, pollIntervalMs: 10 }), [
      'cfg.json: port: must be between 0 and 65535, got 65536',
      'cfg.json: pollIntervalMs: must be between 50 and 3600000, got 10',
    ]);
    assert.deepEqual(problemsOf({ port: '8080', host: '', db: 5, tokenLists: 'a.json' }), [
      'cfg.json: port: must be an integer, got a string',
      'cfg.json: host: must not be empty',
      'cfg.json: db: must be a string, got an integer',
      'cfg.json: tokenLists: must be an array, got a string',
    ]);
    assert.deepEqual(
      problemsOf({ chains: { bsc: { fromBlock: 1.5, finality: -1 } }, tokenLists: ['a', 7] }),
      [
        'cfg.json: chains.bsc.fromBlock: must be an integer, got a number',
        'cfg.json: chains.bsc.finality: must be between 0 and 100000, got -1',
        'cfg.json: tokenLists[1]: must be a string, got an integer',
      ],
    );
    assert.deepEqual(problemsOf({ logLevel: 'warning' }), [
      'cfg.json: logLevel: must be one of fatal, error, warn, info, debug, trace, silent, got "warning" (did you mean "warn"?)',
    ]);
    assert.deepEqual(problemsOf({ dbRead: 'mysql://x/y' }), [
      'cfg.json: dbRead: must be a postgres:// connection string',
    ]);
    assert.deepEqual(problemsOf({ rateLimit: '10/week', rateBurst: 0, redis: 'http://x', trustProxy: 0 }), [
      'cfg.json: rateLimit: must look like 10/s, 600/min, 3600/h or unlimited, got "10/week"',
      'cfg.json: rateBurst: must be between 1 and 1000000000, got 0',
      'cfg.json: redis: must be a redis:// or rediss:// URL',
      'cfg.json: trustProxy: must be proxies (CIDRs, addresses, loopback, linklocal, uniquelocal), got an integer',
    ]);
    assert.deepEqual(problemsOf({ trustProxy: [1], rateLimit: '1000001/s' }), [
      'cfg.json: trustProxy[0]: must be a string, got an integer',
      'cfg.json: rateLimit: must be between 1/day and 1000000/s, got "1000001/s"',
    ]);
    assert.deepEqual(problemsOf({ trustProxyAny: 'yes' }), [
      'cfg.json: trustProxyAny: must be true or false, got a string',
    ]);
    assert.deepEqual(problemsOf({ anonymousRateLimit: 'never' }), [
      'cfg.json: anonymousRateLimit: must look like 10/s, 600/min, 3600/h or off, got "never"',
    ]);
    assert.deepEqual(problemsOf([]), ['cfg.json: (top level): must be an object, got an array']);
  });

  test('unknown keys are refused with the nearest valid name', () => {
    assert.deepEqual(
      problemsOf({
        prot: 1,
        Port: 2,
        log_level: 'info',
        tokenList: [],
        pollInterval: 5,
        chains: { etj: {}, eth: { rcp: 'http://a', from_block: 1 } },
        rpc: 'http://a',
        frobnicate: true,
      }),
      [
        'cfg.json: prot: unknown key (did you mean "port"?)',
        'cfg.json: Port: unknown key (did you mean "port"?)',
        'cfg.json: log_level: unknown key (did you mean "logLevel"?)',
        'cfg.json: tokenList: unknown key (did you mean "tokenLists"?)',
        'cfg.json: pollInterval: unknown key (did you mean "pollIntervalMs"?)',
        'cfg.json: chains.etj: unknown chain (did you mean "eth"?)',
        'cfg.json: chains.eth.rcp: unknown key (did you mean "rpc"?)',
        'cfg.json: chains.eth.from_block: unknown key (did you mean "fromBlock"?)',
        'cfg.json: rpc: unknown key: it goes in chains.<chain>.rpc',
        `cfg.json: frobnicate: unknown key (known: ${Object.keys(CONFIG_FILE_SCHEMA.properties).join(', ')})`,
      ],
    );
  });

  test('no message shows a secret, even one written where a key goes', () => {
    const lines = problemsOf({
      db: 7,
      chains: {
        eth: { rpc: 'ftp://user:rpc-secret@node/x' },
        'https://user:key-secret@node.example/v3/x': { rpc: SECRET_RPC },
      },
      dbRead: 'mysql://tq:db-secret@db/x',
    });
    assert.equal(lines.length, 4);
    for (const line of lines) assert.doesNotMatch(line, /secret/);
  });

  test('relative paths are relative to the file; a postgres:// db is left alone', () => {
    const path = writeConfig({ db: 'data/tq.sqlite', tokenLists: ['../lists/a.json'] });
    const file = readConfigFile(path);
    assert.equal(file.db, join(path, '..', 'data/tq.sqlite'));
    assert.deepEqual(file.tokenLists, [join(path, '..', '..', 'lists/a.json')]);
    assert.equal(readConfigFile(writeConfig({ db: SECRET_DB })).db, SECRET_DB);
  });

  test('unreadable files and invalid JSON are one line each, with the line and column', () => {
    const missing = join(tmp, 'nope.json');
    assert.throws(() => readConfigFile(missing, 'nope.json'), {
      shortMessage: 'nope.json: cannot read the config file (no such file)',
    });
    assert.throws(() => readConfigFile(tmp, 'dir'), {
      shortMessage: 'dir: cannot read the config file (it is a directory)',
    });
    const broken = writeConfig('{\n  "port": 8080,\n  "host": \n}\n');
    assert.throws(
      () => readConfigFile(broken, 'broken.json'),
      (error: unknown) =>
        error instanceof UserError &&
        error.shortMessage === "broken.json: not valid JSON (unexpected '}' at line 4, column 1)",
    );
    const huge = writeConfig(`{"db": "${'x'.repeat(1 << 20)}"}`);
    assert.throws(() => readConfigFile(huge, 'huge.json'), /too large for the config file/);
  });
});

describe('precedence: flags, then environment, then the file, then defaults', () => {
  const path = writeConfig({
    port: 7000,
    host: '10.0.0.1',
    logLevel: 'error',
    db: '/file/db.sqlite',
    chains: {
      eth: { rpc: 'http://file-eth', fromBlock: 10, finality: 5 },
      bsc: { rpc: 'http://file-bsc' },
    },
    tokenLists: ['/file/list.json'],
  });
  const file = readConfigFile(path);

  test('the file alone wins over the defaults', () => {
    const config = loadConfig({}, {}, file);
    assert.equal(config.port, 7000);
    assert.equal(config.chains[0]?.pollIntervalMs, DEFAULTS.pollIntervalMs);
    assert.deepEqual(config.tokenLists, ['/file/list.json']);
  });

  test('the environment wins over the file, option by option and chain by chain', () => {
    const config = loadConfig(
      {},
      {
        [ENV.port]: '7100',
        [ENV.rpc]: 'eth=http://env-eth',
        [ENV.finality]: 'bsc=9',
        [ENV.tokenList]: '/env/a.json,/env/b.json',
      },
      file,
    );
    assert.equal(config.port, 7100);
    assert.equal(config.host, '10.0.0.1');
    assert.deepEqual(
      config.chains.map((c) => [c.name, c.rpcUrl, c.fromBlock, c.finalityDepth]),
      [
        ['eth', 'http://env-eth', 10, 5],
        ['bsc', 'http://file-bsc', 0, 9],
      ],
    );
    assert.deepEqual(config.tokenLists, ['/env/a.json', '/env/b.json']);
  });

  test('flags win over both', () => {
    const config = loadConfig(
      { port: '7200', rpc: ['bsc=http://flag-bsc'], tokenList: ['/flag/list.json'], logLevel: 'trace' },
      { [ENV.port]: '7100', [ENV.rpc]: 'bsc=http://env-bsc', [ENV.logLevel]: 'warn' },
      file,
    );
    assert.equal(config.port, 7200);
    assert.equal(config.logLevel, 'trace');
    assert.equal(config.db, '/file/db.sqlite');
    assert.equal(config.chains.find((c) => c.name === 'bsc')?.rpcUrl, 'http://flag-bsc');
    assert.deepEqual(config.tokenLists, ['/flag/list.json']);
  });

  test('a chain set up in the file without an rpc takes it from the environment; with none, the error says where', () => {
    const noRpc = readConfigFile(writeConfig({ chains: { kcs: { fromBlock: 3 } } }), 'cfg.json');
    const [kcs] = loadConfig({}, { [ENV.rpc]: 'kcs=http://env-kcs' }, noRpc).chains;
    assert.deepEqual([kcs?.rpcUrl, kcs?.fromBlock], ['http://env-kcs', 3]);
    assert.throws(() => loadConfig({}, {}, noRpc), {
      shortMessage:
        'cfg.json: chains.kcs.fromBlock: no --rpc kcs=<url> is given for chain "kcs" (nor TOKENQUERY_RPC, nor chains.kcs.rpc in the config file)',
    });
  });
});

describe('finding the config file', () => {
  test('--config, then TOKENQUERY_CONFIG, then ./tokenquery.config.json, else none', () => {
    const flagged = writeConfig({ port: 1 }, 'a.json');
    const viaEnv = writeConfig({ port: 2 }, 'b.json');
    const local = writeConfig({ port: 3 });
    const cwd = join(local, '..');
    assert.equal(findConfigFile(flagged, { [CONFIG_ENV]: viaEnv }, cwd)?.port, 1);
    assert.equal(findConfigFile(undefined, { [CONFIG_ENV]: viaEnv }, cwd)?.port, 2);
    assert.equal(findConfigFile(undefined, {}, cwd)?.port, 3);
    assert.equal(findConfigFile(undefined, {}, cwd)?.label, CONFIG_FILE_NAME);
    assert.equal(findConfigFile(undefined, {}, tmp), undefined);
  });

  test('a file named by the flag or the variable must exist', () => {
    assert.throws(() => findConfigFile('missing.json', {}, tmp), {
      shortMessage: 'missing.json: cannot read the config file (no such file)',
    });
    assert.throws(() => findConfigFile(undefined, { [CONFIG_ENV]: 'gone.json' }, tmp), {
      shortMessage: 'gone.json: cannot read the config file (no such file)',
    });
  });
});

describe('the published JSON Schema', () => {
  test(`${CONFIG_SCHEMA_PATH} is what the validator's definitions generate (regenerate: tokenquery config schema)`, () => {
    const published = JSON.parse(readFileSync(join(ROOT, CONFIG_SCHEMA_PATH), 'utf8'));
    assert.deepEqual(published, configJsonSchema());
  });

  test('a JSON Schema validator and ours agree on valid and invalid files', () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    // ajv does not check formats without ajv-formats; the `pattern` beside `format` carries the check.
    ajv.addFormat('uri', true);
    const check = ajv.compile(configJsonSchema());
    const samples: unknown[] = [
      {},
      {
        $schema: 'x',
        port: 0,
        logLevel: 'silent',
        chains: { movr: { rpc: 'HTTPS://m', fromBlock: 2 ** 48 } },
      },
      { db: SECRET_DB, dbRead: 'postgresql://r/x', tokenLists: [], pollIntervalMs: 3_600_000 },
      { port: -1 },
      { port: 1.5 },
      { port: '1' },
      { host: '' },
      { logLevel: 'loud' },
      { chains: { eth: { rpc: 'ws://node' } } },
      { chains: { eth: { rpcc: 'http://node' } } },
      { chains: { tron: {} } },
      { chains: { eth: { fromBlock: 2 ** 48 + 1 } } },
      { tokenLists: [''] },
      { dbRead: 'http://x' },
      { rateLimit: '10/s', rateBurst: 1, redis: 'rediss://:p@h:1', trustProxy: 32 },
      { rateLimit: ' 1.5/HOUR ', trustProxy: 'loopback' },
      { rateLimit: 'Unlimited', trustProxy: ['10.0.0.0/8'] },
      { rateLimit: '10/week' },
      { rateLimit: '' },
      { anonymousRateLimit: ' Off ' },
      { anonymousRateLimit: '5/min' },
      { anonymousRateLimit: 'unlimited' },
      { anonymousRateLimit: 'of' },
      { anonymousRateLimit: '10/week' },
      { rateBurst: 0 },
      { redis: 'http://x' },
      { trustProxy: 33 },
      { trustProxy: [] },
      { trustProxy: [''] },
      { trustProxy: {} },
      { trustProxy: '0.0.0.0/0', trustProxyAny: true },
      { trustProxyAny: false },
      { trustProxyAny: 'true' },
      { trustProxyAny: 1 },
      { extra: 1 },
      [],
      'text',
    ];
    for (const sample of samples) {
      const ours = problemsOf(sample).length === 0;
      assert.equal(check(sample), ours, `${JSON.stringify(sample)}: ajv ${check(sample)}, ours ${ours}`);
    }
  });
});
