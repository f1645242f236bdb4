/**
 * `readExport` against hostile input: lines longer than the maximum (plain, gzipped, and a gzip
 * of one endless line), and text from the file that must reach the terminal escaped.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ImportInputError } from './columns.js';
import { createCsvReader } from './csv.js';
import { readExport } from './input.js';
import { MAX_LINE_CHARS } from './text.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-input-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer | Buffer[]) => {
  const path = join(tmp, name);
  writeFileSync(path, Array.isArray(content) ? Buffer.concat(content) : content);
  return path;
};

const HEADER = 'token_address,from_address,to_address,value,transaction_hash,log_index,block_number\n';
const ROW = `0x${'a'.repeat(40)},0x${'b'.repeat(40)},0x${'c'.repeat(40)},1,0x${'d'.repeat(64)},0,1\n`;

/** Reads the whole export; resolves to the number of rows, or rejects with the reader's error. */
async function readAll(path: string): Promise<number> {
  let rows = 0;
  for await (const chunk of readExport({ path, fileIndex: 0 })) rows += chunk.rows.length;
  return rows;
}

/** Asserts that reading `path` fails with one ImportInputError line matching `message`. */
async function refused(path: string, message: RegExp): Promise<string> {
  let error: unknown;
  try {
    await readAll(path);
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof ImportInputError, `expected an ImportInputError, got ${String(error)}`);
  assert.match(error.message, message);
  assert.doesNotMatch(error.message, /\n/);
  return error.message;
}

const tooLong = (name: string, line: number) =>
  new RegExp(`^${name}:${line}: the line is longer than 1,048,576 characters \\(1 MiB\\)`);

describe('readExport: the maximum line length', () => {
  test('a 4 MiB CSV line without a line break is refused, naming the file and line', async () => {
    const path = file('long.csv', HEADER + ROW + 'x'.repeat(4 << 20));
    await refused(path, tooLong(path, 3));
  });

  test('a 4 MiB JSON line is refused likewise, and a line of just the maximum is read', async () => {
    const path = file('long.jsonl', `{"type":"block"}\n{"x":"${'y'.repeat(4 << 20)}"}\n`);
    await refused(path, tooLong(path, 2));
    // `{"type":"block","pad":"…"}` of exactly MAX_LINE_CHARS characters is an ordinary line.
    const pad = 'p'.repeat(MAX_LINE_CHARS - '{"type":"block","pad":""}'.length);
    await readAll(file('max.jsonl', `{"type":"block","pad":"${pad}"}\n`));
    await refused(file('over.jsonl', `\n{"type":"block","pad":"${pad}p"}`), tooLong('.*over.jsonl', 2));
  });

  test('a CSV record of quoted line breaks counts as one line, from where it starts', async () => {
    const field = `"${'a\n'.repeat(600_000)}"`;
    const path = file('quoted.csv', `${HEADER}${ROW}${ROW}${field},1,2,3,4,5,6\n`);
    await refused(path, tooLong(path, 4));
  });

  test('a gzip of one endless line ends quickly with the same message (no hang, bounded memory)', {
    timeout: 120_000,
  }, async () => {
    // 64 gzip members of 8 MiB of "a" each: 512 MiB of one line from about 0.5 MB of gzip.
    const member = gzipSync(Buffer.alloc(8 << 20, 'a'), { level: 9 });
    const path = file(
      'bomb.csv.gz',
      Array.from({ length: 64 }, () => member),
    );
    const before = process.memoryUsage().rss;
    await refused(path, tooLong(path, 1));
    assert.ok(process.memoryUsage().rss - before < 256 << 20, 'memory stays bounded');
  });

  test('splitting is linear: an 8 MiB record fed in 1 KiB chunks (with the maximum raised)', {
    timeout: 120_000,
  }, async () => {
    // Rescanning the growing record at each chunk would scan 8192 × 4 MiB here: minutes, not ms.
    for (const text of ['z'.repeat(8 << 20), `"${'q,\n'.repeat((8 << 20) / 3)}"`]) {
      const records: number[] = [];
      const reader = createCsvReader((fields) => records.push(fields[0]!.length), {
        maxLineChars: 16 << 20,
      });
      for (let pos = 0; pos < text.length; pos += 1024) {
        reader.push(text.slice(pos, pos + 1024));
        // Lets the test's timeout fire if the reader is slow.
        if (pos % (1 << 20) === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      reader.end();
      assert.equal(records.length, 1);
    }
  });
});

describe('readExport: text from the file is shown escaped', () => {
  test('a CSV header with escape sequences, a carriage return and NUL', async () => {
    const path = file('header.csv', 'token_address,\x1b[31mred\x1b[0m,a\rb,nul\x00,c1\x9b2J\n1,2,3,4,5\n');
    const message = await refused(path, /:1: the CSV header lacks from_address/);
    assert.match(message, /it reads "token_address,\\u001b\[31mred\\u001b\[0m,a\\rb,nul\\u0000,c1\\u009b2J"/);
    assert.ok(!hasControl(message), message);
  });

  test('field values and file names', async () => {
    const path = file('value.csv', HEADER + ROW.replace(',1,0x', ',\x1b]0;pwned\x07\x9b,0x'));
    const message = await refused(
      path,
      /:2: column value: "\\u001b\]0;pwned\\u0007\\u009b" is not a decimal integer/,
    );
    assert.ok(!hasControl(message), message);
    const missing = await refused(join(tmp, 'no\x1b[2Jsuch.csv'), /no such file$/);
    assert.match(missing, /no\\u001b\[2Jsuch\.csv/);
    assert.ok(!hasControl(missing), missing);
  });
});

/** Whether `text` holds a character a terminal would obey: C0 and C1 controls, DEL. */
function hasControl(text: string): boolean {
  return [...text].some(
    (c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f),
  );
}
