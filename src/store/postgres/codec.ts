/**
 * Exact encodings between the Store interface's strings and PostgreSQL columns.
 *
 * Addresses and hashes live in `bytea` columns. `0x` + lower-case hex (every EVM address and
 * hash) is stored as its bytes; anything else (NEO base58 addresses, `""`, upper-case or
 * odd-length hex) must round-trip too, so the encoding is tagged where it has to be:
 *
 * | value                                  | stored bytes            |
 * |----------------------------------------|-------------------------|
 * | lower-case hex, first byte ≠ 00        | the bytes               |
 * | lower-case hex, first byte = 00        | `00 01` + the bytes     |
 * | any other string                       | `00 00` + UTF-8         |
 *
 * The encoding is injective, and `bytea` order (memcmp) over it equals SQLite's order over
 * codec.ts of the SQLite store: other strings first (byte order of their UTF-8), then hex values
 * in byte order, so `ORDER BY address` agrees between the backends. Only addresses that start
 * with a zero byte (the zero address, 1/256 of the rest) pay two bytes.
 *
 * Single values cross the wire in PostgreSQL's text form of `bytea` (`\x` + hex); arrays are
 * built from the hex digits by binary-arrays.ts.
 *
 * Below the value encodings: the rows the store's statements select (statements.ts), and their
 * mapping to the Store interface's records.
 */
import { decodeChainStatus, decodeTokenRow, type TokenColumns, type TokenDecoders } from '../rows.js';
import type { AddressHolding, ChainStatus, TokenLabel, TokenRecord, TransferRecord } from '../types.js';

const LOWER_HEX = /^0x(?:[0-9a-f]{2})+$/;

/** The hex digits (no `\x`) of the stored bytes of `value`. */
export function encodeHexDigits(value: string): string {
  if (LOWER_HEX.test(value)) {
    return value.startsWith('0x00') ? `0001${value.slice(2)}` : value.slice(2);
  }
  return `0000${Buffer.from(value, 'utf8').toString('hex')}`;
}

/** `value` as a `bytea` parameter in text form (`\x…`). */
export function encodeHex(value: string): string {
  return `\\x${encodeHexDigits(value)}`;
}

/**
 * Inverse of {@link encodeHex}, from the text form PostgreSQL sends for `bytea` (`\x…`): the
 * store's pools hand `bytea` columns over unparsed, so no Buffer is built per address read.
 */
export function decodeHex(stored: string): string {
  if (!stored.startsWith('\\x')) throw new TypeError('unexpected bytea text form (expected hex output)');
  if (!stored.startsWith('\\x00')) return `0x${stored.slice(2)}`;
  const tag = stored.slice(4, 6);
  if (tag === '01') return `0x${stored.slice(6)}`;
  if (tag === '00') return Buffer.from(stored.slice(6), 'hex').toString('utf8');
  throw new TypeError(`unexpected stored address/hash tag ${tag}`);
}

/**
 * Text for a `bytea` column that holds free text (token names and symbols): PostgreSQL `text`
 * cannot hold NUL, which a hostile token's `name()` may return, so these are stored as their
 * UTF-8 bytes, exactly as SQLite keeps them.
 */
export function encodeText(value: string): string {
  return `\\x${Buffer.from(value, 'utf8').toString('hex')}`;
}

/** Inverse of {@link encodeText}. */
export function decodeText(stored: string): string {
  if (!stored.startsWith('\\x')) throw new TypeError('unexpected bytea text form (expected hex output)');
  return Buffer.from(stored.slice(2), 'hex').toString('utf8');
}

/** An amount from a `numeric` column, which arrives as exact decimal text. */
export function decodeAmount(stored: string): bigint {
  return BigInt(stored);
}

/** {@link decodeAmount} for nullable columns. */
export function decodeNullableAmount(stored: string | null): bigint | null {
  return stored === null ? null : BigInt(stored);
}

/** A `chains` row as `getChain` and `listChains` select it. */
export interface ChainRow {
  chain: string;
  indexed_block: number | null;
  indexed_hash: string | null;
  head: number;
  last_error: string | null;
  updated_at: number;
  writer_epoch: number;
  writer_id: string | null;
  writer_since: number | null;
  seed_block: number | null;
  holders_partial: boolean;
  /** The block before a bulk load that waits for its build (bulk-load.ts); null: none. */
  bulk_block: number | null;
}

/** A `tokens` row as `getToken` and `listTokens` select it. */
export type TokenRow = TokenColumns<string, string, string | null>;

/** How the token columns decode (see `decodeTokenRow`). */
const TOKEN_DECODERS: TokenDecoders<string, string, string | null> = {
  address: decodeHex,
  text: decodeText,
  amount: decodeNullableAmount,
};

export function toChainStatus(row: ChainRow): ChainStatus {
  const writer =
    row.writer_epoch > 0
      ? { id: row.writer_id ?? '', epoch: row.writer_epoch, since: row.writer_since ?? 0 }
      : undefined;
  const status = decodeChainStatus(row, row.holders_partial, writer);
  // A bulk load's transfers, balances and address views are as of the block before it until its build.
  if (row.bulk_block !== null) status.balancesBlock = row.bulk_block;
  return status;
}

/** A balance row's holding, as the address statements select it beside a token. */
export interface HoldingColumns {
  holding_amount: string;
  holding_transfers: number;
}

export function toHolding(row: HoldingColumns): AddressHolding {
  return { balance: decodeAmount(row.holding_amount), transferCount: Number(row.holding_transfers) };
}

/** A transfer row as `listTransfers` and `scanTransfers` select it. */
export interface TransferRow {
  block_number: number;
  log_index: number;
  tx_index: number;
  tx_hash: string;
  from_addr: string;
  to_addr: string;
  value: string;
  time: number;
}

export function transferOfRow(token: string, row: TransferRow): TransferRecord {
  return {
    token,
    blockNumber: row.block_number,
    logIndex: row.log_index,
    txIndex: row.tx_index,
    txHash: decodeHex(row.tx_hash),
    from: decodeHex(row.from_addr),
    to: decodeHex(row.to_addr),
    value: decodeAmount(row.value),
    time: row.time,
  };
}

/** A `tokens` row as `listAddressBalances` selects it: the label only. */
export type TokenLabelRow = Pick<TokenRow, 'address' | 'name' | 'symbol' | 'decimals'>;

export function toTokenLabel(chain: string, row: TokenLabelRow): TokenLabel {
  return {
    chain,
    address: decodeHex(row.address),
    name: decodeText(row.name),
    symbol: decodeText(row.symbol),
    decimals: row.decimals,
  };
}

export function toTokenRecord(chain: string, row: TokenRow): TokenRecord {
  return decodeTokenRow(chain, row, TOKEN_DECODERS);
}

/** `text` cannot hold NUL; an error message is for reading, so NUL becomes U+FFFD there. */
export function storableMessage(message: string | null): string | null {
  return message === null ? null : message.replaceAll('\0', '\uFFFD');
}
