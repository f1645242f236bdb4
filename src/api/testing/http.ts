/**
 * Small HTTP helpers for the API's tests: real requests with `fetch`, strict checks on envelopes.
 */
import assert from 'node:assert/strict';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export async function call(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(base + path, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/** Parses a success envelope and returns its `data`, after checking everything around it. */
export function okData(answer: Answer): unknown {
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.headers.get('content-type'), JSON_TYPE);
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['code', 'msg', 'data']);
  assert.equal(body.code, 1, answer.text);
  assert.equal(body.msg, '成功');
  return body.data;
}

/**
 * Checks an error envelope: HTTP status, JSON content type, exact keys, `data: null`, code, message,
 * and that none of `secrets` (API keys) appears anywhere in the body.
 */
export function assertError(
  answer: Answer,
  expected: { http: number; code: number; msg: string | RegExp },
  secrets: string[] = [],
): void {
  assert.equal(answer.status, expected.http, answer.text);
  assert.equal(answer.headers.get('content-type'), JSON_TYPE);
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['code', 'msg', 'data']);
  assert.equal(body.code, expected.code, answer.text);
  assert.equal(body.data, null);
  if (typeof expected.msg === 'string') assert.equal(body.msg, expected.msg);
  else assert.match(String(body.msg), expected.msg);
  for (const secret of secrets) assert.ok(!answer.text.includes(secret), 'the body echoes an apikey');
}

/** Asserts the exact key list (in order) and the `typeof` of each key of a JSON object. */
export function assertShape(
  value: unknown,
  shape: Record<string, 'string' | 'number' | 'boolean' | 'object' | 'null' | 'string|null'>,
): void {
  assert.ok(
    value !== null && typeof value === 'object' && !Array.isArray(value),
    `not an object: ${JSON.stringify(value)}`,
  );
  const record = value as Record<string, unknown>;
  assert.deepEqual(Object.keys(record), Object.keys(shape));
  for (const [key, type] of Object.entries(shape)) {
    const v = record[key];
    const actual = v === null ? 'null' : typeof v;
    if (type === 'string|null') assert.ok(actual === 'string' || actual === 'null', `${key}: ${actual}`);
    else assert.equal(actual, type, `${key} is ${actual}, expected ${type}`);
    if (type === 'number') assert.ok(Number.isInteger(v), `${key} is not an integer`);
  }
}
