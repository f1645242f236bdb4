/**
 * The writer's fast path for the common rows of a batch: transfers and balances whose hashes
 * and addresses are lower-case hex and whose value is not negative (every EVM row), buffered
 * into the statements of `prepareHexStatements` and stored exactly as `encodeHex` and
 * `encodeAmount` (codec.ts) would store them. Anything else returns false and goes through the
 * general statements.
 */

import { NON_HOLDERS } from '../batch-plan.js';
import type { TransferRecord } from '../types.js';
import { amountHexDigits, isLowerHex, rankHexDigits } from './codec.js';
import type { HexStatements } from './statements.js';

/** Addresses whose bytes the writer keeps at most (see `bytesOfAddress`). */
const ADDRESS_BYTES_KEPT = 200_000;

/** The writer's buffered rows of lower-case-hex transfers and balances. */
export interface HexRows {
  /**
   * The bytes of `address`, or null for one that is not lower-case hex (stored by the general
   * statements). Kept for the addresses written lately.
   */
  bytesOfAddress(address: string): Buffer | null;
  /**
   * Inserts a transfer whose hash is given as its hex digits (without `0x`), its addresses as
   * their bytes, and whose value is not negative. Positional, so the columnar path
   * (`applyWireTx`) makes no object per row.
   */
  insertHexRow(
    id: number,
    block: number,
    logIndex: number,
    txIndex: number,
    hashDigits: string,
    fromBytes: Buffer,
    toBytes: Buffer,
    value: bigint,
    time: number,
  ): void;
  /** Writes the rows {@link insertHexRow} has buffered; before the transaction ends. */
  flushHexRows(): void;
  /** Inserts `t` (buffered), or returns false for the general statement. */
  insertIfHex(id: number, t: TransferRecord): boolean;
  /**
   * Buffers the balance's write (its amount, and what `transfers` adds to its transfer count), or
   * returns false for the general statement. Each holder once per
   * flush, so no two rows of one statement name the same key.
   */
  upsertIfHex(id: number, holder: string, amount: bigint, transfers: number): boolean;
  /** Writes the balances {@link upsertIfHex} has buffered. */
  flushBalanceRows(): void;
  /** Drops rows buffered by a transaction that failed before writing them. */
  discardBufferedRows(): void;
}

export function createHexRows(statements: HexStatements): HexRows {
  const { insertTransfer: insertHexTransfer, upsertBalance: upsertHexBalance } = statements;
  // A backfill names the same holders in batch after batch: each address's bytes are made once
  // (binding them costs less than `unhex()` of digits), and checking each one with the regular
  // expression had cost a noticeable share of the writer (docs/benchmarks.md). Emptied when it
  // reaches ADDRESS_BYTES_KEPT entries (about 150 bytes each).
  const addressBytes = new Map<string, Buffer | null>();
  const bytesOfAddress = (address: string): Buffer | null => {
    let bytes = addressBytes.get(address);
    if (bytes === undefined) {
      if (addressBytes.size >= ADDRESS_BYTES_KEPT) addressBytes.clear();
      bytes = isLowerHex(address) ? Buffer.from(address.slice(2), 'hex') : null;
      addressBytes.set(address, bytes);
    }
    return bytes;
  };
  const insertHexRow = (
    id: number,
    block: number,
    logIndex: number,
    txIndex: number,
    hashDigits: string,
    fromBytes: Buffer,
    toBytes: Buffer,
    value: bigint,
    time: number,
  ): void => {
    const small = value <= 9007199254740991n;
    const rows = small ? insertHexTransfer.integerValue : insertHexTransfer.blobValue;
    const at = rows.next();
    const p = rows.params;
    p[at] = id;
    p[at + 1] = block;
    p[at + 2] = logIndex;
    p[at + 3] = txIndex;
    p[at + 4] = hashDigits;
    p[at + 5] = fromBytes;
    p[at + 6] = toBytes;
    p[at + 7] = small ? value : amountHexDigits(value);
    p[at + 8] = time;
  };
  return {
    bytesOfAddress,
    insertHexRow,
    flushHexRows(): void {
      insertHexTransfer.integerValue.flush();
      insertHexTransfer.blobValue.flush();
    },
    insertIfHex(id: number, t: TransferRecord): boolean {
      const from = bytesOfAddress(t.from);
      const to = bytesOfAddress(t.to);
      if (t.value < 0n || from === null || to === null || !isLowerHex(t.txHash)) return false;
      insertHexRow(id, t.blockNumber, t.logIndex, t.txIndex, t.txHash.slice(2), from, to, t.value, t.time);
      return true;
    },
    upsertIfHex(id: number, holder: string, amount: bigint, transfers: number): boolean {
      const bytes = bytesOfAddress(holder);
      if (amount < 0n || bytes === null) return false;
      const small = amount <= 9007199254740991n;
      const rows = small ? upsertHexBalance.integerAmount : upsertHexBalance.blobAmount;
      const at = rows.next();
      rows.params[at] = id;
      rows.params[at + 1] = bytes;
      rows.params[at + 2] = small ? amount : amountHexDigits(amount);
      rows.params[at + 3] = transfers;
      // The rank (see `rankKey`): NULL unless positive and the holder can hold.
      rows.params[at + 4] =
        amount === 0n || NON_HOLDERS.has(holder) ? null : small ? amount : rankHexDigits(amount);
      return true;
    },
    flushBalanceRows(): void {
      upsertHexBalance.integerAmount.flush();
      upsertHexBalance.blobAmount.flush();
    },
    discardBufferedRows(): void {
      for (const rows of [...Object.values(insertHexTransfer), ...Object.values(upsertHexBalance)]) {
        rows.discard();
      }
    },
  };
}
