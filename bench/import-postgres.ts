// `npm run bench -- import-pg [REF] [--reps N] [--import-rows N] [--profile]`: `tokenquery import` into
// PostgreSQL (issue #17), on two SYNTHETIC exports: the import benchmark's shape (20 tokens among
// 50,000 holders) and one shaped more like a chain (20,000 tokens among 1,000,000 holders, twice the
// rows). Each import runs in a fresh process into a fresh database; the CPU of the server processes
// working for that database is read from /proc (the server runs here), so the node side and the
// server side of a load are told apart. With REF, the same imports by the build of that commit run
// in interleaved pairs (the order alternating), so both builds meet the same machine load. Prints a
// table; writes nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFixtureNode } from '../src/chains/evm/testing/fixture-node.js';
import {
  createSyntheticExport,
  type SyntheticExportOptions,
} from '../src/importer/testing/synthetic-export.js';
import {
  createTestDatabase,
  querySql,
  TEST_POSTGRES_URL,
} from '../src/store/postgres/testing/test-database.js';
import { buildOf } from './ab.js';
import { fixed, int, median, mib, runChild, startChild } from './common.js';
import type { ImportChildInput, ImportChildResult } from './import-child.js';
import { summarizeProfiles } from './profile.js';
import { writeSyntheticExport } from './synthetic-export.js';

export interface ImportPostgresOptions {
  /** The other build (any commit `git worktree add` accepts), or null for this tree alone. */
  ref: string | null;
  reps: number;
  /** Rows of the first export; the chain-shaped one has twice as many. */
  rows: number;
  /** One extra run of each build on the first export with `--cpu-prof`, summarized. */
  profile: boolean;
  workDir: string;
}

interface Run extends ImportChildResult {
  /** CPU of the server processes working for the import's database (its backends, autovacuum). */
  serverSeconds: number;
  /** `pg_database_size` after the import. */
  databaseBytes: number;
}

/**
 * Samples, once a second until stopped, the CPU of the server processes working for `database`
 * (its backends and autovacuum workers, from `pg_stat_activity` and /proc: the server runs on this
 * machine). Other databases' work on the same server is left out. A process's CPU after its last
 * sample (at most a second's worth) is lost.
 */
function sampleDatabaseCpu(adminUrl: string, database: string): { stop(): Promise<number> } {
  const seen = new Map<number, number>();
  let running = true;
  const ticks = (pid: number): number | null => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  };
  const loop = (async () => {
    while (running) {
      const rows = await querySql<{ pid: number }>(
        adminUrl,
        'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      ).catch(() => []);
      for (const { pid } of rows) {
        const t = ticks(pid);
        if (t !== null) seen.set(pid, t);
      }
      await new Promise((done) => setTimeout(done, 1_000));
    }
  })();
  return {
    async stop() {
      // One last sample before the caller drops the database.
      running = false;
      await loop;
      for (const pid of seen.keys()) {
        const t = ticks(pid);
        if (t !== null) seen.set(pid, t);
      }
      return [...seen.values()].reduce((sum, t) => sum + t, 0) / 100;
    },
  };
}

export async function runImportPostgresBench(
  options: ImportPostgresOptions,
  log: (line: string) => void,
): Promise<string> {
  const shapes: { name: string; export: SyntheticExportOptions }[] = [
    {
      name: `${int(options.rows)} rows, 20 tokens, 50,000 holders`,
      export: { transfers: options.rows, holders: 50_000, tokens: 20, seed: 1 },
    },
    {
      name: `${int(options.rows * 2)} rows, 20,000 tokens, 1,000,000 holders`,
      export: { transfers: options.rows * 2, holders: 1_000_000, tokens: 20_000, seed: 1 },
    },
  ];
  const other = options.ref === null ? null : buildOf(options.ref, log);
  const adminUrl = TEST_POSTGRES_URL;
  const lines: string[] = [];
  try {
    for (const shape of shapes) {
      const path = join(options.workDir, `export-${shape.export.transfers}.csv.gz`);
      const bytes = await writeSyntheticExport(path, { ...shape.export, order: 'sorted' });
      log(`import-pg: ${shape.name} written (${mib(bytes)})`);
      const generated = createSyntheticExport(shape.export);
      const node = await startFixtureNode({ ...generated.node(), head: generated.lastBlock + 1_000 });
      const sides = [
        { name: 'this tree', child: './import-child.js', runs: [] as Run[] },
        ...(other === null
          ? []
          : [{ name: options.ref!, child: other.childUrl('import-child.js'), runs: [] as Run[] }]),
      ];
      const importOnce = async (child: string, execArgv: string[] = []): Promise<Run> => {
        const db = await createTestDatabase();
        try {
          const server = sampleDatabaseCpu(adminUrl, db.name);
          // No time limit to speak of: on a loaded machine a 2M-row import takes many minutes.
          const handle = await startChild<ImportChildResult>(
            child,
            {
              mode: 'import',
              path,
              url: node.url,
              dbPath: db.url,
              tmpDir: options.workDir,
              sorted: true,
            } satisfies ImportChildInput,
            { execArgv, timeoutMs: 3_600_000 },
          );
          await handle.stop();
          const result = handle.value;
          const serverSeconds = await server.stop();
          const [size] = await querySql<{ bytes: string }>(
            db.url,
            'SELECT pg_database_size(current_database()) AS bytes',
          );
          return { ...result, serverSeconds, databaseBytes: Number(size!.bytes) };
        } finally {
          await db.drop();
        }
      };
      try {
        const parsed = await runChild<ImportChildResult>('./import-child.js', {
          mode: 'parse',
          path,
        } satisfies ImportChildInput);
        // The chain-shaped export takes several times as long: half the repetitions (at least one).
        const reps = shape === shapes[0] ? options.reps : Math.max(1, Math.floor(options.reps / 2));
        for (let i = 0; i < reps; i++) {
          for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
            const run = await importOnce(side.child);
            side.runs.push(run);
            log(
              `import-pg ${shape.name}, rep ${i + 1}, ${side.name}: ${int(run.rows / run.seconds)} rows/s, ` +
                `${fixed(run.seconds, 1)} s, node CPU ${fixed(run.cpuSeconds, 1)} s, server CPU ${fixed(run.serverSeconds, 1)} s, ` +
                `peak RSS ${mib(run.peakRssBytes)}, load ${fixed(loadAverage(), 1)}`,
            );
          }
        }
        lines.push(
          `Export: ${shape.name} (${mib(bytes)} gzipped CSV, sorted, imported with --sorted); the importer's own reader: ${int(parsed.rows / parsed.seconds)} rows/s.`,
          '',
          '| build | rows/s (median, range) | ratio to the reader | wall s | node CPU s | server CPU s | peak RSS | database bytes per transfer |',
          '|---|---|---|---|---|---|---|---|',
          ...sides.map((side) => {
            const rates = side.runs.map((r) => r.rows / r.seconds);
            const m = (f: (r: Run) => number) => median(side.runs.map(f));
            return `| ${side.name} | ${int(median(rates))} (${int(Math.min(...rates))}–${int(Math.max(...rates))}) | ${fixed(median(rates) / (parsed.rows / parsed.seconds))} | ${side.runs.map((r) => fixed(r.seconds, 1)).join(', ')} | ${fixed(
              m((r) => r.cpuSeconds),
              1,
            )} | ${fixed(
              m((r) => r.serverSeconds),
              1,
            )} | ${mib(m((r) => r.peakRssBytes))} | ${int(m((r) => r.databaseBytes / r.rows))} |`;
          }),
          '',
        );
        if (options.profile && shape === shapes[0]) {
          for (const side of sides) {
            const dir = join(options.workDir, `profile-${shape.export.transfers}-${sides.indexOf(side)}`);
            const run = await importOnce(side.child, ['--cpu-prof', '--cpu-prof-dir', dir]);
            const summary = summarizeProfiles(dir, 12);
            lines.push(
              `CPU profile of ${side.name}'s import (\`--cpu-prof\`, all threads; ${int(run.rows / run.seconds)} rows/s, node CPU ${fixed(run.cpuSeconds, 1)} s, server CPU ${fixed(run.serverSeconds, 1)} s), self time: ${summary.self.map((e) => `${e.name} ${fixed(e.selfShare * 100, 1)}%`).join('; ')}`,
              '',
            );
          }
        }
      } finally {
        await node.close();
      }
    }
  } finally {
    other?.remove();
  }
  return lines.join('\n');
}

function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}
