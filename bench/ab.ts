// `npm run bench -- backfill-ab <git-ref> [--reps N]`: the backfill benchmark's indexer from this
// tree against the indexer of another commit, on one chain, in interleaved pairs. On a shared
// machine whose speed drifts from minute to minute, two builds measured minutes apart cannot be
// compared; pairs run back to back, each against a baseline run just before it, can. Prints a
// table; writes nothing into docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BackfillChildInput, BackfillChildResult } from './backfill-child.js';
import type { BenchChain } from './chain.js';
import { fixed, median, runChild } from './common.js';

export interface BackfillAbOptions {
  /** The other build: any commit `git worktree add` accepts. */
  ref: string;
  /** Pairs; each runs both builds, in alternating order. */
  reps: number;
  chunk: number;
  concurrency: number;
  workDir: string;
}

/** The repository this benchmark was built from (`dist/bench/ab.js` → the root). */
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A build of `ref` in a git worktree of its own, sharing this tree's node_modules. `childUrl(file)`:
 * the URL of that build's `dist/bench/<file>`, for `runChild`/`startChild`.
 */
export function buildOf(
  ref: string,
  log: (line: string) => void,
): { childUrl(file: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'tokenquery-ab-'));
  rmSync(dir, { recursive: true });
  execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: REPO, stdio: 'ignore' });
  const remove = (): void => {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: REPO, stdio: 'ignore' });
  };
  try {
    symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    log(`building ${ref} in ${dir}`);
    execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
      cwd: dir,
      stdio: 'inherit',
    });
  } catch (error) {
    remove();
    throw error;
  }
  return { childUrl: (file) => pathToFileURL(join(dir, 'dist/bench', file)).href, remove };
}

export async function runBackfillAb(
  chain: BenchChain,
  options: BackfillAbOptions,
  log: (line: string) => void,
): Promise<string> {
  const other = buildOf(options.ref, log);
  const sides = [
    {
      name: 'this tree',
      childUrl: './backfill-child.js',
      ratios: [] as number[],
      cpu: [] as number[],
      rss: [] as number[],
      perTransfer: [] as number[],
    },
    {
      name: options.ref,
      childUrl: other.childUrl('backfill-child.js'),
      ratios: [] as number[],
      cpu: [] as number[],
      rss: [] as number[],
      perTransfer: [] as number[],
    },
  ];
  const base = {
    url: chain.anvil.url,
    head: chain.head,
    chunk: options.chunk,
    concurrency: options.concurrency,
  };
  const perItem = (r: BackfillChildResult): number => (r.cpuSeconds * 1e6) / r.items;
  try {
    for (let i = 0; i < options.reps; i++) {
      // Alternating order, so that a drift of the machine's speed favours neither side.
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const baseline = await runChild<BackfillChildResult>('./backfill-child.js', {
          ...base,
          mode: 'baseline',
        } satisfies BackfillChildInput);
        const dbPath = join(options.workDir, `ab-${i}-${side === sides[0] ? 'a' : 'b'}.sqlite`);
        const indexer = await runChild<BackfillChildResult>(side.childUrl, {
          ...base,
          mode: 'indexer',
          dbPath,
        } satisfies BackfillChildInput);
        for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
        const ratio = indexer.items / indexer.seconds / (baseline.items / baseline.seconds);
        side.ratios.push(ratio);
        side.cpu.push(perItem(indexer) / perItem(baseline));
        side.perTransfer.push(perItem(indexer));
        side.rss.push(indexer.peakRssBytes / 2 ** 20);
        log(
          `pair ${i + 1}/${options.reps}, ${side.name}: ratio ${fixed(ratio)}, ` +
            `CPU per transfer ${fixed(perItem(indexer))} µs = ${fixed(perItem(indexer) / perItem(baseline))} × the baseline client's, ` +
            `peak RSS ${Math.round(indexer.peakRssBytes / 2 ** 20)} MiB (baseline ${Math.round(baseline.peakRssBytes / 2 ** 20)})`,
        );
      }
    }
  } finally {
    other.remove();
  }
  const rangeOf = (values: number[], digits: number): string =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  const range = (values: number[]): string =>
    `${fixed(median(values))} (${fixed(Math.min(...values))}–${fixed(Math.max(...values))})`;
  return [
    `Backfill, this tree against ${options.ref}: ${options.reps} interleaved pairs on one chain.`,
    '',
    "| build | ratio to the bare client (median, range) | indexer CPU per transfer over the baseline client's per log | indexer CPU per transfer, µs | indexer peak RSS, MiB |",
    '|---|---|---|---|---|',
    ...sides.map(
      (side) =>
        `| ${side.name} | ${range(side.ratios)} | ${range(side.cpu)} | ${range(side.perTransfer)} | ${rangeOf(side.rss, 0)} |`,
    ),
  ].join('\n');
}
