import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { UserError } from './errors.js';
import { firstJsonError, readJsonFile } from './json-file.js';

const tmp = mkdtempSync(join(tmpdir(), 'tq-json-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const valid = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('locating a JSON syntax error', () => {
  test('it agrees with JSON.parse on thousands of mutations of a real-looking file', () => {
    const base = JSON.stringify(
      {
        db: 'postgres://u:p@h/d',
        port: 8080,
        neg: -1.5e-3,
        flags: [true, false, null],
        chains: { eth: { rpc: 'http://a\\u00e9"', fromBlock: 0 } },
        empty: {},
        none: [],
      },
      null,
      2,
    );
    const alphabet = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      '0',
      '-',
      '.',
      'e',
      't',
      'n',
      ' ',
      '\n',
      'x',
      '\u0001',
    ];
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let invalid = 0;
    for (let round = 0; round < 5000; round++) {
      let text = base;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const kind = random(3);
        const c = alphabet[random(alphabet.length)]!;
        text =
          kind === 0
            ? text.slice(0, at) + c + text.slice(at)
            : kind === 1
              ? text.slice(0, at) + text.slice(at + 1)
              : text.slice(0, at) + c + text.slice(at + 1);
      }
      const offset = firstJsonError(text);
      assert.equal(offset === undefined, valid(text), JSON.stringify(text));
      if (offset !== undefined) {
        invalid++;
        // Everything before the offset is a valid beginning: no shorter prefix is already wrong.
        assert.ok(offset <= text.length);
      }
    }
    assert.ok(invalid > 1000, `mutations produced ${invalid} invalid texts`);
  });

  test('the offset is where the first wrong character is', () => {
    assert.equal(firstJsonError('{"a": 1,}'), 8);
    assert.equal(firstJsonError('[1 2]'), 3);
    assert.equal(firstJsonError('{"a": tru}'), 6, 'a misspelt literal: where it starts');
    assert.equal(firstJsonError('{"a": 1'), 7);
    assert.equal(firstJsonError('{} x'), 3);
    assert.equal(firstJsonError(''), 0);
  });
});

describe('reading a JSON file', () => {
  const options = { label: 'f.json', what: 'the file', maxBytes: 100 };

  test('the value, with a byte-order mark tolerated', () => {
    const path = join(tmp, 'bom.json');
    writeFileSync(path, '\uFEFF{"a": [1]}');
    assert.deepEqual(readJsonFile(path, options), { a: [1] });
  });

  test('each failure is one line that names the file', () => {
    const path = join(tmp, 'bad.json');
    writeFileSync(path, '{\n  "a": 1\n  "b": 2\n}');
    assert.throws(() => readJsonFile(path, options), {
      shortMessage: `f.json: not valid JSON (unexpected '"' at line 3, column 3)`,
    });
    writeFileSync(path, 'x'.repeat(101));
    assert.throws(() => readJsonFile(path, options), {
      shortMessage: 'f.json: 101 bytes is too large for the file (at most 100)',
    });
    assert.throws(() => readJsonFile(join(tmp, 'missing'), options), {
      shortMessage: 'f.json: cannot read the file (no such file)',
    });
    assert.throws(() => readJsonFile(tmp, options), UserError);
  });
});
