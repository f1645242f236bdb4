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

  test('a trusted-proxy range that covers public address space is refused unless forced', () => {
    const wide =
      /^--trust-proxy: (0\.0\.0\.0\/0|::\/0|8\.0\.0\.0\/7|::\/80|2000::\/3) covers public addresses beyond a \/8 \(IPv6: \/16\): anyone there could forge X-Forwarded-For past key allow-lists; give your proxies' own ranges, or --trust-proxy-any to trust it anyway$/;
    for (const range of ['0.0.0.0/0', '::/0', '8.0.0.0/7', '2000::/3', '::/80']) {
      fails(() => loadApiLimits({ trustProxy: range }, {}), wide);
      fails(() => loadApiLimits({ trustProxy: `10.0.0.0/8, ${range}` }, {}), wide);
    }
    // ::ffff:0:0/96 is every IPv4 client of a dual-stack socket: it is 0.0.0.0/0 by another name.
    fails(() => loadApiLimits({ trustProxy: '::ffff:0.0.0.0/96' }, {}), /0\.0\.0\.0\/0 covers public/);
    fails(
      () => loadApiLimits({}, { TOKENQUERY_TRUST_PROXY: '0.0.0.0/0' }),
      /^TOKENQUERY_TRUST_PROXY: 0\.0\.0\.0\/0 covers .* or TOKENQUERY_TRUST_PROXY_ANY=1 to trust it anyway$/,
    );

    assert.deepEqual(loadApiLimits({ trustProxy: '0.0.0.0/0', trustProxyAny: true }, {}), {
      trustProxy: ['0.0.0.0/0'],
    });
    assert.deepEqual(loadApiLimits({ trustProxy: '::/0' }, { TOKENQUERY_TRUST_PROXY_ANY: '1' }), {
      trustProxy: ['::/0'],
    });
    assert.deepEqual(
      loadApiLimits({}, { TOKENQUERY_TRUST_PROXY: '::/0', TOKENQUERY_TRUST_PROXY_ANY: 'true' }),
      {
        trustProxy: ['::/0'],
      },
    );
    // The flag says no to a variable's yes.
    fails(
      () => loadApiLimits({ trustProxy: '::/0', trustProxyAny: false }, { TOKENQUERY_TRUST_PROXY_ANY: '1' }),
      /covers public/,
    );
    fails(
      () => loadApiLimits({ trustProxy: '::/0' }, { TOKENQUERY_TRUST_PROXY_ANY: 'sure' }),
      /^TOKENQUERY_TRUST_PROXY_ANY must be 1 or 0 \(true or false\), got "sure"$/,
    );
    fails(
      () => loadApiLimits({ trustProxyAny: true }, {}),
      /^--trust-proxy-any needs a --trust-proxy to go with it$/,
    );
  });

  test('private, loopback, link-local and unique-local ranges, however wide, and narrow public ones are trusted', () => {
    const ranges = [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '127.0.0.1',
      '127.0.0.0/8',
      '100.64.0.0/10',
      '169.254.0.0/16',
      'fd00::/8',
      'fc00::/7',
      'fe80::/10',
      '::1',
      // Narrow enough to be someone's proxies: a public /8 and /16, a cloud's IPv6 /29.
      '8.0.0.0/8',
      '203.0.113.0/24',
      '2001::/16',
      '2a06:98c0::/29',
    ];
    assert.deepEqual(loadApiLimits({ trustProxy: ranges.join(',') }, {}).trustProxy, [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '127.0.0.1/32',
      '127.0.0.0/8',
      '100.64.0.0/10',
      '169.254.0.0/16',
      'fd00::/8',
      'fc00::/7',
      'fe80::/10',
      '::1/128',
      '8.0.0.0/8',
      '203.0.113.0/24',
      '2001::/16',
      '2a06:98c0::/29',
    ]);
  });
});

describe('--operator-listen', () => {
  test('same, off or host:port; flag, variable, then file; absent: same (left out)', () => {
    assert.deepEqual(loadApiLimits({}, {}).operatorListen, undefined);
    assert.equal(loadApiLimits({ operatorListen: 'OFF' }, {}).operatorListen, 'off');
    assert.equal(loadApiLimits({}, { TOKENQUERY_OPERATOR_LISTEN: 'same' }).operatorListen, 'same');
    assert.deepEqual(loadApiLimits({ operatorListen: '127.0.0.1:9090' }, {}).operatorListen, {
      host: '127.0.0.1',
      port: 9090,
    });
    assert.deepEqual(
      loadApiLimits({ operatorListen: '[::1]:0' }, { TOKENQUERY_OPERATOR_LISTEN: 'off' }).operatorListen,
      { host: '::1', port: 0 },
    );
  });

  test('anything else is one line naming the flag or variable', () => {
    fails(
      () => loadApiLimits({ operatorListen: '9090' }, {}),
      /^--operator-listen must be same, off or host:port/,
    );
    fails(() => loadApiLimits({ operatorListen: 'localhost:70000' }, {}), /--operator-listen must be/);
    fails(
      () => loadApiLimits({}, { TOKENQUERY_OPERATOR_LISTEN: 'yes' }),
      /^TOKENQUERY_OPERATOR_LISTEN must be same, off or host:port/,
    );
  });
});
