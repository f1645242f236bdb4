import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UserError } from '../internal/errors.js';
import { HTTP_LIMIT_DEFAULTS } from '../internal/http-limits.js';
import { parseConfigFile } from './file.js';
import { loadHttpLimits } from './http-limits.js';

const fails = (fn: () => unknown, message: RegExp) =>
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UserError, String(error));
    assert.match(error.shortMessage, message);
    return true;
  });

describe('HTTP limit options', () => {
  test('nothing given: the defaults, bounded and consistent', () => {
    const limits = loadHttpLimits({}, {});
    assert.deepEqual(limits, {
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      idleTimeoutMs: 72_000,
      maxConnections: 4096,
    });
    assert.deepEqual(limits, HTTP_LIMIT_DEFAULTS);
    assert.ok(Object.isFrozen(limits));
  });

  test('flags win over variables, which win over the config file', () => {
    const file = parseConfigFile(
      { requestTimeoutMs: 20_000, idleTimeoutMs: 5000, maxConnections: 100 },
      'cfg.json',
      '/x/cfg.json',
    );
    const env = { TOKENQUERY_IDLE_TIMEOUT_MS: '6000', TOKENQUERY_MAX_CONNECTIONS: '200' };
    assert.deepEqual(loadHttpLimits({ maxConnections: '300', headersTimeout: '2000' }, env, file), {
      requestTimeoutMs: 20_000,
      headersTimeoutMs: 2000,
      idleTimeoutMs: 6000,
      maxConnections: 300,
    });
  });

  test('bad values are one line naming the flag, variable or field', () => {
    fails(
      () => loadHttpLimits({ requestTimeout: '30s' }, {}),
      /^--request-timeout must be a whole number, got "30s"$/,
    );
    fails(
      () => loadHttpLimits({ idleTimeout: '10' }, {}),
      /^--idle-timeout must be between 100 and 3600000, got 10$/,
    );
    fails(
      () => loadHttpLimits({}, { TOKENQUERY_MAX_CONNECTIONS: '0' }),
      /^TOKENQUERY_MAX_CONNECTIONS must be between 1/,
    );
    fails(
      () => loadHttpLimits({ requestTimeout: '5000' }, {}),
      /^the default headers timeout \(10000 ms\) must not exceed --request-timeout \(5000 ms\)$/,
    );
    fails(
      () => loadHttpLimits({ headersTimeout: '40000' }, {}),
      /^--headers-timeout \(40000 ms\) must not exceed the default request timeout/,
    );
    assert.throws(
      () => parseConfigFile({ maxConnections: 1.5 }, 'cfg.json', '/x/cfg.json'),
      /maxConnections/,
    );
  });
});
