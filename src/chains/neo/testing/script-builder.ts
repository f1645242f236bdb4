/**
 * Writes NEO 2.x VM scripts the way the SDKs do (neon-js `ScriptBuilder`, neo-python's
 * `ScriptBuilder`), for tests of the script reader: minimal pushes, then SYSCALL / APPCALL.
 */

/** Pushes and calls, appended in order; `hex()` is the script. */
export class ScriptBuilder {
  private readonly parts: Buffer[] = [];

  /** Pushes bytes with the shortest opcode (PUSHBYTESn, PUSHDATA1/2/4). */
  pushBytes(bytes: Uint8Array): this {
    const n = bytes.length;
    if (n <= 0x4b) this.parts.push(Buffer.from([n]));
    else if (n <= 0xff) this.parts.push(Buffer.from([0x4c, n]));
    else if (n <= 0xffff) this.parts.push(Buffer.from([0x4d, n & 0xff, n >> 8]));
    else {
      const size = Buffer.alloc(4);
      size.writeUInt32LE(n);
      this.parts.push(Buffer.from([0x4e]), size);
    }
    this.parts.push(Buffer.from(bytes));
    return this;
  }

  pushText(text: string): this {
    return this.pushBytes(Buffer.from(text, 'utf8'));
  }

  pushHex(hex: string): this {
    return this.pushBytes(Buffer.from(hex, 'hex'));
  }

  /** Pushes an integer: PUSH0, PUSHM1, PUSH1..16, else its little-endian bytes. */
  pushInt(n: number): this {
    if (n === 0) this.parts.push(Buffer.from([0x00]));
    else if (n === -1) this.parts.push(Buffer.from([0x4f]));
    else if (n >= 1 && n <= 16) this.parts.push(Buffer.from([0x50 + n]));
    else {
      const bytes: number[] = [];
      let v = n;
      while (v > 0) {
        bytes.push(v & 0xff);
        v >>= 8;
      }
      if ((bytes[bytes.length - 1]! & 0x80) !== 0) bytes.push(0);
      this.pushBytes(Uint8Array.from(bytes));
    }
    return this;
  }

  pushBool(value: boolean): this {
    return this.pushInt(value ? 1 : 0);
  }

  syscall(name: string): this {
    const bytes = Buffer.from(name, 'ascii');
    this.parts.push(Buffer.from([0x68, bytes.length]), bytes);
    return this;
  }

  /** APPCALL of a contract hash given `0x` big-endian (the script holds it little-endian). */
  appcall(hash: string): this {
    this.parts.push(Buffer.from([0x67]), Buffer.from(hash.replace(/^0x/, ''), 'hex').reverse());
    return this;
  }

  raw(hex: string): this {
    this.parts.push(Buffer.from(hex, 'hex'));
    return this;
  }

  hex(): string {
    return Buffer.concat(this.parts).toString('hex');
  }
}

/** The arguments of `Neo.Contract.Create`. */
export interface CreateArgs {
  script: string;
  parameterList: string;
  returnType: number;
  properties: number;
  name: string;
  version: string;
  author: string;
  email: string;
  description: string;
}

/** A deployment script: arguments pushed last-popped first, then the SYSCALL. */
export function createContractScript(args: CreateArgs, syscall = 'Neo.Contract.Create'): string {
  return new ScriptBuilder()
    .pushText(args.description)
    .pushText(args.email)
    .pushText(args.author)
    .pushText(args.version)
    .pushText(args.name)
    .pushInt(args.properties)
    .pushInt(args.returnType)
    .pushHex(args.parameterList)
    .pushHex(args.script)
    .syscall(syscall)
    .hex();
}
