import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { JsonLineError, NESTED, parseJsonLine } from './json-line.js';

describe('JSON line scanner', () => {
  test('numbers keep every digit; strings are unescaped; null, booleans and nesting are marked', () => {
    const line =
      '{"value": 7786596450288373164569331648084, "s": "a\\"b\\\\c\\u00e9\\n", "n": null, "t": true, "o": {"x": [1, "}"]}, "neg": -1.5e+3}';
    const item = parseJsonLine(line);
    assert.equal(item.get('value'), '7786596450288373164569331648084');
    assert.equal(item.get('s'), 'a"b\\cé\n');
    assert.equal(item.get('n'), null);
    assert.equal(item.get('t'), 'true');
    assert.equal(item.get('o'), NESTED);
    assert.equal(item.get('neg'), '-1.5e+3');
    assert.equal(parseJsonLine('  {}  \r').size, 0);
  });

  test('agrees with JSON.parse on the strings of ordinary objects', () => {
    const object = { a: 'plain', b: 'tab\there', c: '☃ \u0001', d: '' };
    const item = parseJsonLine(JSON.stringify(object));
    for (const [key, value] of Object.entries(object)) assert.equal(item.get(key), value);
  });

  test('malformed lines are refused with the column of the fault', () => {
    const fails = (line: string, message: RegExp, column: number) =>
      assert.throws(
        () => parseJsonLine(line),
        (e: unknown) => e instanceof JsonLineError && message.test(e.message) && e.column === column,
      );
    fails('[1]', /expected a JSON object/, 1);
    fails('{"a": 1,}', /expected a key/, 9);
    fails('{"a" 1}', /expected ":"/, 6);
    fails('{"a": 01}', /expected "," or "}"/, 8);
    fails('{"a": "x}', /a string is not closed/, 7);
    fails('{"a": 1} x', /unexpected text after the object/, 10);
    fails('{"a": tru}', /an unexpected character/, 7);
    fails('{"a": 1.}', /a malformed number/, 7);
  });
});
