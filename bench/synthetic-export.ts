// Writes a large deterministic SYNTHETIC token_transfers export (see
// src/importer/testing/synthetic-export.ts), for the import and growth benchmarks:
//   node dist/bench/synthetic-export.js --out transfers.csv.gz --transfers 10000000 --holders 50000 --tokens 20 --seed 1
// Options: --format csv|jsonl, --order sorted|shuffled, --per-block N, --no-full-columns
// (leave out block_timestamp and transaction_index), --gzip-level 0-9 (0 = plain text; default 1).
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import {
  createSyntheticExport,
  type SyntheticExportOptions,
} from '../src/importer/testing/synthetic-export.js';

/** Writes the export to `path` (gzipped unless `gzipLevel` is 0); returns the bytes written. */
export async function writeSyntheticExport(
  path: string,
  options: SyntheticExportOptions,
  gzipLevel = 1,
): Promise<number> {
  const generated = createSyntheticExport(options);
  const source = Readable.from(generated.chunks());
  const out = createWriteStream(path);
  if (gzipLevel > 0) await pipeline(source, createGzip({ level: gzipLevel }), out);
  else await pipeline(source, out);
  return out.bytesWritten;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      transfers: { type: 'string', default: '1000000' },
      holders: { type: 'string', default: '50000' },
      tokens: { type: 'string', default: '20' },
      seed: { type: 'string', default: '1' },
      'per-block': { type: 'string', default: '100' },
      format: { type: 'string', default: 'csv' },
      order: { type: 'string', default: 'sorted' },
      'no-full-columns': { type: 'boolean', default: false },
      'gzip-level': { type: 'string', default: '1' },
    },
  });
  if (values.out === undefined) {
    console.error('give --out <file>');
    process.exit(2);
  }
  const started = Date.now();
  const bytes = await writeSyntheticExport(
    values.out,
    {
      transfers: Number(values.transfers),
      holders: Number(values.holders),
      tokens: Number(values.tokens),
      seed: Number(values.seed),
      perBlock: Number(values['per-block']),
      format: values.format === 'jsonl' ? 'jsonl' : 'csv',
      order: values.order === 'shuffled' ? 'shuffled' : 'sorted',
      fullColumns: !values['no-full-columns'],
    },
    Number(values['gzip-level']),
  );
  console.error(`${values.out}: ${bytes} bytes in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
