/**
 * The Redis limiter against the real Redis on 127.0.0.1:6379 (each test in its own random key
 * space), plus a private `redis-server` on a random port for the outage tests.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { silentLogger } from '../internal/logger.js';
import { freePort } from '../internal/testing/net.js';
import { createLocalRateLimiter } from './rate-limiter.js';
import { createRedisRateLimiter, type RedisRateLimiter } from './redis-rate-limiter.js';
import { REDIS_URL, randomPrefix, redisCommand, requireRedis } from './testing/redis.js';

let admin: Redis;
const open: RedisRateLimiter[] = [];

before(async () => {
  await requireRedis();
  admin = new Redis(REDIS_URL);
});
after(async () => {
  for (const limiter of open) await limiter.close();
  await admin?.quit();
});

async function limiter(prefix: string, options: { timeoutMs?: number } = {}): Promise<RedisRateLimiter> {
  const created = await createRedisRateLimiter({
    url: REDIS_URL,
    logger: silentLogger(),
    prefix,
    ...options,
  });
  open.push(created);
  return created;
}

/** A logger whose lines the test can read. */
function recordingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

/** A private redis-server on `port`, ready when the promise resolves. */
async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`cannot run redis-server: ${error.message}`)));
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const up = await Promise.race([redisCommand(url, 'PING', 200).catch(() => ''), failed]);
    if (up === '+PONG') return child;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not start`);
}

async function stopRedisServer(child: ChildProcess): Promise<void> {
  // A process killed by a signal has a signalCode and no exitCode.
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('Redis rate limiter', () => {
  test('a bucket gives its burst, refuses with the wait, and refills at the rate', async () => {
    const prefix = randomPrefix();
    const rl = await limiter(prefix);
    const limit = { perSecond: 20, burst: 2 };
    assert.deepEqual(await rl.take('k', limit), { allowed: true, remaining: 1, retryAfterSeconds: 0 });
    assert.deepEqual(await rl.take('k', limit), { allowed: true, remaining: 0, retryAfterSeconds: 0 });
    assert.deepEqual(await rl.take('k', limit), { allowed: false, remaining: 0, retryAfterSeconds: 1 });
    await sleep(60); // 1.2 tokens at 20/s
    assert.deepEqual(await rl.take('k', limit), { allowed: true, remaining: 0, retryAfterSeconds: 0 });
    assert.equal(rl.fallbacks, 0, 'every decision came from Redis');

    // One hash per bucket, under the prefix, that expires once it would be full again.
    const key = `${prefix}k`;
    assert.deepEqual((await admin.hkeys(key)).sort(), ['at', 'tokens']);
    const ttl = await admin.pttl(key);
    assert.ok(ttl > 0 && ttl <= 2 * 50 + 1000, `PTTL ${ttl}`);
  });

  test('slow rates: Retry-After is the wait for one token, in whole seconds', async () => {
    const rl = await limiter(randomPrefix());
    const limit = { perSecond: 1 / 60, burst: 1 };
    assert.ok((await rl.take('k', limit)).allowed);
    const refused = await rl.take('k', limit);
    assert.equal(refused.allowed, false);
    assert.ok(
      refused.retryAfterSeconds >= 59 && refused.retryAfterSeconds <= 60,
      `${refused.retryAfterSeconds}`,
    );
  });

  test('two limiters (two replicas) draw from one bucket, atomically under concurrency', async () => {
    const prefix = randomPrefix();
    const [a, b] = [await limiter(prefix), await limiter(prefix)];
    const limit = { perSecond: 1 / 3600, burst: 50 };
    const decisions = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).take('shared', limit)),
    );
    assert.equal(decisions.filter((d) => d.allowed).length, 50);
    // Each remaining count was handed out once: no two requests saw the same bucket state.
    const remaining = decisions.filter((d) => d.allowed).map((d) => d.remaining);
    assert.deepEqual(
      remaining.sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i),
    );
    // Another prefix is another deployment: untouched.
    assert.ok((await (await limiter(randomPrefix())).take('shared', limit)).allowed);
  });

  test('the script is sent by EVALSHA and loaded again after Redis forgets it', async () => {
    const rl = await limiter(randomPrefix());
    const limit = { perSecond: 1, burst: 5 };
    assert.equal((await rl.take('k', limit)).remaining, 4);
    await admin.script('FLUSH');
    assert.equal((await rl.take('k', limit)).remaining, 3);
    assert.equal(rl.fallbacks, 0);
  });

  test('a limit changed between requests applies at once in the shared bucket', async () => {
    const rl = await limiter(randomPrefix());
    assert.equal((await rl.take('k', { perSecond: 1, burst: 100 })).remaining, 99);
    assert.equal((await rl.take('k', { perSecond: 1, burst: 3 })).remaining, 2);
  });
});

describe('Redis rate limiter when Redis is down', () => {
  test('decides per process, warns once per interval, never logs the password, and shares again when Redis is back', async () => {
    const port = await freePort();
    const { logger, lines } = recordingLogger();
    const rl = await createRedisRateLimiter({
      url: `redis://:s3cret-password@127.0.0.1:${port}`,
      logger,
      prefix: randomPrefix(),
      connectTimeoutMs: 300,
      warnIntervalMs: 60_000,
    });
    open.push(rl);
    const limit = { perSecond: 1 / 3600, burst: 3 };
    // Nothing listens: every decision is local, and the local bucket still limits.
    const local = [];
    for (let i = 0; i < 5; i++) local.push(await rl.take('k', limit));
    assert.deepEqual(
      local.map((d) => d.allowed),
      [true, true, true, false, false],
    );
    assert.equal(rl.fallbacks, 5);
    const warnings = lines.filter((line) => line.includes('unreachable'));
    assert.equal(warnings.length, 1, `one warning per interval, got:\n${warnings.join('')}`);
    assert.match(warnings[0]!, /limits are kept per process/);
    assert.ok(!lines.join('').includes('s3cret'), 'a log line holds the Redis password');

    // Redis comes up on that port: the limiter reconnects (at most 2 s between attempts) and
    // decides in Redis again, from a fresh shared bucket.
    const server = await startRedisServer(port);
    try {
      const start = Date.now();
      let fromRedis = false;
      let decision = local[0]!;
      while (!fromRedis && Date.now() - start < 5000) {
        const count = rl.fallbacks;
        decision = await rl.take('k', limit);
        fromRedis = rl.fallbacks === count;
        if (!fromRedis) await sleep(100);
      }
      assert.ok(fromRedis, 'no decision came from Redis within 5 s of its start');
      assert.deepEqual(
        decision,
        { allowed: true, remaining: 2, retryAfterSeconds: 0 },
        'a fresh shared bucket',
      );
      const before = rl.fallbacks;
      assert.equal((await rl.take('k', limit)).remaining, 1);
      assert.equal(rl.fallbacks, before, 'decided in Redis');
      assert.ok(lines.some((line) => line.includes('reachable again')));

      // Redis dies mid-flight: requests never fail, they fall back again.
      await stopRedisServer(server);
      const afterCrash = await rl.take('other', limit);
      assert.equal(afterCrash.allowed, true);
      assert.ok(rl.fallbacks > before);
    } finally {
      await stopRedisServer(server);
    }
  });

  test('a Redis slower than the timeout is not waited for', async () => {
    // A server that accepts connections and never answers.
    const mute = createServer(() => {});
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const { port } = mute.address() as { port: number };
    try {
      const rl = await createRedisRateLimiter({
        url: `redis://127.0.0.1:${port}`,
        logger: silentLogger(),
        connectTimeoutMs: 200,
        timeoutMs: 100,
        fallback: createLocalRateLimiter(),
      });
      open.push(rl);
      const start = performance.now();
      const decision = await rl.take('k', { perSecond: 1, burst: 1 });
      const ms = performance.now() - start;
      assert.equal(decision.allowed, true);
      assert.ok(ms < 1000, `waited ${ms.toFixed(0)} ms`);
    } finally {
      mute.close();
    }
  });
});
