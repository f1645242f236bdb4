// Runs every compiled test file (dist/**/*.test.js) with Node's own test runner.
// Node 20 has no glob support in `--test`, so the file list is built here.
// Usage: node scripts/test.mjs [substring filter ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
// bench/ holds the benchmarks' own tests (their code is not in src/).
const files = ['dist/src', 'dist/bench']
  .flatMap((dir) => walk(dir, []))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
