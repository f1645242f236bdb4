// The importer's CSV reader against csv-parse, over the same SYNTHETIC export (issue #15 asked
// whether a library should replace the hand-written reader). Each measurement runs in a fresh
// process; the two readers alternate. Both do the whole reading work: gunzip, UTF-8, CSV, the
// header's columns and the row checks (`parseRow`), with each row's line (csv-parse's `info`,
// which the error messages need; CSV_INFO=0 leaves it out, to see what it costs).
// The file is written first when it does not exist.
//   node dist/bench/import-csv-parse.js <file.csv.gz> [rows=1000000] [reps=3]
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { COLUMNS, parseRow } from '../src/importer/columns.js';
import { readExport } from '../src/importer/input.js';
import { MAX_LINE_CHARS } from '../src/importer/text.js';
import { writeSyntheticExport } from './synthetic-export.js';

type Reader = 'hand' | 'csv-parse';

async function hand(path: string): Promise<number> {
  let rows = 0;
  for await (const chunk of readExport({ path, fileIndex: 0 })) rows += chunk.rows.length;
  return rows;
}

async function csvParse(path: string): Promise<number> {
  const parser = createReadStream(path, { highWaterMark: 1 << 20 })
    .pipe(createGunzip())
    .pipe(
      parse({
        bom: true,
        skip_empty_lines: true,
        info: process.env.CSV_INFO !== '0',
        max_record_size: MAX_LINE_CHARS,
      }),
    );
  let positions: number[] | null = null;
  const values: (string | undefined)[] = new Array(COLUMNS.length);
  let rows = 0;
  const withInfo = process.env.CSV_INFO !== '0';
  for await (const item of parser as AsyncIterable<
    { record: string[]; info: { lines: number } } | string[]
  >) {
    const record = withInfo ? (item as { record: string[] }).record : (item as string[]);
    const info = withInfo ? (item as { info: { lines: number } }).info : { lines: rows + 2 };
    if (positions === null) {
      const names = record.map((f) => f.trim().toLowerCase());
      positions = COLUMNS.map((column) => names.indexOf(column));
      continue;
    }
    for (let c = 0; c < positions.length; c++) {
      const p = positions[c]!;
      values[c] = p === -1 ? undefined : record[p];
    }
    parseRow(values, `${path}:${info.lines}`, 0, info.lines);
    rows++;
  }
  return rows;
}

const [path, rowsText = '1000000', repsText = '3', child] = process.argv.slice(2) as [string, ...string[]];
if (child !== undefined) {
  const started = performance.now();
  const rows = await (child === 'hand' ? hand(path) : csvParse(path));
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${JSON.stringify({ rows, seconds })}\n`);
} else {
  if (!existsSync(path)) {
    await writeSyntheticExport(path, { transfers: Number(rowsText), holders: 50_000, tokens: 20, seed: 1 });
  }
  const rates: Record<Reader, number[]> = { hand: [], 'csv-parse': [] };
  for (let rep = 0; rep < Number(repsText); rep++) {
    for (const reader of (rep % 2 === 0 ? ['hand', 'csv-parse'] : ['csv-parse', 'hand']) as Reader[]) {
      const run = spawnSync(process.execPath, [process.argv[1]!, path, rowsText, repsText, reader], {
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(run.stderr);
      const { rows, seconds } = JSON.parse(run.stdout) as { rows: number; seconds: number };
      rates[reader].push(rows / seconds);
      process.stdout.write(
        `rep ${rep + 1} ${reader}: ${rows} rows in ${seconds.toFixed(2)} s, ${Math.round(rows / seconds)} rows/s\n`,
      );
    }
  }
  for (const reader of ['hand', 'csv-parse'] as Reader[]) {
    const sorted = [...rates[reader]].sort((a, b) => a - b);
    process.stdout.write(`${reader}: median ${Math.round(sorted[sorted.length >> 1]!)} rows/s\n`);
  }
}
