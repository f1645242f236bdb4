/**
 * Amounts in a bulk load's build (bulk-build.ts): the SQL functions that sum a group's values
 * exactly, and a stored value as a BigInt.
 */
import type Database from 'better-sqlite3';
import { decodeAmount, encodeAmount, type SqlValue } from './codec.js';

/**
 * The build's balance functions, each result encoded as codec.ts stores amounts.
 * `tq_negated(value)`: minus a stored value. `tq_net_amount(list)`: the exact sum of a group's
 * signed values, given as `group_concat` text: per value `0` (a self-transfer), or `+`/`-` then the
 * decimal digits of an INTEGER, `x` and the hex digits of a BLOB, or `t` and a TEXT amount.
 */
export function registerNetAmount(db: Database.Database): void {
  db.function('tq_negated', { deterministic: true }, (value: SqlValue) => encodeAmount(-amountOf(value)));
  db.function('tq_net_amount', { deterministic: true }, (list: string) => {
    let total = 0n;
    for (const item of list.split(',')) {
      const sign = item.charCodeAt(0);
      if (sign === ZERO_SIGN) continue;
      const kind = item.charCodeAt(1);
      const value =
        kind === HEX_KIND
          ? item.length === 2
            ? 0n
            : BigInt(`0x${item.slice(2)}`)
          : BigInt(kind === TEXT_KIND ? item.slice(2) : item.slice(1));
      total = sign === PLUS_SIGN ? total + value : total - value;
    }
    return encodeAmount(total);
  });
}

const ZERO_SIGN = '0'.charCodeAt(0);
const PLUS_SIGN = '+'.charCodeAt(0);
const HEX_KIND = 'x'.charCodeAt(0);
const TEXT_KIND = 't'.charCodeAt(0);

/** A stored value as a BigInt; BLOBs of up to 12 bytes without a hex string. */
export function amountOf(value: SqlValue): bigint {
  if (typeof value === 'number') return BigInt(value);
  if (Buffer.isBuffer(value) && value.length > 0 && value.length <= 12) {
    const n = value.length;
    if (n <= 6) return BigInt(value.readUIntBE(0, n));
    return (BigInt(value.readUIntBE(0, n - 6)) << 48n) + BigInt(value.readUIntBE(n - 6, 6));
  }
  return decodeAmount(value);
}
