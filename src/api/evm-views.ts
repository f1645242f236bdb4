/**
 * The EVM family's Tokenview shapes: each builder sits beside the schema that serializes it,
 * so key sets and JSON types cannot drift apart. Types follow decisions.md: `d`, `t`, `ic`,
 * `value` are strings; counts, `index`, `block_no`, `time`, `conformations` are numbers.
 */
import { formatUnits } from '../internal/amount.js';
import type { TokenPage, TokenRecord, TransferRecord } from '../store/types.js';
import { envelopeSchema, schema } from './envelope.js';

/** `tokenInfo.t` and the supply bodies: decimal-adjusted total supply, or null when unknown. */
export function totalSupplyText(token: TokenRecord): string | null {
  return token.totalSupply === null ? null : formatUnits(token.totalSupply, token.decimals);
}

// ---- Token Info ----

const tokenInfoFull = schema.object({
  h: schema.string,
  p: schema.string,
  f: schema.string,
  s: schema.string,
  d: schema.string,
  t: schema.nullableString,
});

export const tokenSummarySchema = envelopeSchema(
  schema.object({
    network: schema.string,
    tokenHash: schema.string,
    transferCnt: schema.integer,
    holderCnt: schema.integer,
    tokenInfo: tokenInfoFull,
  }),
);

export function tokenSummary(token: TokenRecord) {
  const network = token.chain.toUpperCase();
  return {
    network,
    tokenHash: token.address,
    transferCnt: token.transferCount,
    holderCnt: token.holderCount,
    tokenInfo: {
      h: token.address,
      p: network,
      f: token.name,
      s: token.symbol,
      d: String(token.decimals),
      t: totalSupplyText(token),
    },
  };
}

// ---- Token Transaction List ----

export const transferListSchema = envelopeSchema(
  schema.array(
    schema.object({
      index: schema.integer,
      block_no: schema.integer,
      token: schema.string,
      tokenAddr: schema.string,
      tokenSymbol: schema.string,
      tokenDecimals: schema.string,
      time: schema.integer,
      txid: schema.string,
      tokenInfo: schema.object({ h: schema.string, f: schema.string, s: schema.string, d: schema.string }),
      from: schema.string,
      to: schema.string,
      value: schema.string,
      conformations: schema.integer,
    }),
  ),
);

/** `head` is the newest block the indexer has seen; confirmations never drop below 1, even if it lags a record. */
export function transferList(token: TokenRecord, transfers: TransferRecord[], head: number) {
  const decimals = String(token.decimals);
  const tokenInfo = { h: token.address, f: token.name, s: token.symbol, d: decimals };
  return transfers.map((t) => ({
    index: t.txIndex,
    block_no: t.blockNumber,
    token: token.address,
    tokenAddr: token.address,
    tokenSymbol: token.symbol,
    tokenDecimals: decimals,
    time: t.time,
    txid: t.txHash,
    tokenInfo,
    from: t.from,
    to: t.to,
    value: t.value.toString(),
    conformations: Math.max(head, t.blockNumber) - t.blockNumber + 1,
  }));
}

// ---- Token List on Chain ----

export const tokenPageSchema = envelopeSchema(
  schema.object({
    page: schema.integer,
    size: schema.integer,
    total: schema.integer,
    data: schema.array(
      schema.object({
        h: schema.string,
        p: schema.string,
        f: schema.string,
        s: schema.string,
        d: schema.string,
        t: schema.nullableString,
        ic: schema.string,
      }),
    ),
  }),
);

export function tokenPage(chain: string, page: number, size: number, result: TokenPage) {
  const p = chain.toUpperCase();
  return {
    page,
    size,
    total: result.total,
    data: result.tokens.map((token) => ({
      h: token.address,
      p,
      f: token.name,
      s: token.symbol,
      d: String(token.decimals),
      t: totalSupplyText(token),
      ic: token.icon,
    })),
  };
}
