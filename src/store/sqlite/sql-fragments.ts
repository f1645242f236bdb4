/**
 * Pieces of SQL the store's statements (statements.ts, address-transfers.ts) are made of: a stored
 * column given back as text JavaScript reads without a Buffer, and the id lookups of a token or an
 * address, which answer nothing for a chain whose bulk load is waiting or being built.
 */

/**
 * SQL giving a column written by `encodeHex` back as its original text: `0x` + lower-case hex for a
 * BLOB, the stored TEXT otherwise. Equal to `decodeHex` of the column, computed by SQLite.
 */
export function hexText(column: string): string {
  return `CASE WHEN typeof(${column}) = 'blob' THEN '0x' || lower(hex(${column})) ELSE ${column} END`;
}

/**
 * SQL giving a column written by `encodeAmount` as something `decodeAmount` reads without a Buffer:
 * a BLOB becomes `0x0` + its hex (`BigInt` reads it; the extra 0 keeps an empty BLOB valid); an
 * INTEGER (a JS number, exact below 2^53), decimal TEXT and NULL pass unchanged.
 */
export function amountText(column: string): string {
  return `CASE WHEN typeof(${column}) = 'blob' THEN '0x0' || hex(${column}) ELSE ${column} END`;
}

/**
 * A chain's transfers, balances and address entries are read only while no bulk load of it is
 * waiting or being built: a load starts on a chain without any, and its build commits in steps
 * (bulk-build.ts), so until the last one the reads answer as before the load. An uncorrelated
 * `NOT IN`: the few chain rows are read once a statement.
 */
export const READABLE = (column: string) =>
  `${column} NOT IN (SELECT chain FROM chains WHERE bulk_block IS NOT NULL)`;

/** The id of an address named by transfers (two parameters: chain, encoded address). */
export const ADDRESS_ID = `(SELECT id FROM addresses WHERE chain = ? AND address = ? AND ${READABLE('chain')})`;
/** The id of a token (two parameters: chain, encoded address). */
export const TOKEN_ID = `(SELECT id FROM tokens WHERE chain = ? AND address = ? AND ${READABLE('chain')})`;
