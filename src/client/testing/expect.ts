/**
 * Assertions shared by the client's tests.
 */
import assert from 'node:assert/strict';
import type { TokenqueryApiError } from '../errors.js';

/** Rejects with an error of class `type` carrying the code, HTTP status and message, and not the key. */
export async function rejectsWithApiError(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => TokenqueryApiError,
  expected: { code: number; httpStatus: number; message: string | RegExp },
  secrets: string[] = [],
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    assert.equal(error.code, expected.code);
    assert.equal(error.httpStatus, expected.httpStatus);
    if (typeof expected.message === 'string') assert.equal(error.message, expected.message);
    else assert.match(error.message, expected.message);
    for (const secret of secrets) assert.ok(!String(error.stack).includes(secret), 'the error holds the key');
    return true;
  });
}
