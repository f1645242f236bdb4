/**
 * The floors of the architecture (README, "Architecture") are enforced by Biome's
 * `noRestrictedImports`, one override per folder in biome.json, so `npm run lint` fails on an
 * import across a floor. This checks that the rule is configured and bites: it lints small files
 * placed in a copy of the layout, with the repository's own biome.json.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const biome = join(repo, 'node_modules', '.bin', 'biome');

/** What each folder of src/ may not import (non-test code); everything else is allowed. */
const FORBIDDEN: Record<string, string[]> = {
  internal: ['api', 'chains', 'cli', 'client', 'config', 'devchain', 'importer', 'indexer', 'store'],
  config: ['api', 'chains', 'cli', 'indexer', 'store'],
  devchain: ['api', 'chains', 'indexer', 'store'],
  chains: ['api', 'cli', 'config', 'importer', 'indexer', 'store'],
  store: ['api', 'chains', 'cli', 'config', 'importer', 'indexer'],
  api: ['chains', 'cli', 'devchain', 'importer', 'indexer'],
  indexer: ['api', 'cli', 'importer'],
  importer: ['api', 'cli', 'indexer'],
  client: ['api', 'chains', 'internal', 'store'],
};

/** Imports each floor relies on, which must stay allowed. */
const ALLOWED: Record<string, string[]> = {
  chains: ['internal'],
  store: ['internal'],
  api: ['internal', 'store'],
  indexer: ['chains', 'config', 'internal', 'store'],
  importer: ['chains', 'internal', 'store'],
  cli: ['api', 'chains', 'config', 'importer', 'indexer', 'internal', 'store'],
};

/**
 * Lints, in one run, a copy of the layout holding a file per (path, imported folder); answers the
 * paths whose import the linter refused.
 */
function refusedImports(files: readonly { path: string; target: string }[]): Set<string> {
  const work = mkdtempSync(join(tmpdir(), 'tokenquery-floors-'));
  try {
    copyFileSync(join(repo, 'biome.json'), join(work, 'biome.json'));
    for (const { path, target } of files) {
      const file = join(work, path);
      mkdirSync(dirname(file), { recursive: true });
      const up = '../'.repeat(path.split('/').length - 2);
      writeFileSync(file, `import { x } from '${up}${target}/x.js';\n\nexport const y = x;\n`);
    }
    const result = spawnSync(biome, ['lint', '--max-diagnostics=none', 'src'], {
      cwd: work,
      encoding: 'utf8',
    });
    const refused = new Set<string>();
    for (const match of `${result.stdout}${result.stderr}`.matchAll(
      /^(\S+?):\d+:\d+ lint\/style\/noRestrictedImports/gm,
    )) {
      refused.add(match[1]!);
    }
    return refused;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const at = (floor: string, target: string, name = `${target}.ts`) => ({
  path: `src/${floor}/deep/${name}`,
  target,
});
const forbidden = Object.entries(FORBIDDEN).flatMap(([floor, targets]) => targets.map((t) => at(floor, t)));
const allowed = Object.entries(ALLOWED).flatMap(([floor, targets]) => targets.map((t) => at(floor, t)));
const exempt = [
  at('chains', 'store', 'store.test.ts'),
  { path: 'src/api/testing/indexer.ts', target: 'indexer' },
];

describe('architecture floors', () => {
  const refused = refusedImports([...forbidden, ...allowed, ...exempt]);

  test('an import across a floor fails the linter', () => {
    const passed = forbidden.filter((f) => !refused.has(f.path)).map((f) => f.path);
    assert.deepEqual(passed, [], 'imports across a floor that the linter let through');
  });

  test('the imports each floor relies on pass', () => {
    assert.deepEqual(
      allowed.filter((f) => refused.has(f.path)).map((f) => f.path),
      [],
    );
  });

  test('tests and test helpers may reach across floors to set up real components', () => {
    assert.deepEqual(
      exempt.filter((f) => refused.has(f.path)).map((f) => f.path),
      [],
    );
  });
});
