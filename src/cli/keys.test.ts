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

interface Listed {
  status: string;
  label: string;
  rate: string;
  allow: string;
}

/** `keys list` rows after the header: id → { status, label, rate, allow }. */
function listed(result: CliResult): Map<string, Listed> {
  assert.equal(result.code, 0, result.stderr);
  const [header, ...rows] = lines(result.stdout);
  assert.deepEqual(header?.split('\t'), ['ID', 'STATUS', 'CREATED', 'RATE', 'ALLOW-IP', 'LABEL']);
  const byId = new Map<string, Listed>();
  for (const row of rows) {
    const [id, status, created, rate, allow, label] = row.split('\t');
    assert.ok(!Number.isNaN(Date.parse(created!)), `creation time: ${row}`);
    byId.set(id!, { status: status!, label: label!, rate: rate!, allow: allow! });
  }
  return byId;
}

/** Status and label only, for the tests that do not look at limits. */
const statusAndLabel = (row: Listed | undefined) => row && { status: row.status, label: row.label };

describe('keys', () => {
  let db: string;
  before(() => {
    db = join(tempDir(), 'keys.sqlite');
  });

  test('create prints the key alone on its last stdout line, and on stderr only that it created the store', async () => {
    const result = await runCli(['keys', 'create', '--label', 'x', '--db', db]);
    const { key } = createdKey(result);
    assert.equal(result.stderr, `tokenquery: created a new store at ${db}\n`);
    assert.ok(key.length >= 32, `a key of ${key.length} characters is too short`);
  });

  test('two keys differ; list shows id, label and status but never a key', async () => {
    const a = createdKey(await runCli(['keys', 'create', '--label', 'exchange a', '--db', db]));
    const b = createdKey(await runCli(['keys', 'create', '--db', db]));
    assert.notEqual(a.key, b.key);
    assert.notEqual(a.id, b.id);
    const result = await runCli(['keys', 'list', '--db', db]);
    const rows = listed(result);
    assert.deepEqual(statusAndLabel(rows.get(a.id)), { status: 'active', label: 'exchange a' });
    assert.deepEqual(statusAndLabel(rows.get(b.id)), { status: 'active', label: '' });
    assert.deepEqual([rows.get(a.id)?.rate, rows.get(a.id)?.allow], ['default', 'any']);
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

  test('create takes a rate limit and an allow-list; list shows them', async () => {
    const limited = createdKey(
      await runCli([
        'keys',
        'create',
        '--label',
        'partner',
        '--rate',
        '600/min',
        '--burst',
        '20',
        '--allow-ip',
        '203.0.113.0/24',
        '--allow-ip',
        '2001:DB8::/32,192.0.2.7',
        '--db',
        db,
      ]),
    );
    const free = createdKey(await runCli(['keys', 'create', '--rate', 'unlimited', '--db', db]));
    const slow = createdKey(await runCli(['keys', 'create', '--rate', '1/min', '--db', db]));
    const rows = listed(await runCli(['keys', 'list', '--db', db]));
    assert.deepEqual(rows.get(limited.id), {
      status: 'active',
      label: 'partner',
      rate: '10/s burst 20',
      allow: '203.0.113.0/24,2001:db8::/32,192.0.2.7/32',
    });
    assert.equal(rows.get(free.id)?.rate, 'unlimited');
    assert.equal(rows.get(slow.id)?.rate, '1/min burst 1');
  });

  test('set changes only what it is given, by id or by key, and refuses nonsense', async () => {
    const { key, id } = createdKey(await runCli(['keys', 'create', '--label', 'set', '--db', db]));
    const row = async () => listed(await runCli(['keys', 'list', '--db', db])).get(id)!;

    const rate = await runCli(['keys', 'set', id, '--rate', '5/s', '--db', db]);
    assert.equal(rate.code, 0, rate.stderr);
    assert.match(rate.stdout, /rate 5\/s burst 5, from any; running servers apply it within one second/);
    assert.deepEqual([(await row()).rate, (await row()).allow], ['5/s burst 5', 'any']);

    // By the key itself, which is never echoed; the rate stays.
    const allow = await runCli(['keys', 'set', key, '--allow-ip', '10.0.0.0/8', '--db', db]);
    assert.equal(allow.code, 0, allow.stderr);
    assert.ok(!allow.stdout.includes(key));
    assert.deepEqual([(await row()).rate, (await row()).allow], ['5/s burst 5', '10.0.0.0/8']);

    assert.equal((await runCli(['keys', 'set', id, '--burst', '50', '--db', db])).code, 0);
    assert.equal((await row()).rate, '5/s burst 50');
    assert.equal((await runCli(['keys', 'set', id, '--rate', 'unlimited', '--any-ip', '--db', db])).code, 0);
    assert.deepEqual([(await row()).rate, (await row()).allow], ['unlimited', 'any']);
    assert.equal((await runCli(['keys', 'set', id, '--rate', 'default', '--db', db])).code, 0);
    assert.equal((await row()).rate, 'default');

    const mistakes: [string[], RegExp][] = [
      [['keys', 'set', id], /nothing to change/],
      [['keys', 'set', id, '--burst', '3'], /--burst needs --rate/],
      [['keys', 'set', id, '--rate', 'fast'], /--rate must look like 10\/s/],
      [['keys', 'set', id, '--rate', 'unlimited', '--burst', '3'], /--burst cannot go with --rate unlimited/],
      [['keys', 'set', id, '--allow-ip', '10.0.0.1/8'], /host bits set; the network is 10\.0\.0\.0\/8/],
      [['keys', 'set', id, '--allow-ip', 'example.com'], /not an IP address or CIDR/],
      [['keys', 'set', id, '--allow-ip', '10.0.0.0/8', '--any-ip'], /contradict/],
      [['keys', 'set', 'no-such-key', '--rate', '1/s'], /no active API key has that id or value/],
      [['keys', 'create', '--allow-ip', '300.1.1.1'], /not an IP address/],
    ];
    const results = await Promise.all(mistakes.map(([args]) => runCli([...args, '--db', db])));
    for (const [i, result] of results.entries()) assertOneLineError(result, mistakes[i]![1], [key]);
    assert.equal((await row()).rate, 'default', 'a refused change changed nothing');

    assert.equal((await runCli(['keys', 'revoke', id, '--db', db])).code, 0);
    assertOneLineError(
      await runCli(['keys', 'set', id, '--rate', '1/s', '--db', db]),
      /no active API key has that id or value/,
    );
  });

  test('list on an empty store says how to create a key', async () => {
    const result = await runCli(['keys', 'list', '--db', join(tempDir(), 'empty.sqlite')]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /no API keys; create one with `tokenquery keys create/);
  });
});
