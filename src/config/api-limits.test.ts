import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UserError } from '../internal/errors.js';
import { loadApiLimits } from './api-limits.js';

const fails = (fn: () => unknown, message: RegExp, secret?: string) =>
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UserError, String(error));
    assert.match(error.shortMessage, message);
    if (secret !== undefined) assert.ok(!error.shortMessage.includes(secret), 'the message echoes a secret');
    return true;
  });

describe('API limit options', () => {
  test('nothing given: unlimited, in-process, no proxy trusted', () => {
    assert.deepEqual(loadApiLimits({}, {}), {});
  });

  test('a default rate with an explicit or implied burst', () => {
    assert.deepEqual(loadApiLimits({ rateLimit: '600/min' }, {}), {
      defaultRateLimit: { perSecond: 10, burst: 10 },
    });
    assert.deepEqual(loadApiLimits({ rateLimit: '0.5', rateBurst: '4' }, {}), {
      defaultRateLimit: { perSecond: 0.5, burst: 4 },
    });
    assert.deepEqual(loadApiLimits({ rateLimit: 'unlimited' }, {}), {});
  });

  test('the per-address limit of requests without a valid key: a rate, or off', () => {
    assert.deepEqual(loadApiLimits({ anonymousRateLimit: '5/s' }, {}), {
      anonymousRateLimit: { perSecond: 5, burst: 5 },
    });
    assert.deepEqual(loadApiLimits({ anonymousRateLimit: '30/min' }, {}), {
      anonymousRateLimit: { perSecond: 0.5, burst: 1 },
    });
    for (const off of ['off', 'OFF', ' unlimited ']) {
      assert.deepEqual(loadApiLimits({ anonymousRateLimit: off }, {}), { anonymousRateLimit: null });
    }
    const env = { TOKENQUERY_ANONYMOUS_RATE_LIMIT: 'off' };
    assert.deepEqual(loadApiLimits({}, env), { anonymousRateLimit: null });
    assert.deepEqual(loadApiLimits({ anonymousRateLimit: '2/s' }, env), {
      anonymousRateLimit: { perSecond: 2, burst: 2 },
    });
    fails(
      () => loadApiLimits({ anonymousRateLimit: 'some' }, {}),
      /^--anonymous-rate-limit must look like .*off/,
    );
    fails(
      () => loadApiLimits({}, { TOKENQUERY_ANONYMOUS_RATE_LIMIT: '0/s' }),
      /^TOKENQUERY_ANONYMOUS_RATE_LIMIT must be between/,
    );
  });

  test('flags win over variables, each option on its own', () => {
    const env = {
      TOKENQUERY_RATE_LIMIT: '5/s',
      TOKENQUERY_RATE_BURST: '9',
      TOKENQUERY_REDIS: 'redis://10.0.0.5:6379/2',
      TOKENQUERY_TRUST_PROXY: '10.0.0.0/8, ::1',
    };
    assert.deepEqual(loadApiLimits({}, env), {
      defaultRateLimit: { perSecond: 5, burst: 9 },
      redis: 'redis://10.0.0.5:6379/2',
      trustProxy: ['10.0.0.0/8', '::1/128'],
    });
    assert.deepEqual(loadApiLimits({ rateLimit: '1/s', trustProxy: 'loopback' }, env), {
      defaultRateLimit: { perSecond: 1, burst: 9 },
      redis: 'redis://10.0.0.5:6379/2',
      trustProxy: ['loopback'],
    });
  });

  test('mistakes name the flag or variable and never echo a URL', () => {
    fails(() => loadApiLimits({ rateLimit: 'fast' }, {}), /^--rate-limit must look like/);
    fails(() => loadApiLimits({}, { TOKENQUERY_RATE_LIMIT: '0/s' }), /^TOKENQUERY_RATE_LIMIT/);
    fails(() => loadApiLimits({ rateBurst: '5' }, {}), /--rate-burst needs a --rate-limit/);
    fails(
      () => loadApiLimits({ rateLimit: '1/s', rateBurst: '0' }, {}),
      /--rate-burst must be a whole number/,
    );
    fails(
      () => loadApiLimits({ redis: 'http://user:hunter2@cache:6379' }, {}),
      /--redis must be a redis:\/\//,
      'hunter2',
    );
    fails(() => loadApiLimits({}, { TOKENQUERY_REDIS: 'localhost:6379' }), /^TOKENQUERY_REDIS must be/);
    fails(() => loadApiLimits({ trustProxy: '2' }, {}), /not a hop count/);
    fails(() => loadApiLimits({ trustProxy: '10.0.0.1/8' }, {}), /^--trust-proxy: .*host bits set/);
    fails(() => loadApiLimits({ trustProxy: 'proxy.internal' }, {}), /^--trust-proxy: .*not an IP address/);
  });
});
