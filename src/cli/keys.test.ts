/**
 * `tokenquery keys` through the real binary, on a store no server uses (the running-server half
 * is in start.test.ts).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  assertOneLineError,
  type CliResult,
  lines,
  removeTempDirs,
  runCli,
  tempDir,
} from './testing/cli-process.js';

after(removeTempDirs);

interface Created {
  key: string;
  id: string;
}

/** The key is alone on the last stdout line. */
function createdKey(result: CliResult): Created {
  assert.equal(result.code, 0, result.stderr);
  const out = lines(result.stdout);
  const key = out.at(-1)!;
  assert.match(key, /^\S+$/, 'the last line is the key alone');
  const id = /Created API key ([\w-]+)/.exec(result.stdout)?.[1];
  assert.ok(id, result.stdout);
  return { key, id };
}

/** `keys list` rows after the header: id → { status, label }. */
function listed(result: CliResult): Map<string, { status: string; label: string }> {
  assert.equal(result.code, 0, result.stderr);
  const [header, ...rows] = lines(result.stdout);
  assert.deepEqual(header?.split('\t'), ['ID', 'STATUS', 'CREATED', 'LABEL']);
  const byId = new Map<string, { status: string; label: string }>();
  for (const row of rows) {
    const [id, status, created, label] = row.split('\t');
    assert.ok(!Number.isNaN(Date.parse(created!)), `creation time: ${row}`);
    byId.set(id!, { status: status!, label: label! });
  }
  return byId;
}

describe('keys', () => {
  let db: string;
  before(() => {
    db = join(tempDir(), 'keys.sqlite');
  });

  test('create prints the key alone on its last stdout line, and nothing on stderr', async () => {
    const result = await runCli(['keys', 'create', '--label', 'x', '--db', db]);
    const { key } = createdKey(result);
    assert.equal(result.stderr, '');
    assert.ok(key.length >= 32, `a key of ${key.length} characters is too short`);
  });

  test('two keys differ; list shows id, label and status but never a key', async () => {
    const a = createdKey(await runCli(['keys', 'create', '--label', 'exchange a', '--db', db]));
    const b = createdKey(await runCli(['keys', 'create', '--db', db]));
    assert.notEqual(a.key, b.key);
    assert.notEqual(a.id, b.id);
    const result = await runCli(['keys', 'list', '--db', db]);
    const rows = listed(result);
    assert.deepEqual(rows.get(a.id), { status: 'active', label: 'exchange a' });
    assert.deepEqual(rows.get(b.id), { status: 'active', label: '' });
    for (const key of [a.key, b.key]) assert.ok(!result.stdout.includes(key), 'list shows a key');
  });

  test('revoke works by id and by key, and a revoked key cannot be revoked again', async () => {
    // Several keys commands at once on one file, as operators may run them.
    const created = await Promise.all(
      ['by-id', 'by-key', 'keep'].map((label) => runCli(['keys', 'create', '--label', label, '--db', db])),
    );
    const [byId, byKey, keep] = created.map(createdKey) as [Created, Created, Created];

    const [first, second] = await Promise.all([
      runCli(['keys', 'revoke', byId.id, '--db', db]),
      runCli(['keys', 'revoke', byKey.key, '--db', db]),
    ]);
    assert.equal(first!.code, 0, first!.stderr);
    assert.equal(second!.code, 0, second!.stderr);
    assert.ok(!second!.stdout.includes(byKey.key), 'revoke echoes the key');

    const [list, again, againByKey] = await Promise.all([
      runCli(['keys', 'list', '--db', db]),
      runCli(['keys', 'revoke', byId.id, '--db', db]),
      runCli(['keys', 'revoke', byKey.key, '--db', db]),
    ]);
    const rows = listed(list!);
    assert.match(rows.get(byId.id)!.status, /^revoked \d{4}-\d\d-\d\dT/);
    assert.match(rows.get(byKey.id)!.status, /^revoked /);
    assert.equal(rows.get(keep.id)!.status, 'active');
    assertOneLineError(again!, /no active API key has that id or value/);
    assertOneLineError(againByKey!, /no active API key/, [byKey.key]);
  });

  test('TOKENQUERY_DB chooses the store when --db is absent', async () => {
    const other = join(tempDir(), 'env.sqlite');
    const created = createdKey(
      await runCli(['keys', 'create', '--label', 'env'], { env: { TOKENQUERY_DB: other } }),
    );
    assert.ok(listed(await runCli(['keys', 'list', '--db', other])).has(created.id));
    assert.ok(!listed(await runCli(['keys', 'list', '--db', db])).has(created.id));
  });

  test('a label with a tab or a line break is refused, and no key is created', async () => {
    const fresh = join(tempDir(), 'labels.sqlite');
    assertOneLineError(
      await runCli(['keys', 'create', '--label', 'a\tb', '--db', fresh]),
      /--label must be one line/,
    );
    assertOneLineError(
      await runCli(['keys', 'create', '--label', 'a\nb', '--db', fresh]),
      /--label must be one line/,
    );
    assert.match((await runCli(['keys', 'list', '--db', fresh])).stdout, /^no API keys/);
  });

  test('list on an empty store says how to create a key', async () => {
    const result = await runCli(['keys', 'list', '--db', join(tempDir(), 'empty.sqlite')]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /no API keys; create one with `tokenquery keys create/);
  });
});
