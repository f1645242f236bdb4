/**
 * Stored rows → the records of types.ts, for what both backends select alike: the same columns,
 * each backend decoding its own encodings (codec.ts of each).
 */
import type { ChainStatus, ChainWriter, NeoTokenRecord, TokenRecord } from './types.js';

/** The columns of a `chains` row both backends keep alike. */
export interface ChainStatusColumns {
  chain: string;
  head: number;
  indexed_block: number | null;
  last_error: string | null;
  updated_at: number;
  seed_block: number | null;
}

/**
 * The status of a chain from its row; `holdersPartial` as the backend keeps it, `writer` where
 * the backend elects writers and one was elected. Optional fields stay absent where unset.
 */
export function decodeChainStatus(
  row: ChainStatusColumns,
  holdersPartial: boolean,
  writer?: ChainWriter,
): ChainStatus {
  const status: ChainStatus = {
    chain: row.chain,
    head: row.head,
    indexed: row.indexed_block,
    lastError: row.last_error,
    updatedAt: row.updated_at,
  };
  if (writer !== undefined) status.writer = writer;
  if (row.seed_block !== null) status.seedBlock = row.seed_block;
  if (holdersPartial) status.holdersPartial = true;
  return status;
}

/** A `tokens` row as the reads select it: `Bytes` an address, `Text` a name or symbol, `Amount` a nullable amount. */
export interface TokenColumns<Bytes, Text, Amount> {
  address: Bytes;
  name: Text;
  symbol: Text;
  decimals: number;
  total_supply: Amount;
  cap: Amount;
  burned_balance: Amount;
  holder_count: number;
  transfer_count: number;
  first_block: number;
  icon: string;
}

/** How a backend decodes the columns of {@link TokenColumns}. */
export interface TokenDecoders<Bytes, Text, Amount> {
  address(value: Bytes): string;
  text(value: Text): string;
  amount(value: Amount): bigint | null;
}

export function decodeTokenRow<Bytes, Text, Amount>(
  chain: string,
  row: TokenColumns<Bytes, Text, Amount>,
  decode: TokenDecoders<Bytes, Text, Amount>,
): TokenRecord {
  return {
    chain,
    address: decode.address(row.address),
    name: decode.text(row.name),
    symbol: decode.text(row.symbol),
    decimals: row.decimals,
    totalSupply: decode.amount(row.total_supply),
    cap: decode.amount(row.cap),
    burnedBalance: decode.amount(row.burned_balance),
    holderCount: row.holder_count,
    transferCount: row.transfer_count,
    firstBlock: row.first_block,
    icon: row.icon,
  };
}

/** The NEO facts a token read joins to the `tokens` row (asset facts and contract deployments). */
export interface NeoTokenColumns {
  asset_type: string | null;
  registered_time: number | null;
  registrar: string | null;
  contract_time: number | null;
  contract_owner: string | null;
}

/** A NEP-5 hash is 20 bytes; asset ids are 32. */
const NEP5_HASH = /^0x[0-9a-f]{40}$/;

/** `token` (a NEP-5 contract or a global asset) with its NEO fields from `row`. */
export function withNeoFields(token: TokenRecord, row: NeoTokenColumns): NeoTokenRecord {
  const nep5 = NEP5_HASH.test(token.address);
  return {
    ...token,
    // An asset row always gets its type with its metadata; `Token` only if a row predates that.
    category: nep5 ? 'NEP5' : (row.asset_type ?? 'Token'),
    createdAt: nep5 ? row.contract_time : row.registered_time,
    creator: nep5 ? row.contract_owner : row.registrar,
  };
}
