/**
 * Which store a command uses, through the real binary: `serve` (which never writes chain data)
 * refuses a store that does not exist instead of serving an empty one, and the `keys` commands
 * name the store they write to, and say so when they had to create it.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  apiUrl,
  assertOneLineError,
  lines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

after(removeTempDirs);

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the store a command opens', () => {
  test('serve refuses a store that does not exist, in one line naming it and the command that creates it', async () => {
    const dir = join(tempDir(), 'no-such-folder');
    const db = join(dir, 'x.sqlite');
    const result = await runCli(['serve', '--db', db, '--port', '0']);
    assertOneLineError(
      result,
      new RegExp(`^tokenquery: no store at ${literal(db)}: create it with \`tokenquery index\``),
    );
    assert.equal(existsSync(dir), false, 'serve created the folder');
  });

  test('keys create names the store it wrote to, and says on stderr when it created it', async () => {
    const db = join(tempDir(), 'keys', 'new.sqlite');
    const first = await runCli(['keys', 'create', '--label', 'a', '--db', db]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(lines(first.stdout)[0]!, new RegExp(`^Created API key \\S+ \\(a\\) in ${literal(db)}\\.`));
    assert.deepEqual(lines(first.stderr), [`tokenquery: created a new store at ${db}`]);

    const second = await runCli(['keys', 'create', '--db', db]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, new RegExp(`^Created API key \\S+ in ${literal(db)}\\.`));
    assert.equal(second.stderr, '', 'the store existed already');

    // Once the store exists, serve serves it.
    const server = spawnCli(['serve', '--db', db, '--port', '0']);
    try {
      await apiUrl(server, 'tokenquery serving');
    } finally {
      assert.equal((await server.stop('SIGTERM')).code, 0);
    }
  });

  test('keys revoke and keys set refuse a store that does not exist, and create nothing', async () => {
    const dir = join(tempDir(), 'typo');
    const db = join(dir, 'x.sqlite');
    const [revoke, set] = await Promise.all([
      runCli(['keys', 'revoke', 'some-id', '--db', db]),
      runCli(['keys', 'set', 'some-id', '--rate', '5/s', '--db', db]),
    ]);
    assertOneLineError(
      revoke!,
      new RegExp(`^tokenquery: no store at ${literal(db)}, so no API key to revoke there; check --db$`),
    );
    assertOneLineError(
      set!,
      new RegExp(`^tokenquery: no store at ${literal(db)}, so no API key to change there; check --db$`),
    );
    assert.equal(existsSync(dir), false);
  });

  test('keys list says so too when it creates a store', async () => {
    const db = join(tempDir(), 'listed.sqlite');
    const list = await runCli(['keys', 'list', '--db', db]);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(lines(list.stderr), [`tokenquery: created a new store at ${db}`]);
    assert.equal((await runCli(['keys', 'list', '--db', db])).stderr, '');
  });
});
