import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  InvalidStackItemError,
  isFaultState,
  parseInvokeResult,
  parseStackItem,
  stackItemToBigInt,
  stackItemToText,
} from './stack.js';
import { loadNeoGoExamples, loadNeoscanRecordings, loadRpcCases } from './testing/recordings.js';

const cases = loadRpcCases();
const invokeCase = (name: string) => {
  const found = cases.find((c) => c.name === name);
  assert.ok(found, `rpc case ${name}`);
  return parseInvokeResult(found.response.result, name);
};

describe('invoke result shapes (neon-js TestNet cases)', () => {
  test('every invoke, invokefunction and invokescript answer validates', () => {
    const invokes = cases.filter((c) => ['invoke', 'invokefunction', 'invokescript'].includes(c.method));
    assert.ok(invokes.length >= 9);
    for (const c of invokes) {
      const result = parseInvokeResult(c.response.result, c.name);
      assert.equal(result.faulted, false, c.name);
      assert.ok(result.stack.length > 0, c.name);
    }
  });

  test('a ByteArray name reads as UTF-8 text, from invoke, invokefunction and invokescript alike', () => {
    for (const name of ['invokeSimple', 'invokeFunction', 'invokeScript']) {
      assert.equal(stackItemToText(invokeCase(name).stack[0]!), 'Red Pulse Token 3.1.4');
    }
  });

  test('NEP-5 getTokenInfo: name, symbol, Integer decimals, little-endian ByteArray totalSupply', () => {
    const [name, symbol, decimals, supply] = invokeCase('nep5.getTokenInfo').stack;
    assert.equal(stackItemToText(name!), 'LOCALTOKEN');
    assert.equal(stackItemToText(symbol!), 'LWTF');
    assert.deepEqual(decimals, { type: 'Integer', value: 8n });
    assert.equal(stackItemToBigInt(supply!), 206_800_000_000_000n);
  });

  test('balances: a one-byte ByteArray, a five-byte ByteArray and an empty ByteArray (zero)', () => {
    assert.equal(stackItemToBigInt(invokeCase('nep5.getTokenBalance').stack[1]!), 83n);
    assert.equal(stackItemToBigInt(invokeCase('invokeComplex').stack[0]!), 100_000_000_000n);
    const zero = invokeCase('nep5.getTokenZero').stack;
    assert.equal(stackItemToBigInt(zero[3]!), 227_000_000_000_000n);
    assert.equal(stackItemToBigInt(zero[4]!), 0n);
  });

  test('mainnet NEX metadata answers (neo-scan)', () => {
    const nex = loadNeoscanRecordings().invocations;
    const read = (method: string) =>
      parseInvokeResult(nex.find((i) => i.method === method)!.result).stack[0]!;
    assert.equal(stackItemToText(read('name')), 'NEX Token');
    assert.equal(stackItemToText(read('symbol')), 'NEX');
    assert.equal(stackItemToBigInt(read('decimals')), 8n);
  });

  test('neo-go answers: bare HALT state, Integer as a JSON number', () => {
    const examples = loadNeoGoExamples();
    const invoke = parseInvokeResult(examples.find((e) => e.method === 'invokefunction')!.response.result);
    assert.equal(invoke.state, 'HALT');
    assert.equal(invoke.faulted, false);
    assert.equal(stackItemToBigInt(invoke.stack[0]!), 55_267_788_860_198n);
    const log = examples.find((e) => e.method === 'getapplicationlog')!.response.result as {
      executions: { stack: unknown[] }[];
    };
    assert.deepEqual(parseStackItem(log.executions[0]!.stack[0]), { type: 'Integer', value: 1n });
  });
});

describe('stack items', () => {
  test('ByteArray integers are little-endian two’s complement', () => {
    const int = (hex: string) => stackItemToBigInt({ type: 'ByteArray', value: hex });
    assert.equal(int(''), 0n);
    assert.equal(int('ff'), -1n);
    assert.equal(int('80'), -128n);
    assert.equal(int('0001'), 256n);
    assert.equal(int('ff7f'), 32767n);
    assert.equal(stackItemToBigInt({ type: 'Boolean', value: true }), 1n);
    assert.equal(stackItemToBigInt({ type: 'Array', value: [] }), undefined);
  });

  test('text trims trailing NULs and replaces invalid UTF-8', () => {
    assert.equal(stackItemToText({ type: 'ByteArray', value: '4e455800' }), 'NEX');
    assert.equal(stackItemToText({ type: 'ByteArray', value: 'ff41' }), '\uFFFDA');
    assert.equal(stackItemToText({ type: 'Integer', value: 1n }), undefined);
  });

  test('nested arrays, structs and maps validate; malformed items are refused with their path', () => {
    const item = parseStackItem({
      type: 'Array',
      value: [
        { type: 'Struct', value: [{ type: 'Boolean', value: false }] },
        {
          type: 'Map',
          value: [{ key: { type: 'String', value: 'k' }, value: { type: 'InteropInterface' } }],
        },
      ],
    });
    assert.equal(item.type, 'Array');
    const bad: [unknown, RegExp][] = [
      [null, /not an object/],
      [{ type: 'ByteArray', value: 'abc' }, /not hex/],
      [{ type: 'Integer', value: '1.5' }, /not a decimal integer/],
      [{ type: 'Integer', value: 2 ** 60 }, /not a decimal integer/],
      [{ type: 'Boolean', value: 'yes' }, /not a boolean/],
      [{ type: 'Array', value: [{ type: 'Nope' }] }, /\[0\] has an unknown type/],
      [{ type: 'Map', value: [1] }, /not a key\/value pair/],
    ];
    for (const [raw, message] of bad) assert.throws(() => parseStackItem(raw), message);
    let deep: unknown = { type: 'Integer', value: '1' };
    for (let i = 0; i < 20; i++) deep = { type: 'Array', value: [deep] };
    assert.throws(() => parseStackItem(deep), InvalidStackItemError);
  });

  test('VM states: FAULT anywhere in the flags faults; a FAULTed run may lack its stack', () => {
    assert.equal(isFaultState('HALT, BREAK'), false);
    assert.equal(isFaultState('HALT, FAULT, BREAK'), true);
    assert.equal(isFaultState('FAULT'), true);
    const faulted = parseInvokeResult({ state: 'FAULT, BREAK', gas_consumed: '0.1' });
    assert.deepEqual(faulted.stack, []);
    assert.equal(faulted.gasConsumed, 10_000_000n);
    assert.throws(() => parseInvokeResult({ state: 'HALT' }), /stack is not an array/);
    assert.throws(() => parseInvokeResult({ state: 'halted', stack: [] }), /not a VM state/);
    assert.throws(() => parseInvokeResult({ state: 'HALT', stack: [], gas_consumed: 'x' }), /gas_consumed/);
  });
});
