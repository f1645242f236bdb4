/**
 * NEO 2.x VM stack items as RPC answers show them (`invokefunction`, `invokescript`,
 * `invoke`, and notification states in `getapplicationlog`), validated into a typed tree,
 * plus the readings an indexer needs: integers, byte strings and text.
 */
import { bytesToUtf8, hexToBytes, isHex, leBytesToBigInt } from './bytes.js';
import { parseFixed8 } from './fixed8.js';

/** A validated stack item. Byte strings stay bare lower-case hex; integers are exact. */
export type NeoStackItem =
  | { type: 'ByteArray'; value: string }
  | { type: 'Integer'; value: bigint }
  | { type: 'Boolean'; value: boolean }
  | { type: 'String'; value: string }
  | { type: 'Hash160' | 'Hash256' | 'PublicKey' | 'Signature'; value: string }
  | { type: 'Array' | 'Struct'; value: NeoStackItem[] }
  | { type: 'Map'; value: { key: NeoStackItem; value: NeoStackItem }[] }
  | { type: 'InteropInterface' | 'Void' };

/** The result of `invokefunction` / `invokescript` / `invoke`, validated. */
export interface NeoInvokeResult {
  /** VM state as the node wrote it, e.g. `HALT, BREAK` or `FAULT, BREAK`. */
  state: string;
  /** True when the state names FAULT: the stack must not be trusted. */
  faulted: boolean;
  /** GAS consumed, in Fixed8 units; null when the node did not say. */
  gasConsumed: bigint | null;
  stack: NeoStackItem[];
  /** The script the node ran (bare hex), when it echoes it. */
  script: string | null;
}

/** An untrusted stack item that is not one (the message names the path). */
export class InvalidStackItemError extends TypeError {
  override name = 'InvalidStackItemError';
}

/** Nesting deeper than this is refused: real NEP-5 answers are one or two levels deep. */
const MAX_DEPTH = 16;
const INTEGER = /^-?\d{1,78}$/;

/** Validates one stack item (recursively). Throws `InvalidStackItemError` naming `path`. */
export function parseStackItem(raw: unknown, path = 'stack item', depth = 0): NeoStackItem {
  if (depth > MAX_DEPTH) throw new InvalidStackItemError(`${path} is nested too deep`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidStackItemError(`${path} is not an object`);
  }
  const { type, value } = raw as { type?: unknown; value?: unknown };
  switch (type) {
    case 'ByteArray':
    case 'Signature':
    case 'PublicKey':
      if (!isHex(value)) throw new InvalidStackItemError(`${path}: ${type} value is not hex`);
      return { type, value: value.toLowerCase() };
    case 'Hash160':
    case 'Hash256': {
      if (typeof value !== 'string' || !isHex(value.replace(/^0x/, ''))) {
        throw new InvalidStackItemError(`${path}: ${type} value is not hex`);
      }
      return { type, value: value.toLowerCase() };
    }
    case 'Integer': {
      if (typeof value === 'number' && Number.isSafeInteger(value)) return { type, value: BigInt(value) };
      if (typeof value !== 'string' || !INTEGER.test(value)) {
        throw new InvalidStackItemError(`${path}: Integer value is not a decimal integer`);
      }
      return { type, value: BigInt(value) };
    }
    case 'Boolean': {
      if (typeof value === 'boolean') return { type, value };
      if (value === 'true' || value === 'True') return { type, value: true };
      if (value === 'false' || value === 'False') return { type, value: false };
      throw new InvalidStackItemError(`${path}: Boolean value is not a boolean`);
    }
    case 'String':
      if (typeof value !== 'string') throw new InvalidStackItemError(`${path}: String value is not text`);
      return { type, value };
    case 'Array':
    case 'Struct':
      if (!Array.isArray(value)) throw new InvalidStackItemError(`${path}: ${type} value is not an array`);
      return { type, value: value.map((item, i) => parseStackItem(item, `${path}[${i}]`, depth + 1)) };
    case 'Map': {
      if (!Array.isArray(value)) throw new InvalidStackItemError(`${path}: Map value is not an array`);
      return {
        type,
        value: value.map((entry, i) => {
          if (typeof entry !== 'object' || entry === null) {
            throw new InvalidStackItemError(`${path}{${i}} is not a key/value pair`);
          }
          const pair = entry as { key?: unknown; value?: unknown };
          return {
            key: parseStackItem(pair.key, `${path}{${i}}.key`, depth + 1),
            value: parseStackItem(pair.value, `${path}{${i}}.value`, depth + 1),
          };
        }),
      };
    }
    case 'InteropInterface':
    case 'Void':
      return { type };
    default:
      throw new InvalidStackItemError(`${path} has an unknown type ${JSON.stringify(type)}`);
  }
}

/**
 * The integer a stack item stands for, as the VM converts it: an Integer as is, a ByteArray
 * as little-endian two's complement (`"00e8764817"` is 100 000 000 000), a Boolean as 1 or 0.
 * Undefined for anything else.
 */
export function stackItemToBigInt(item: NeoStackItem): bigint | undefined {
  switch (item.type) {
    case 'Integer':
      return item.value;
    case 'ByteArray':
      return leBytesToBigInt(hexToBytes(item.value));
    case 'Boolean':
      return item.value ? 1n : 0n;
    default:
      return undefined;
  }
}

/** The bytes of a ByteArray or String item (UTF-8); undefined for other types. */
export function stackItemToBytes(item: NeoStackItem): Uint8Array | undefined {
  if (item.type === 'ByteArray') return hexToBytes(item.value);
  if (item.type === 'String') return new TextEncoder().encode(item.value);
  return undefined;
}

/**
 * Text of a ByteArray (UTF-8, invalid sequences replaced) or String item, with trailing NUL
 * characters trimmed; undefined for other types.
 */
export function stackItemToText(item: NeoStackItem): string | undefined {
  if (item.type === 'String') return item.value.replace(/\0+$/, '');
  if (item.type === 'ByteArray') return bytesToUtf8(hexToBytes(item.value)).replace(/\0+$/, '');
  return undefined;
}

/** True when a VM state text (`HALT, BREAK`, `FAULT, BREAK`, `FAULT`) names FAULT. */
export function isFaultState(state: string): boolean {
  return state.split(/[\s,]+/).includes('FAULT');
}

/** A VM state as nodes write it: flag names joined by `, ` (or a bare name). */
export function isVmStateText(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Z]+(?:, ?[A-Z]+)*$/.test(value);
}

/**
 * Validates an `invokefunction` / `invokescript` / `invoke` result. A FAULTed run may come
 * without a stack; that reads as an empty stack.
 */
export function parseInvokeResult(raw: unknown, what = 'invoke result'): NeoInvokeResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidStackItemError(`${what} is not an object`);
  }
  const r = raw as { state?: unknown; gas_consumed?: unknown; stack?: unknown; script?: unknown };
  if (!isVmStateText(r.state)) throw new InvalidStackItemError(`${what}: state is not a VM state`);
  const faulted = isFaultState(r.state);
  let stack: NeoStackItem[];
  if (Array.isArray(r.stack)) stack = r.stack.map((item, i) => parseStackItem(item, `${what}.stack[${i}]`));
  else if ((r.stack === undefined || r.stack === null) && faulted) stack = [];
  else throw new InvalidStackItemError(`${what}: stack is not an array`);
  let gasConsumed: bigint | null = null;
  if (r.gas_consumed !== undefined && r.gas_consumed !== null) {
    const gas = parseFixed8(r.gas_consumed);
    if (gas === undefined) throw new InvalidStackItemError(`${what}: gas_consumed is not a Fixed8 amount`);
    gasConsumed = gas;
  }
  let script: string | null = null;
  if (r.script !== undefined && r.script !== null) {
    if (!isHex(r.script)) throw new InvalidStackItemError(`${what}: script is not hex`);
    script = r.script.toLowerCase();
  }
  return { state: r.state, faulted, gasConsumed, stack, script };
}
