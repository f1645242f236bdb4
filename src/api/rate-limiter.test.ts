import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLocalRateLimiter } from './rate-limiter.js';

/** A limiter on a clock the test moves by hand (milliseconds). */
function limiterAt(start = 1_000, maxBuckets?: number) {
  const clock = { now: start };
  const limiter = createLocalRateLimiter({
    now: () => clock.now,
    ...(maxBuckets === undefined ? {} : { maxBuckets }),
  });
  return { limiter, clock };
}

describe('in-process token bucket', () => {
  test('a fresh key may make `burst` requests at once, then is refused with the wait for one token', () => {
    const { limiter } = limiterAt();
    const limit = { perSecond: 2, burst: 3 };
    assert.deepEqual(limiter.take('k', limit), { allowed: true, remaining: 2, retryAfterSeconds: 0 });
    assert.deepEqual(limiter.take('k', limit), { allowed: true, remaining: 1, retryAfterSeconds: 0 });
    assert.deepEqual(limiter.take('k', limit), { allowed: true, remaining: 0, retryAfterSeconds: 0 });
    // Half a second to the next token at 2/s: Retry-After is whole seconds, rounded up.
    assert.deepEqual(limiter.take('k', limit), { allowed: false, remaining: 0, retryAfterSeconds: 1 });
  });

  test('tokens come back at the replenish rate, never beyond the burst', () => {
    const { limiter, clock } = limiterAt();
    const limit = { perSecond: 2, burst: 3 };
    for (let i = 0; i < 3; i++) assert.ok(limiter.take('k', limit).allowed);
    clock.now += 499;
    assert.equal(limiter.take('k', limit).allowed, false, '0.998 tokens is not a token');
    clock.now += 1;
    assert.deepEqual(limiter.take('k', limit), { allowed: true, remaining: 0, retryAfterSeconds: 0 });
    // A long idle time refills to the burst only.
    clock.now += 3_600_000;
    assert.equal(limiter.take('k', limit).remaining, 2);
  });

  test('a refused request takes nothing: the wait does not grow with retries', () => {
    const { limiter, clock } = limiterAt();
    const limit = { perSecond: 1, burst: 1 };
    assert.ok(limiter.take('k', limit).allowed);
    for (let i = 0; i < 100; i++) assert.equal(limiter.take('k', limit).allowed, false);
    clock.now += 1000;
    assert.ok(limiter.take('k', limit).allowed);
  });

  test('sustained traffic gets exactly the rate over a long window', () => {
    const { limiter, clock } = limiterAt();
    const limit = { perSecond: 5, burst: 10 };
    let allowed = limiter.take('k', limit).allowed ? 1 : 0;
    // 100 requests a second for 60 s, in 10 ms steps of the fake clock.
    for (let step = 0; step < 6000; step++) {
      clock.now += 10;
      if (limiter.take('k', limit).allowed) allowed++;
    }
    // The burst, then 5 a second (the last token may be a rounding error short).
    assert.ok(allowed === 10 + 5 * 60 || allowed === 10 + 5 * 60 - 1, `${allowed} allowed`);
  });

  test('slow rates wait minutes, and Retry-After says so', () => {
    const { limiter } = limiterAt();
    const limit = { perSecond: 1 / 60, burst: 1 };
    assert.ok(limiter.take('k', limit).allowed);
    assert.deepEqual(limiter.take('k', limit), { allowed: false, remaining: 0, retryAfterSeconds: 60 });
  });

  test('keys have separate buckets', () => {
    const { limiter } = limiterAt();
    const limit = { perSecond: 1, burst: 1 };
    assert.ok(limiter.take('a', limit).allowed);
    assert.equal(limiter.take('a', limit).allowed, false);
    assert.ok(limiter.take('b', limit).allowed);
  });

  test('a lowered limit applies at once; a raised one refills at the new rate', () => {
    const { limiter, clock } = limiterAt();
    assert.equal(limiter.take('k', { perSecond: 100, burst: 100 }).remaining, 99);
    // Lowered: the bucket holds at most the new burst.
    assert.equal(limiter.take('k', { perSecond: 1, burst: 5 }).remaining, 4);
    clock.now += 100;
    assert.equal(limiter.take('k', { perSecond: 100, burst: 100 }).remaining, 13);
  });

  test('a clock that stands still or steps back never mints tokens', () => {
    const { limiter, clock } = limiterAt();
    const limit = { perSecond: 1000, burst: 1 };
    assert.ok(limiter.take('k', limit).allowed);
    clock.now -= 5_000;
    assert.equal(limiter.take('k', limit).allowed, false);
    clock.now += 5_000;
    assert.equal(limiter.take('k', limit).allowed, false, 'the step back is not counted twice');
    clock.now += 1;
    assert.ok(limiter.take('k', limit).allowed);
  });

  test('the bucket count is bounded: full buckets go first, then the oldest', () => {
    const { limiter, clock } = limiterAt(1_000, 100);
    const limit = { perSecond: 1, burst: 2 };
    for (let i = 0; i < 100; i++) limiter.take(`idle${i}`, limit);
    assert.equal(limiter.size, 100);
    // Two seconds later all 100 have refilled: making room drops them, not a busy one.
    clock.now += 2_000;
    limiter.take('busy', limit);
    assert.equal(limiter.size, 1);
    for (let i = 0; i < 150; i++) limiter.take(`k${i}`, limit);
    assert.equal(limiter.size, 100);
    // `busy` was the oldest bucket and is gone; it comes back full (eviction only forgives).
    assert.equal(limiter.take('busy', limit).remaining, 1);
  });

  test('a check costs about a microsecond or less (best of 5 rounds; 2 µs allows for a loaded machine)', () => {
    const limiter = createLocalRateLimiter();
    const limit = { perSecond: 1e6, burst: 1e6 };
    const n = 100_000;
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      let allowed = 0;
      const start = performance.now();
      for (let i = 0; i < n; i++) if (limiter.take('key', limit).allowed) allowed++;
      best = Math.min(best, ((performance.now() - start) * 1000) / n);
      assert.ok(allowed > 0);
    }
    assert.ok(best < 2, `${best.toFixed(3)} µs per take`);
  });
});
