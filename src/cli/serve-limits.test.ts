/**
 * Key limits through the real binary: `keys create/set/revoke` while two `serve` processes run
 * on one SQLite file and share rate limits through the real Redis (127.0.0.1:6379).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REDIS_URL, requireRedis } from '../api/testing/redis.js';
import {
  apiUrl,
  type CliProcess,
  eventually,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

const TOKEN = `0x${'1'.repeat(40)}`;

describe('serve with --rate-limit, --redis and keys with limits', () => {
  let db: string;
  const servers: CliProcess[] = [];
  const bases: string[] = [];
  const secrets: string[] = [];

  async function createKey(...args: string[]): Promise<{ key: string; id: string }> {
    const result = await runCli(['keys', 'create', ...args, '--db', db]);
    assert.equal(result.code, 0, result.stderr);
    const key = lines(result.stdout).at(-1)!;
    const id = /Created API key ([\w-]+)/.exec(result.stdout)![1]!;
    secrets.push(key);
    return { key, id };
  }

  const get = async (base: string, key: string) => {
    const response = await fetch(`${base}/vipapi/eth/token/${TOKEN}?apikey=${key}`);
    await response.arrayBuffer();
    return {
      status: response.status,
      remaining: response.headers.get('x-ratelimit-remaining'),
      burst: response.headers.get('x-ratelimit-burst-capacity'),
      retryAfter: response.headers.get('retry-after'),
    };
  };

  before(async () => {
    await requireRedis();
    db = join(tempDir(), 'limits.sqlite');
    // The store must exist before two servers open it.
    assert.equal((await runCli(['keys', 'list', '--db', db])).code, 0);
    for (let i = 0; i < 2; i++) {
      const server = spawnCli(['serve', '--port', '0', '--rate-limit', '1/min', '--rate-burst', '3'], {
        env: { TOKENQUERY_DB: db, TOKENQUERY_REDIS: REDIS_URL, TOKENQUERY_LOG_LEVEL: 'info' },
      });
      servers.push(server);
      bases.push(await apiUrl(server, 'tokenquery serving'));
    }
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGTERM')));
    removeTempDirs();
  });

  test('both servers draw from one Redis bucket per key, with the default limit', async () => {
    const { key } = await createKey('--label', 'default');
    const [a, b] = bases as [string, string];
    const seen = [await get(a, key), await get(b, key), await get(a, key)];
    assert.deepEqual(
      seen.map((s) => [s.status, s.remaining, s.burst]),
      [
        [200, '2', '3'],
        [200, '1', '3'],
        [200, '0', '3'],
      ],
    );
    const refused = await get(b, key);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.retryAfter) >= 1, `Retry-After ${refused.retryAfter}`);
  });

  test('keys set and keys revoke, run while both servers serve, apply on both within a second', async () => {
    const { key, id } = await createKey('--rate', '1/min', '--burst', '1', '--allow-ip', '127.0.0.1');
    const [a, b] = bases as [string, string];
    assert.equal((await get(a, key)).status, 200);
    assert.equal((await get(b, key)).status, 429);

    const set = await runCli(['keys', 'set', id, '--rate', 'unlimited', '--db', db]);
    assert.equal(set.code, 0, set.stderr);
    const start = Date.now();
    await eventually(
      async () =>
        (await get(a, key)).status === 200 && (await get(b, key)).status === 200 ? true : undefined,
      3000,
      'unlimited on both servers',
      20,
    );
    assert.ok(Date.now() - start < 1000, `applied after ${Date.now() - start} ms`);

    const moved = await runCli(['keys', 'set', id, '--allow-ip', '10.0.0.0/8', '--db', db]);
    assert.equal(moved.code, 0, moved.stderr);
    await eventually(
      async () =>
        (await get(a, key)).status === 401 && (await get(b, key)).status === 401 ? true : undefined,
      1000,
      'the allow-list on both servers',
      20,
    );

    const other = await createKey('--label', 'to revoke');
    assert.equal((await get(a, other.key)).status, 200);
    assert.equal((await runCli(['keys', 'revoke', other.id, '--db', db])).code, 0);
    const revokedAt = Date.now();
    await eventually(
      async () =>
        (await get(a, other.key)).status === 401 && (await get(b, other.key)).status === 401
          ? true
          : undefined,
      3000,
      'the revocation on both servers',
      20,
    );
    assert.ok(Date.now() - revokedAt < 1000, `refused after ${Date.now() - revokedAt} ms`);
  });

  test('the servers say Redis is in use and log no key', () => {
    for (const server of servers) {
      assert.match(server.stderr(), /rate-limit buckets are shared through Redis/);
      for (const key of secrets) assert.ok(!server.stderr().includes(key), 'a log line holds an apikey');
    }
  });
});
