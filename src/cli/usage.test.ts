/**
 * The CLI's help and its user errors, through the real compiled binary: every error is one line
 * on stderr and exit 2, fast, with no stack trace and no secret from an RPC URL.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { API_LIMIT_ENV } from '../config/api-limits.js';
import { HTTP_LIMIT_ENV } from '../config/http-limits.js';
import { ENV } from '../config/load.js';
import {
  assertOneLineError,
  freePort,
  lines,
  removeTempDirs,
  runCli,
  tempDir,
} from './testing/cli-process.js';

after(removeTempDirs);

/** The options section of a help text: flag → its whole description, wrapped lines joined. */
function helpOptions(help: string): Map<string, string> {
  const options = new Map<string, string>();
  const section = help.split(/^Options:$/m)[1]?.split(/^\S/m)[0] ?? '';
  let current: string | undefined;
  for (const line of section.split('\n')) {
    const start = /^ {2}(?:-\w, )?(--[\w-]+)(.*)$/.exec(line);
    if (start) {
      current = start[1]!;
      options.set(current, start[2]!.trim());
    } else if (current && line.trim()) {
      options.set(current, `${options.get(current)} ${line.trim()}`);
    }
  }
  return options;
}

const NODE_OPTIONS: Record<string, string> = {
  '--rpc': ENV.rpc,
  '--ws': ENV.ws,
  '--from-block': ENV.fromBlock,
  '--finality': ENV.finality,
  '--db': ENV.db,
  '--port': ENV.port,
  '--host': ENV.host,
  '--poll-interval': ENV.pollInterval,
  '--log-level': ENV.logLevel,
  '--config': 'TOKENQUERY_CONFIG',
};

const API_OPTIONS: Record<string, string> = {
  '--db-read': ENV.dbRead,
  '--token-list': ENV.tokenList,
  '--rate-limit': API_LIMIT_ENV.rateLimit,
  '--rate-burst': API_LIMIT_ENV.rateBurst,
  '--redis': API_LIMIT_ENV.redis,
  '--trust-proxy': API_LIMIT_ENV.trustProxy,
  '--trust-proxy-any': API_LIMIT_ENV.trustProxyAny,
  '--operator-listen': API_LIMIT_ENV.operatorListen,
  '--anonymous-rate-limit': API_LIMIT_ENV.anonymousRateLimit,
  '--request-timeout': HTTP_LIMIT_ENV.requestTimeout,
  '--headers-timeout': HTTP_LIMIT_ENV.headersTimeout,
  '--idle-timeout': HTTP_LIMIT_ENV.idleTimeout,
  '--max-connections': HTTP_LIMIT_ENV.maxConnections,
};

describe('help', () => {
  test('the program help lists every command and exits 0', async () => {
    const result = await runCli(['--help']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    for (const command of ['start', 'serve', 'index', 'keys', 'demo']) {
      assert.match(
        result.stdout,
        new RegExp(`^ {2}${command}\\b`, 'm'),
        `${command} missing:\n${result.stdout}`,
      );
    }
  });

  test('start, serve and index document every option with its environment variable', async () => {
    const results = await Promise.all(
      ['start', 'serve', 'index'].map((command) => runCli([command, '--help'])),
    );
    for (const [i, result] of results.entries()) {
      assert.equal(result.code, 0, result.stderr);
      const options = helpOptions(result.stdout);
      // The commands that serve the API also take a read replica, token lists and key limits.
      // The commands that index also take reconcile mode.
      const expected: Record<string, string> = {
        ...NODE_OPTIONS,
        ...(i < 2 ? API_OPTIONS : {}),
        ...(i !== 1 ? { '--reconcile': ENV.reconcile } : {}),
      };
      assert.deepEqual(
        [...options.keys()].sort(),
        [...Object.keys(expected), '--help'].sort(),
        `options of ${['start', 'serve', 'index'][i]}`,
      );
      for (const [flag, variable] of Object.entries(expected)) {
        assert.match(
          options.get(flag)!,
          new RegExp(`\\[env ${variable}\\]`),
          `${flag}: ${options.get(flag)}`,
        );
      }
      assert.match(options.get('--db')!, /default \.\/data\/tokenquery\.sqlite/);
      assert.match(options.get('--port')!, /default 8080/);
      if (i < 2) assert.match(options.get('--request-timeout')!, /default 30000/);
    }
  });

  test('keys and demo document their options and variables', async () => {
    const [create, list, revoke, demo, set] = await Promise.all([
      runCli(['keys', 'create', '--help']),
      runCli(['keys', 'list', '--help']),
      runCli(['keys', 'revoke', '--help']),
      runCli(['demo', '--help']),
      runCli(['keys', 'set', '--help']),
    ]);
    for (const result of [create, list, revoke, set]) {
      assert.equal(result.code, 0, result.stderr);
      assert.match(helpOptions(result.stdout).get('--db')!, /\[env TOKENQUERY_DB\]/);
    }
    assert.ok(helpOptions(create!.stdout).has('--label'));
    for (const flag of ['--rate', '--burst', '--allow-ip']) {
      assert.ok(helpOptions(create!.stdout).has(flag), `keys create ${flag}`);
      assert.ok(helpOptions(set!.stdout).has(flag), `keys set ${flag}`);
    }
    assert.ok(helpOptions(set!.stdout).has('--any-ip'));
    assert.match(set!.stdout, /<key-or-id>/);
    assert.match(revoke!.stdout, /<key-or-id>/);
    const demoOptions = helpOptions(demo!.stdout);
    assert.deepEqual([...demoOptions.keys()].sort(), ['--db', '--help', '--host', '--log-level', '--port']);
    assert.match(demoOptions.get('--port')!, /\[env TOKENQUERY_PORT\]/);
    assert.match(demoOptions.get('--host')!, /\[env TOKENQUERY_HOST\]/);
    assert.match(demoOptions.get('--log-level')!, /\[env TOKENQUERY_LOG_LEVEL\]/);
    assert.match(demoOptions.get('--db')!, /TOKENQUERY_DB is ignored/);
  });
});

describe('usage errors', () => {
  test('an unknown command, option or extra argument is one line and exit 2', async () => {
    const [command, option, suggestion, extra] = await Promise.all([
      runCli(['bogus']),
      runCli(['--bogus']),
      runCli(['start', '--pot', '8080']),
      runCli(['serve', 'extra']),
    ]);
    assertOneLineError(command!, /^tokenquery: unknown command 'bogus'; see --help$/);
    assertOneLineError(option!, /^tokenquery: unknown option '--bogus'; see --help$/);
    assertOneLineError(suggestion!, /unknown option '--pot' \(did you mean --port\?\)/);
    assertOneLineError(extra!, /too many arguments/);
  });

  test('a missing option value or argument is one line and exit 2', async () => {
    const [value, argument] = await Promise.all([runCli(['start', '--rpc']), runCli(['keys', 'revoke'])]);
    assertOneLineError(value!, /option '--rpc <chain=url>' argument missing/);
    assertOneLineError(argument!, /missing required argument 'key-or-id'/);
  });
});

describe('user errors', () => {
  let db: string;
  before(() => {
    db = join(tempDir(), 'errors.sqlite');
  });

  test('an unknown chain names the chain and never shows the URL credentials', async () => {
    const result = await runCli(['start', '--rpc', 'foo=http://user:secret@127.0.0.1:1', '--db', db]);
    assertOneLineError(
      result,
      /^tokenquery: --rpc: unknown chain "foo" \(known: eth, bsc, kcs, movr, neo\)$/,
      ['secret'],
    );
  });

  test('bad syntax, a bad scheme, a bad port and a lone --from-block are one line each', async () => {
    const results = await Promise.all([
      runCli(['start', '--rpc', 'http://user:secret@127.0.0.1:1', '--db', db]),
      runCli(['start', '--rpc', 'eth=ws://user:secret@127.0.0.1:1', '--db', db]),
      runCli(['serve', '--port', '70000', '--db', db]),
      runCli(['index', '--from-block', 'eth=5', '--db', db]),
      runCli(['start', '--db', db]),
    ]);
    const patterns = [
      /--rpc: expected <chain>=<value>/,
      /--rpc eth: only http:\/\/ and https:\/\//,
      /--port must be between 0 and 65535, got 70000/,
      /--from-block eth: no --rpc eth=<url> is given/,
      /nothing to index: give at least one --rpc <chain>=<url>/,
    ];
    for (const [i, result] of results.entries()) assertOneLineError(result, patterns[i]!, ['secret']);
  });

  test('a trusted-proxy range over public space is one line naming it and --trust-proxy-any', async () => {
    const [v4, v6, forced] = await Promise.all([
      runCli(['serve', '--db', db, '--port', '0', '--trust-proxy', '0.0.0.0/0']),
      runCli(['serve', '--db', db, '--port', '0', '--trust-proxy', '10.0.0.0/8,::/0']),
      runCli(['config', 'check', '--trust-proxy', '::/0,0.0.0.0/0', '--trust-proxy-any']),
    ]);
    assertOneLineError(
      v4!,
      /^tokenquery: --trust-proxy: 0\.0\.0\.0\/0 covers public addresses .*; give your proxies' own ranges, or --trust-proxy-any to trust it anyway$/,
    );
    assertOneLineError(v6!, /^tokenquery: --trust-proxy: ::\/0 covers public addresses .* --trust-proxy-any/);
    assert.equal(forced!.code, 0, forced!.stderr);
    assert.deepEqual((JSON.parse(forced!.stdout) as { trustProxy: string[] }).trustProxy, [
      '::/0',
      '0.0.0.0/0',
    ]);
  });

  test('a bad environment variable names the variable', async () => {
    const result = await runCli(['serve', '--db', db], { env: { TOKENQUERY_PORT: 'eighty' } });
    assertOneLineError(result, /^tokenquery: TOKENQUERY_PORT must be a whole number, got "eighty"$/);
  });

  test('an unreachable node fails fast for start and index, without credentials', async () => {
    const closed = await freePort();
    const rpc = `eth=http://user:secret@127.0.0.1:${closed}/rpc?token=secret`;
    const [start, index] = await Promise.all([
      runCli(['start', '--rpc', rpc, '--db', db, '--port', '0']),
      runCli(['index', '--rpc', rpc, '--db', db]),
    ]);
    for (const result of [start!, index!]) {
      assertOneLineError(result, /^tokenquery: the eth node does not answer JSON-RPC/, ['secret', 'user:']);
      assert.ok(result.ms < 5000, `took ${result.ms} ms`);
    }
  });

  describe('a port already in use', () => {
    let server: Server;
    let port: number;
    before(async () => {
      server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test('is one line for serve and start, before anything else starts', async () => {
      const dir = tempDir();
      const closed = await freePort();
      const [serve, start] = await Promise.all([
        runCli(['serve', '--db', join(dir, 'serve.sqlite'), '--port', String(port)]),
        // The port is checked before the node, so even a dead node gives the port error.
        runCli([
          'start',
          '--rpc',
          `eth=http://127.0.0.1:${closed}`,
          '--db',
          join(dir, 'start.sqlite'),
          '--port',
          String(port),
        ]),
      ]);
      const message = new RegExp(
        `^tokenquery: port ${port} on 127\\.0\\.0\\.1 is already in use; choose another with --port$`,
      );
      assertOneLineError(serve!, message);
      assertOneLineError(start!, message);
      assert.ok(!existsSync(join(dir, 'serve.sqlite')), 'serve opened its store although it cannot listen');
      assert.ok(!existsSync(join(dir, 'start.sqlite')), 'start opened its store although it cannot listen');
    });

    test('is one line for demo, before anvil starts', async () => {
      const result = await runCli(['demo', '--port', String(port), '--db', join(tempDir(), 'demo.sqlite')]);
      assertOneLineError(result, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
      assert.ok(result.ms < 5000, `took ${result.ms} ms`);
    });
  });

  test('revoking an unknown key is one line', async () => {
    assert.equal((await runCli(['keys', 'list', '--db', db])).code, 0, 'the store exists');
    const result = await runCli(['keys', 'revoke', 'no-such-key', '--db', db]);
    assertOneLineError(result, /^tokenquery: no active API key has that id or value$/);
  });

  test('keys commands ignore variables that only start, serve and index read', async () => {
    const result = await runCli(['keys', 'list', '--db', db], {
      env: { TOKENQUERY_RPC: 'garbage', TOKENQUERY_PORT: 'abc', TOKENQUERY_LOG_LEVEL: 'loud' },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.ok(lines(result.stdout).length >= 1);
  });
});
