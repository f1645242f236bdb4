import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UserError } from '../internal/errors.js';
import { DEFAULTS, ENV, loadConfig, loadStoreLocation } from './load.js';

/** Asserts that `fn` throws a UserError whose one-line message matches `pattern`. */
function rejects(fn: () => unknown, pattern: RegExp): UserError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof UserError, `expected a UserError, got ${String(caught)}`);
  assert.match(caught.shortMessage, pattern);
  assert.ok(!caught.shortMessage.includes('\n'), 'the message is one line');
  return caught;
}

describe('config defaults', () => {
  test('no flags and no environment give the documented defaults', () => {
    const config = loadConfig({}, {});
    assert.deepEqual(config, {
      db: './data/tokenquery.sqlite',
      host: '127.0.0.1',
      port: 8080,
      chains: [],
      logLevel: 'info',
      tokenLists: [],
      limits: {},
      http: {
        requestTimeoutMs: 30_000,
        headersTimeoutMs: 10_000,
        idleTimeoutMs: 72_000,
        maxConnections: 4096,
      },
    });
    assert.equal(DEFAULTS.fromBlock, 0);
    assert.equal(DEFAULTS.finalityDepth, 64);
    assert.equal(DEFAULTS.pollIntervalMs, 1000);
  });

  test('a chain with only --rpc gets from-block 0, finality 64 and a 1000 ms poll interval', () => {
    const [eth] = loadConfig({ rpc: ['eth=http://127.0.0.1:8545'] }, {}).chains;
    assert.deepEqual(eth, {
      name: 'eth',
      rpcUrl: 'http://127.0.0.1:8545',
      fromBlock: 0,
      finalityDepth: 64,
      pollIntervalMs: 1000,
    });
  });

  test('the config and its chains are frozen', () => {
    const config = loadConfig({ rpc: ['eth=http://127.0.0.1:8545'] }, {});
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.chains));
    assert.ok(Object.isFrozen(config.chains[0]));
  });
});

describe('config from flags', () => {
  test('every option is read from its flag', () => {
    const config = loadConfig(
      {
        rpc: ['eth=http://a:1', 'bsc=https://b/path'],
        fromBlock: ['eth=17000000', 'bsc=5'],
        finality: ['eth=12'],
        db: '/tmp/x.sqlite',
        port: '0',
        host: '0.0.0.0',
        pollInterval: '250',
        logLevel: 'debug',
      },
      {},
    );
    assert.equal(config.db, '/tmp/x.sqlite');
    assert.equal(config.port, 0);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.logLevel, 'debug');
    assert.deepEqual(
      config.chains.map((c) => [c.name, c.rpcUrl, c.fromBlock, c.finalityDepth, c.pollIntervalMs]),
      [
        ['eth', 'http://a:1', 17_000_000, 12, 250],
        ['bsc', 'https://b/path', 5, 64, 250],
      ],
    );
  });

  test('repeated --rpc configures several chains; the chain name is case-insensitive', () => {
    const config = loadConfig({ rpc: ['ETH=http://a', 'kcs=http://k', 'movr=http://m'] }, {});
    assert.deepEqual(
      config.chains.map((c) => c.name),
      ['eth', 'kcs', 'movr'],
    );
  });

  test('a URL containing "=" keeps everything after the first one', () => {
    const [eth] = loadConfig({ rpc: ['eth=https://node/rpc?key=abc=='] }, {}).chains;
    assert.equal(eth?.rpcUrl, 'https://node/rpc?key=abc==');
  });

  test('the same chain twice in the flags is refused', () => {
    rejects(
      () => loadConfig({ rpc: ['eth=http://a', 'eth=http://b'] }, {}),
      /^--rpc: chain "eth" is given twice$/,
    );
  });
});

describe('config from the environment', () => {
  const env = {
    [ENV.rpc]: 'eth=http://env-eth:1, bsc=http://env-bsc:2',
    [ENV.fromBlock]: 'eth=100 bsc=200',
    [ENV.finality]: 'bsc=3',
    [ENV.db]: '/env/db.sqlite',
    [ENV.port]: '9000',
    [ENV.host]: '::1',
    [ENV.pollInterval]: '500',
    [ENV.logLevel]: 'warn',
  };

  test('every option has an environment variable', () => {
    assert.deepEqual(Object.values(ENV).sort(), [
      'TOKENQUERY_DB',
      'TOKENQUERY_DB_READ',
      'TOKENQUERY_FINALITY',
      'TOKENQUERY_FROM_BLOCK',
      'TOKENQUERY_HOST',
      'TOKENQUERY_LOG_LEVEL',
      'TOKENQUERY_POLL_INTERVAL_MS',
      'TOKENQUERY_PORT',
      'TOKENQUERY_RECONCILE',
      'TOKENQUERY_RPC',
      'TOKENQUERY_TOKEN_LIST',
      'TOKENQUERY_WS',
    ]);
    const config = loadConfig({}, env);
    assert.equal(config.db, '/env/db.sqlite');
    assert.equal(config.port, 9000);
    assert.equal(config.host, '::1');
    assert.equal(config.logLevel, 'warn');
    assert.deepEqual(
      config.chains.map((c) => [c.name, c.rpcUrl, c.fromBlock, c.finalityDepth, c.pollIntervalMs]),
      [
        ['eth', 'http://env-eth:1', 100, 64, 500],
        ['bsc', 'http://env-bsc:2', 200, 3, 500],
      ],
    );
  });

  test('flags win over the environment, chain by chain for pair options', () => {
    const config = loadConfig(
      {
        rpc: ['eth=http://flag-eth:1'],
        fromBlock: ['bsc=7'],
        db: '/flag/db.sqlite',
        port: '9100',
        host: '127.0.0.2',
        pollInterval: '60',
        logLevel: 'error',
      },
      env,
    );
    assert.equal(config.db, '/flag/db.sqlite');
    assert.equal(config.port, 9100);
    assert.equal(config.host, '127.0.0.2');
    assert.equal(config.logLevel, 'error');
    assert.deepEqual(
      config.chains.map((c) => [c.name, c.rpcUrl, c.fromBlock, c.finalityDepth, c.pollIntervalMs]),
      [
        ['eth', 'http://flag-eth:1', 100, 64, 60],
        ['bsc', 'http://env-bsc:2', 7, 3, 60],
      ],
    );
  });

  test('an empty variable counts as unset', () => {
    const config = loadConfig({}, { [ENV.port]: '', [ENV.db]: '', [ENV.rpc]: '' });
    assert.equal(config.port, 8080);
    assert.equal(config.db, './data/tokenquery.sqlite');
    assert.deepEqual(config.chains, []);
  });

  test('an error in a variable names the variable, not the flag', () => {
    rejects(
      () => loadConfig({}, { [ENV.port]: 'abc' }),
      /^TOKENQUERY_PORT must be a whole number, got "abc"$/,
    );
    rejects(() => loadConfig({}, { [ENV.rpc]: 'foo=http://x' }), /^TOKENQUERY_RPC: unknown chain "foo"/);
    rejects(
      () => loadConfig({}, { [ENV.rpc]: 'eth=http://x', [ENV.fromBlock]: 'eth=-1' }),
      /^TOKENQUERY_FROM_BLOCK eth must be a whole number/,
    );
    rejects(() => loadConfig({}, { [ENV.logLevel]: 'loud' }), /^TOKENQUERY_LOG_LEVEL must be one of/);
  });

  test('a valid flag hides a bad variable for the same option', () => {
    assert.equal(loadConfig({ port: '81' }, { [ENV.port]: 'abc' }).port, 81);
  });
});

describe('config errors', () => {
  test('an unknown chain lists the known ones', () => {
    rejects(
      () => loadConfig({ rpc: ['foo=http://x'] }, {}),
      /^--rpc: unknown chain "foo" \(known: eth, bsc, kcs, movr, neo\)$/,
    );
  });

  test('a pair without "=" or without a chain is refused', () => {
    rejects(() => loadConfig({ rpc: ['eth'] }, {}), /^--rpc: expected <chain>=<value>, got "eth"$/);
    rejects(() => loadConfig({ rpc: ['=http://x'] }, {}), /^--rpc: expected <chain>=<value>/);
    rejects(
      () => loadConfig({ rpc: ['eth=http://x'], fromBlock: ['eth:5'] }, {}),
      /^--from-block: expected <chain>=<value>/,
    );
  });

  test('a bare URL given as a pair is echoed without its credentials', () => {
    const error = rejects(
      () => loadConfig({ rpc: ['https://user:secret@node.example/v3/key'] }, {}),
      /^--rpc: expected/,
    );
    assert.ok(!error.shortMessage.includes('secret'), error.shortMessage);
    assert.ok(!error.message.includes('secret'), error.message);
  });

  test('--from-block or --finality for a chain without --rpc is refused', () => {
    rejects(() => loadConfig({ fromBlock: ['eth=5'] }, {}), /^--from-block eth: no --rpc eth=<url> is given/);
    rejects(
      () => loadConfig({ rpc: ['eth=http://x'], finality: ['bsc=5'] }, {}),
      /^--finality bsc: no --rpc bsc=<url> is given/,
    );
  });

  test('bad numbers are refused with the option and the value', () => {
    rejects(() => loadConfig({ port: '65536' }, {}), /^--port must be between 0 and 65535, got 65536$/);
    rejects(() => loadConfig({ port: 'http' }, {}), /^--port must be a whole number, got "http"$/);
    rejects(() => loadConfig({ port: '-1' }, {}), /^--port must be a whole number/);
    rejects(() => loadConfig({ port: '80.5' }, {}), /^--port must be a whole number/);
    rejects(() => loadConfig({ pollInterval: '10' }, {}), /^--poll-interval must be between 50 and 3600000/);
    rejects(
      () => loadConfig({ rpc: ['eth=http://x'], fromBlock: ['eth=1e6'] }, {}),
      /^--from-block eth must be a whole number/,
    );
    rejects(
      () => loadConfig({ rpc: ['eth=http://x'], finality: ['eth=100001'] }, {}),
      /^--finality eth must be between/,
    );
  });

  test('only http and https RPC URLs are accepted', () => {
    rejects(
      () => loadConfig({ rpc: ['eth=ws://127.0.0.1:8546'] }, {}),
      /^--rpc eth: only http:\/\/ and https:\/\//,
    );
    rejects(() => loadConfig({ rpc: ['eth=ftp://x'] }, {}), /^--rpc eth: only http/);
    rejects(() => loadConfig({ rpc: ['eth=127.0.0.1:8545'] }, {}), /^--rpc eth: /);
    rejects(() => loadConfig({ rpc: ['eth=not a url'] }, {}), /^--rpc eth: not a URL$/);
    rejects(() => loadConfig({ rpc: ['eth='] }, {}), /^--rpc eth: not a URL$/);
  });

  test('--ws: a ws:// or wss:// endpoint per EVM chain, from the flag, the variable or the file', () => {
    const config = loadConfig(
      { rpc: ['eth=http://127.0.0.1:8545', 'bsc=https://b'], ws: ['eth=ws://127.0.0.1:8545'] },
      { [ENV.ws]: 'eth=ws://ignored:1,bsc=wss://user:pass@b/ws' },
    );
    assert.deepEqual(
      config.chains.map((c) => [c.name, c.wsUrl]),
      [
        ['eth', 'ws://127.0.0.1:8545'],
        ['bsc', 'wss://user:pass@b/ws'],
      ],
    );
    const [polling] = loadConfig({ rpc: ['eth=http://a'] }, {}).chains;
    assert.equal(polling?.wsUrl, undefined, 'no --ws: polling only, and no guessed endpoint');
  });

  test('--ws refuses other schemes, a chain without --rpc and neo, never echoing the URL', () => {
    const rpc = ['eth=http://a', 'neo=http://n'];
    rejects(
      () => loadConfig({ rpc, ws: ['eth=http://user:secret@a:8545'] }, {}),
      /^--ws eth: expected a ws:\/\/ or wss:\/\/ endpoint, got http:\/\/$/,
    );
    rejects(() => loadConfig({ rpc, ws: ['eth=not a url'] }, {}), /^--ws eth: not a URL$/);
    rejects(() => loadConfig({ rpc, ws: ['bsc=ws://b'] }, {}), /^--ws bsc: no --rpc bsc=<url> is given/);
    rejects(() => loadConfig({ rpc, ws: ['neo=ws://n'] }, {}), /^--ws neo: NEO nodes have no eth_subscribe/);
    const error = rejects(
      () => loadConfig({ rpc }, { [ENV.ws]: 'eth=https://user:secret@a' }),
      /^TOKENQUERY_WS eth: expected a ws/,
    );
    assert.ok(!error.shortMessage.includes('secret'));
  });

  test('a websocket URL given to --rpc points to --ws', () => {
    rejects(() => loadConfig({ rpc: ['eth=ws://127.0.0.1:8546'] }, {}), /give it with --ws eth=/);
  });

  test('an unknown log level is refused', () => {
    rejects(
      () => loadConfig({ logLevel: 'verbose' }, {}),
      /^--log-level must be one of fatal, error, warn, info, debug, trace, silent/,
    );
  });

  test('an empty --db or --host is refused', () => {
    rejects(() => loadConfig({ db: '' }, {}), /^--db must not be empty$/);
    rejects(() => loadConfig({ host: ' ' }, {}), /^--host must not be empty$/);
  });
});

describe('store location alone', () => {
  test('flag, then variable, then default', () => {
    assert.equal(loadStoreLocation({ db: '/a' }, { [ENV.db]: '/b' }), '/a');
    assert.equal(loadStoreLocation({}, { [ENV.db]: '/b' }), '/b');
    assert.equal(loadStoreLocation({}, {}), './data/tokenquery.sqlite');
  });

  test('ignores unrelated bad variables, which would stop a full config', () => {
    const env = { [ENV.rpc]: 'garbage', [ENV.port]: 'abc' };
    assert.equal(loadStoreLocation({ db: '/a' }, env), '/a');
    assert.throws(() => loadConfig({ db: '/a' }, env), UserError);
  });
});

describe('read replica (--db-read)', () => {
  const primary = 'postgres://tq:primary-secret@db-primary:5432/tq';
  const replica = 'postgres://tq:replica-secret@db-replica:5432/tq';

  test('flag, then variable; absent when neither is given', () => {
    assert.equal(
      loadConfig({ db: primary, dbRead: replica }, { [ENV.dbRead]: 'postgres://x/y' }).dbRead,
      replica,
    );
    assert.equal(loadConfig({ db: primary }, { [ENV.dbRead]: replica }).dbRead, replica);
    assert.equal('dbRead' in loadConfig({ db: primary }, {}), false);
  });

  test('must be PostgreSQL, and the primary too; the messages never show either URL', () => {
    const notPostgres = rejects(
      () => loadConfig({ db: primary, dbRead: 'http://user:pw@replica/x' }, {}),
      /^--db-read must be a postgres:\/\/ connection string/,
    );
    const sqlitePrimary = rejects(
      () => loadConfig({ db: '/data/tq.sqlite' }, { [ENV.dbRead]: replica }),
      /^TOKENQUERY_DB_READ needs --db to be the primary PostgreSQL database/,
    );
    for (const error of [notPostgres, sqlitePrimary]) {
      assert.doesNotMatch(error.message, /secret|pw@/);
    }
  });
});
