/**
 * A reader for NEO 2.x VM scripts, enough to find the contract and asset deployments an
 * InvocationTransaction makes: it walks the opcodes (skipping their operands exactly), keeps
 * the values the script pushes, and reports each SYSCALL with the pushed values beneath it.
 * It does not execute anything: values computed at run time read as unknown.
 */
import { bytesToHex, leBytesToBigInt } from './bytes.js';

/** A value the script pushed literally: bytes, or unknown when something else produced it. */
export type PushedValue = { bytes: Uint8Array } | { unknown: true };

/** A SYSCALL seen in a script, with the literal stack beneath it (top of stack last). */
export interface SyscallSite {
  /** Interop name, e.g. `Neo.Contract.Create`. */
  name: string;
  /** Byte offset of the SYSCALL opcode. */
  offset: number;
  /** What the script pushed before it, bottom first; the last item is the top of the stack. */
  stack: PushedValue[];
}

/** A script that cannot be read (an operand runs past the end). */
export class MalformedScriptError extends Error {
  override name = 'MalformedScriptError';
}

const PUSH0 = 0x00;
const PUSHDATA1 = 0x4c;
const PUSHDATA2 = 0x4d;
const PUSHDATA4 = 0x4e;
const PUSHM1 = 0x4f;
const PUSH1 = 0x51;
const PUSH16 = 0x60;
const NOP = 0x61;
const SYSCALL = 0x68;

/** Operand sizes of the opcodes that have fixed-size operands (NEO 2.x VM). */
const FIXED_OPERANDS = new Map<number, number>([
  [0x62, 2], // JMP
  [0x63, 2], // JMPIF
  [0x64, 2], // JMPIFNOT
  [0x65, 2], // CALL
  [0x67, 20], // APPCALL
  [0x69, 20], // TAILCALL
  [0xe0, 4], // CALL_I
  [0xe1, 22], // CALL_E
  [0xe2, 2], // CALL_ED
  [0xe3, 22], // CALL_ET
  [0xe4, 2], // CALL_EDT
]);

/**
 * Every SYSCALL of `script`, each with the values pushed before it. Pushes are tracked across
 * the whole script; any other opcode makes the tracked stack unknown from then on (its effect
 * on the stack is not modelled), except NOP. A SYSCALL consumes nothing from the tracked stack
 * (its arity differs per interop); callers take what they need from the top.
 */
export function findSyscalls(script: Uint8Array): SyscallSite[] {
  const sites: SyscallSite[] = [];
  let stack: PushedValue[] = [];
  let pc = 0;
  const need = (n: number) => {
    if (pc + n > script.length) {
      throw new MalformedScriptError(`operand at offset ${pc} runs past the end of the script`);
    }
  };
  const take = (n: number): Uint8Array => {
    need(n);
    const bytes = script.subarray(pc, pc + n);
    pc += n;
    return bytes;
  };
  const readLength = (size: 1 | 2 | 4): number => {
    const bytes = take(size);
    let n = 0;
    for (let i = size - 1; i >= 0; i--) n = n * 256 + bytes[i]!;
    return n;
  };
  while (pc < script.length) {
    const offset = pc;
    const op = script[pc++]!;
    if (op === PUSH0) stack.push({ bytes: new Uint8Array(0) });
    else if (op <= 0x4b) stack.push({ bytes: take(op) });
    else if (op === PUSHDATA1) stack.push({ bytes: take(readLength(1)) });
    else if (op === PUSHDATA2) stack.push({ bytes: take(readLength(2)) });
    else if (op === PUSHDATA4) stack.push({ bytes: take(readLength(4)) });
    else if (op === PUSHM1) stack.push({ bytes: Uint8Array.of(0xff) });
    else if (op >= PUSH1 && op <= PUSH16) stack.push({ bytes: Uint8Array.of(op - PUSH1 + 1) });
    else if (op === NOP) continue;
    else if (op === SYSCALL) {
      const name = new TextDecoder().decode(take(readVarLength()));
      sites.push({ name, offset, stack: [...stack] });
      // The interop's effect on the stack is not modelled from here on.
      stack = [{ unknown: true }];
    } else {
      const size = FIXED_OPERANDS.get(op);
      if (size !== undefined) take(size);
      stack = [{ unknown: true }];
    }
  }
  return sites;

  function readVarLength(): number {
    need(1);
    const first = script[pc++]!;
    if (first < 0xfd) return first;
    if (first === 0xfd) return readLength(2);
    if (first === 0xfe) return readLength(4);
    throw new MalformedScriptError(`SYSCALL name length at offset ${pc - 1} is too large`);
  }
}

/** The integer a pushed value stands for (little-endian two's complement), or undefined. */
export function pushedInteger(value: PushedValue | undefined): bigint | undefined {
  return value !== undefined && 'bytes' in value ? leBytesToBigInt(value.bytes) : undefined;
}

/** The bytes of a pushed value as bare hex, or undefined. */
export function pushedHex(value: PushedValue | undefined): string | undefined {
  return value !== undefined && 'bytes' in value ? bytesToHex(value.bytes) : undefined;
}
