import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isStoreConflict, isStoreUnavailable } from '../internal/errors.js';
import { storeUnavailable } from './errors.js';

describe('store unavailable', () => {
  test('a refused, cut or refusing database connection is "unavailable"; a query fault is not', () => {
    const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const error of [
      coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      coded('ECONNRESET', 'read ECONNRESET'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'),
      coded('08006', 'connection failure'),
      coded('53300', 'sorry, too many clients already'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ])
      assert.equal(isStoreUnavailable(error), true, error.message);
    for (const error of [
      coded('42P01', 'relation "x" does not exist'),
      coded('23505', 'duplicate key'),
      new Error('boom'),
      null,
      'ECONNREFUSED',
    ])
      assert.equal(isStoreUnavailable(error), false, String(error));
  });

  test('a query the database cancelled to be tried again (a standby replaying, a deadlock) is a "conflict"', () => {
    const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    const cancelled = coded('40001', 'canceling statement due to conflict with recovery');
    assert.equal(isStoreConflict(cancelled), true);
    assert.equal(isStoreConflict(coded('40P01', 'deadlock detected')), true);
    // Not "unreachable": /status must not call the database down for it.
    assert.equal(isStoreUnavailable(cancelled), false);
    for (const error of [coded('42P01'), coded('57P01'), coded('23505'), new Error('boom'), null, '40001'])
      assert.equal(isStoreConflict(error), false, String(error));
  });

  test('answers 503 with the Tokenview code of a busy server', () => {
    const error = storeUnavailable();
    assert.equal(error.httpStatus, 503);
    assert.equal(error.code, 40001);
    assert.equal(error.msg, 'server is busy');
  });
});
