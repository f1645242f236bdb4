import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { editDistance, nearest, type Schema, toJsonSchema, validate } from './schema.js';

describe('suggesting the nearest name', () => {
  const keys = ['db', 'dbRead', 'host', 'port', 'logLevel', 'pollIntervalMs', 'chains', 'tokenLists'];

  test('typos, swapped letters, other spellings and a missing suffix find the key', () => {
    assert.equal(nearest('prot', keys), 'port');
    assert.equal(nearest('pot', keys), 'port');
    assert.equal(nearest('hsot', keys), 'host');
    assert.equal(nearest('log-level', keys), 'logLevel');
    assert.equal(nearest('LOG_LEVEL', keys), 'logLevel');
    assert.equal(nearest('pollInterval', keys), 'pollIntervalMs');
    assert.equal(nearest('tokenList', keys), 'tokenLists');
    assert.equal(nearest('chain', keys), 'chains');
  });

  test('nothing is suggested for a word that is not close', () => {
    assert.equal(nearest('frobnicate', keys), undefined);
    assert.equal(nearest('x', keys), undefined);
    assert.equal(nearest('', keys), undefined);
  });

  test('edit distance counts an adjacent swap as one edit', () => {
    assert.equal(editDistance('port', 'prot'), 1);
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('same', 'same'), 0);
  });
});

describe('one of several forms', () => {
  const schema: Schema = {
    type: 'oneOf',
    description: 'hops or proxies',
    expected: 'a hop count or a list of proxies',
    options: [
      { type: 'integer', minimum: 1, maximum: 32, description: 'hops' },
      { type: 'array', description: 'proxies', items: { type: 'string', description: 'proxy' } },
    ],
  };

  test("a value of one form's type gets that form's problems; any other type, the forms", () => {
    assert.deepEqual(validate(schema, 3), []);
    assert.deepEqual(validate(schema, ['a']), []);
    assert.deepEqual(validate(schema, 40, 'trustProxy'), [
      { path: 'trustProxy', message: 'must be between 1 and 32, got 40' },
    ]);
    assert.deepEqual(validate(schema, ['a', ''], 'trustProxy'), [
      { path: 'trustProxy[1]', message: 'must not be empty' },
    ]);
    assert.deepEqual(validate(schema, 'x', 'trustProxy'), [
      { path: 'trustProxy', message: 'must be a hop count or a list of proxies, got a string' },
    ]);
  });

  test('the JSON Schema lists the forms', () => {
    assert.deepEqual(toJsonSchema(schema), {
      description: 'hops or proxies',
      oneOf: [
        { type: 'integer', description: 'hops', minimum: 1, maximum: 32 },
        {
          type: 'array',
          description: 'proxies',
          items: { type: 'string', description: 'proxy', minLength: 1 },
        },
      ],
    });
  });
});

describe('a switch', () => {
  const schema: Schema = { type: 'boolean', description: 'on or off' };

  test('only true and false are accepted, and the JSON Schema says so', () => {
    assert.deepEqual(validate(schema, true), []);
    assert.deepEqual(validate(schema, false), []);
    assert.deepEqual(validate(schema, 'true', 'any'), [
      { path: 'any', message: 'must be true or false, got a string' },
    ]);
    assert.deepEqual(validate(schema, 1, 'any'), [
      { path: 'any', message: 'must be true or false, got an integer' },
    ]);
    assert.deepEqual(toJsonSchema(schema), { type: 'boolean', description: 'on or off' });
  });
});
