/**
 * `tokenquery import` through the real compiled binary: help, one-line errors, and the real
 * 14,323-row export imported then continued by `tokenquery index` (SYNTHETIC node for the blocks,
 * see `importer/testing/export-node.ts`).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FixtureNode, startFixtureNode } from '../chains/evm/testing/fixture-node.js';
import {
  CROSSCHECK_EXPORT,
  readCrosscheckExport,
  syntheticNodeFor,
} from '../importer/testing/export-node.js';
import { silentLogger } from '../internal/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import {
  assertOneLineError,
  lines,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

after(removeTempDirs);

describe('tokenquery import', () => {
  const rows = readCrosscheckExport();
  const last = Math.max(...rows.map((r) => Number(r.block_number)));
  let node: FixtureNode;
  before(async () => {
    node = await startFixtureNode(syntheticNodeFor(rows, { head: last + 100 }).node);
  });
  after(() => node.close());

  test('--help explains formats, columns, ordering and resuming, with examples', async () => {
    const result = await runCli(['import', '--help']);
    assert.equal(result.code, 0, result.stderr);
    for (const expected of [
      /--rpc <chain=url>/,
      /--format <csv\|jsonl>/,
      /--sorted/,
      /block_timestamp\s+Unix seconds \(ethereum-etl\) or "2023-05-01 12:34:56 UTC" \(BigQuery\)/,
      /floats and exponents/,
      /Rows may come in any order/,
      /ERC-721/,
      /tokenquery index --rpc eth=/,
      /A line may be at most 1 MiB \(1,048,576 characters/,
    ]) {
      assert.match(result.stdout, expected);
    }
  });

  test('user errors are one line and exit 2', async () => {
    const dir = tempDir();
    const db = join(dir, 'store.sqlite');
    assertOneLineError(
      await runCli(['import', CROSSCHECK_EXPORT, '--db', db]),
      /the export has no block_timestamp column: block times come from a node; give --rpc eth=<url>$/,
    );
    assertOneLineError(
      await runCli(['import', join(dir, 'nope.csv'), '--db', db]),
      /nope\.csv: no such file$/,
    );
    assertOneLineError(
      await runCli(['import', CROSSCHECK_EXPORT, '--format', 'xml']),
      /--format must be csv or jsonl/,
    );
    const bad = join(dir, 'bad.csv');
    writeFileSync(
      bad,
      'token_address,from_address,to_address,value,transaction_hash,log_index,block_number\n' +
        `${rows[0]!.token_address},${rows[0]!.from_address},${rows[0]!.to_address},1.5E+21,${rows[0]!.transaction_hash},1,${last}\n`,
    );
    assertOneLineError(
      await runCli(['import', bad, '--db', db, '--rpc', `eth=${node.url}`]),
      /bad\.csv:2: column value: "1\.5E\+21" is not an exact integer/,
    );
  });

  test('a hostile CSV header reaches the terminal escaped, and a long line is one line of error', async () => {
    const dir = tempDir();
    const db = join(dir, 'store.sqlite');
    const header = join(dir, 'header.csv');
    writeFileSync(header, 'token_address,\x1b[31mred\x1b]0;title\x07,a\rb,nul\x00,\x9b2J\n');
    const result = await runCli(['import', header, '--db', db]);
    assertOneLineError(
      result,
      /header\.csv:1: the CSV header lacks from_address, .* it reads "token_address,\\u001b\[31mred\\u001b\]0;title\\u0007,a\\rb,nul\\u0000,\\u009b2J"\)$/,
    );
    assert.ok(!hasControl(result.stderr.slice(0, -1)), result.stderr);
    const long = join(dir, 'long.jsonl');
    writeFileSync(long, `\n\n{"value":"${'9'.repeat(2 << 20)}"}\n`);
    assertOneLineError(
      await runCli(['import', long, '--db', db]),
      /long\.jsonl:3: the line is longer than 1,048,576 characters \(1 MiB\), the most the importer reads as one row$/,
    );
  });

  test('imports the real export, prints a summary, and `index` goes on from the next block', async () => {
    const dir = tempDir();
    const db = join(dir, 'store.sqlite');
    const result = await runCli(
      ['import', CROSSCHECK_EXPORT, '--db', db, '--rpc', `eth=${node.url}`, '--log-level', 'warn'],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const out = lines(result.stdout);
    assert.match(
      out[0]!,
      new RegExp(
        `^imported ${rows.length.toLocaleString('en-US')} transfers into eth \\(blocks \\d+-${last}, `,
      ),
    );
    assert.match(result.stdout, new RegExp(`checkpoint: block ${last}; .* continues from block ${last + 1}`));
    const store = await openSqliteStore({ path: db, logger: silentLogger() });
    assert.equal((await store.writer.getCheckpoint('eth'))?.block, last);
    await store.close();

    const index = spawnCli([
      'index',
      '--db',
      db,
      '--rpc',
      `eth=${node.url}`,
      '--finality',
      'eth=0',
      '--poll-interval',
      '50',
    ]);
    try {
      await index.waitFor(
        (_out, err) => logLines(err).some((l) => l.msg === 'indexer starting' && l.next === last + 1),
        15_000,
        'indexer starting at the block after the import',
      );
    } finally {
      await index.stop();
    }
  });
});

/** Whether `text` holds a character a terminal would obey: C0 and C1 controls, DEL. */
function hasControl(text: string): boolean {
  return [...text].some(
    (c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f),
  );
}
