import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const RUN = fileURLToPath(new URL('./run.js', import.meta.url));
const bench = (...args: string[]) => spawnSync(process.execPath, [RUN, ...args], { encoding: 'utf8' });

test('--help lists every scenario and exits 0 without running anything', () => {
  const { status, stdout, stderr } = bench('--help');
  assert.equal(status, 0, stderr);
  for (const scenario of ['backfill-ab', 'growth', 'address-ops', 'address-ab', 'ponder'])
    assert.match(stdout, new RegExp(scenario));
  assert.equal(stderr, '');
});

test('an unknown option or scenario is one line on stderr, exit 2, no stack trace', () => {
  for (const args of [['--bogus'], ['nosuch'], ['address-ab'], ['backfill-ab']]) {
    const { status, stdout, stderr } = bench(...args);
    assert.equal(status, 2);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.doesNotMatch(stderr, /^\s+at /m);
  }
});
