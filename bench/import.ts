// The import benchmark: a large SYNTHETIC export (bench/synthetic-export.ts) imported by
// `importTransfers` as `tokenquery import` runs it, against the importer's own reader alone
// (gunzip, UTF-8, CSV, row checks) over the same file, each in a fresh process.
import { join } from 'node:path';
import { startFixtureNode } from '../src/chains/evm/testing/fixture-node.js';
import {
  createSyntheticExport,
  type SyntheticExportOptions,
} from '../src/importer/testing/synthetic-export.js';
import { fixed, int, median, mib, runChild } from './common.js';
import type { ImportChildInput, ImportChildResult } from './import-child.js';
import { writeSyntheticExport } from './synthetic-export.js';

export interface ImportBenchOptions {
  transfers: number;
  holders: number;
  tokens: number;
  seed: number;
  reps: number;
  workDir: string;
}

export interface ImportRep {
  /** Baseline over the shuffled file, and the import of it (through the sort file). */
  parseShuffled: ImportChildResult;
  staged: ImportChildResult;
  /** Baseline over the sorted file, and its import with `sorted: true`. */
  parseSorted: ImportChildResult;
  sorted: ImportChildResult;
}

export interface ImportReport {
  options: ImportBenchOptions;
  export: Required<SyntheticExportOptions>;
  fileBytes: { shuffled: number; sorted: number };
  reps: ImportRep[];
}

const rate = (r: ImportChildResult) => r.rows / r.seconds;

export async function runImportBench(
  options: ImportBenchOptions,
  log: (line: string) => void,
): Promise<ImportReport> {
  const base: SyntheticExportOptions = {
    transfers: options.transfers,
    holders: options.holders,
    tokens: options.tokens,
    seed: options.seed,
  };
  const shuffledPath = join(options.workDir, 'export-shuffled.csv.gz');
  const sortedPath = join(options.workDir, 'export-sorted.csv.gz');
  const started = Date.now();
  const fileBytes = {
    shuffled: await writeSyntheticExport(shuffledPath, { ...base, order: 'shuffled' }),
    sorted: await writeSyntheticExport(sortedPath, { ...base, order: 'sorted' }),
  };
  log(
    `import: two ${int(options.transfers)}-row exports written in ${((Date.now() - started) / 1000).toFixed(1)} s (${mib(fileBytes.sorted)} each)`,
  );
  // The node only answers token metadata (the export has times and positions); its head lies
  // well past the export, as for any real export.
  const generated = createSyntheticExport(base);
  const node = await startFixtureNode({ ...generated.node(), head: generated.lastBlock + 1_000 });
  const reps: ImportRep[] = [];
  try {
    for (let i = 0; i < options.reps; i++) {
      const parse = (path: string) =>
        runChild<ImportChildResult>('./import-child.js', { mode: 'parse', path } satisfies ImportChildInput);
      const importOnce = (path: string, sorted: boolean) =>
        runChild<ImportChildResult>('./import-child.js', {
          mode: 'import',
          path,
          url: node.url,
          dbPath: join(options.workDir, `import-${i}-${sorted ? 'sorted' : 'staged'}.sqlite`),
          tmpDir: options.workDir,
          sorted,
        } satisfies ImportChildInput);
      const rep: ImportRep = {
        parseShuffled: await parse(shuffledPath),
        staged: await importOnce(shuffledPath, false),
        parseSorted: await parse(sortedPath),
        sorted: await importOnce(sortedPath, true),
      };
      for (const r of [rep.staged, rep.sorted]) {
        if (r.rows !== options.transfers)
          throw new Error(`import stored ${r.rows} of ${options.transfers} transfers`);
      }
      reps.push(rep);
      log(
        `import repetition ${i + 1}: parse ${int(rate(rep.parseShuffled))} rows/s, import ${int(rate(rep.staged))} rows/s ` +
          `(sorted: parse ${int(rate(rep.parseSorted))}, import --sorted ${int(rate(rep.sorted))})`,
      );
    }
  } finally {
    await node.close();
  }
  return { options, export: generated.options, fileBytes, reps };
}

export function renderImport(r: ImportReport, machineLine: string): string {
  const e = r.export;
  const m = (pick: (rep: ImportRep) => number) => median(r.reps.map(pick));
  const ratioStaged = m((x) => rate(x.staged) / rate(x.parseShuffled));
  const ratioSorted = m((x) => rate(x.sorted) / rate(x.parseSorted));
  const blocks = Math.ceil(e.transfers / e.perBlock);
  return [
    machineLine,
    '',
    `Export: ${int(e.transfers)} SYNTHETIC transfers (\`bench/synthetic-export.ts\`, seed ${e.seed}) of ${e.tokens} tokens ` +
      `among ${int(e.holders)} holders, ${e.perBlock} per block (${int(blocks)} blocks), with \`block_timestamp\` and ` +
      `\`transaction_index\` columns; CSV gzipped at level 1 (${mib(r.fileBytes.sorted)}). The shuffled file has ` +
      'its 50-block ranges in a random order and the rows of each block reversed. Token metadata from a fixture ' +
      `JSON-RPC node (\`startFixtureNode\`). Median of ${r.reps.length} repetitions; every measurement in a fresh process.`,
    '',
    '| | baseline: the same reader, nothing stored | tokenquery import | ratio import / baseline |',
    '|---|---|---|---|',
    `| shuffled file (sorted through the sort file) | ${int(m((x) => rate(x.parseShuffled)))} rows/s | ${int(m((x) => rate(x.staged)))} rows/s | **${fixed(ratioStaged)}** |`,
    `| sorted file, \`--sorted\` | ${int(m((x) => rate(x.parseSorted)))} rows/s | ${int(m((x) => rate(x.sorted)))} rows/s | **${fixed(ratioSorted)}** |`,
    ...r.reps.map(
      (x, i) =>
        `| repetition ${i + 1} | ${fixed(x.parseShuffled.seconds)} s / ${fixed(x.parseSorted.seconds)} s | ` +
        `${fixed(x.staged.seconds)} s (read and sort ${fixed(x.staged.readSeconds ?? 0)} s, write ${fixed(x.staged.writeSeconds ?? 0)} s) / ` +
        `${fixed(x.sorted.seconds)} s | ${fixed(rate(x.staged) / rate(x.parseShuffled))} / ${fixed(rate(x.sorted) / rate(x.parseSorted))} |`,
    ),
    `| peak RSS (median) | ${mib(m((x) => x.parseShuffled.peakRssBytes))} | ${mib(m((x) => x.staged.peakRssBytes))} / ${mib(m((x) => x.sorted.peakRssBytes))} (\`--sorted\`) | |`,
    `| CPU time (median, all threads) | ${fixed(
      m((x) => x.parseShuffled.cpuSeconds),
      1,
    )} s | ${fixed(
      m((x) => x.staged.cpuSeconds),
      1,
    )} s / ${fixed(
      m((x) => x.sorted.cpuSeconds),
      1,
    )} s | |`,
    `| sort file | | ${fixed(
      m((x) => (x.staged.stagingBytes ?? 0) / e.transfers),
      0,
    )} bytes per row | |`,
    `| SQLite file | | ${fixed(
      m((x) => (x.sorted.dbBytes ?? 0) / e.transfers),
      0,
    )} bytes per transfer | |`,
  ].join('\n');
}
