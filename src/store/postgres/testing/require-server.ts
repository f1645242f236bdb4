/**
 * The gate of every test file that needs the PostgreSQL test server (test-database.ts).
 */
import { test } from 'node:test';
import { checkTestServer } from './test-database.js';

/**
 * Whether the test server answers. When it does not, registers one failing test that says why: a
 * clear failure instead of a skip, because CI must not pass without the PostgreSQL backend tested.
 */
export async function requireTestServer(): Promise<boolean> {
  const unreachable = await checkTestServer().then(
    () => null,
    (error: unknown) => error,
  );
  if (unreachable === null) return true;
  test('PostgreSQL test server is reachable', () => {
    throw unreachable;
  });
  return false;
}
