/**
 * The EVM family's Tokenview shapes: each builder sits beside the schema that serializes it,
 * so key sets and JSON types cannot drift apart. Types follow docs/api.md#json-types: `d`, `t`, `ic`,
 * `value` are strings; counts, `index`, `block_no`, `time`, `conformations` are numbers.
 */
import { formatUnits } from '../internal/amount.js';
import type { AddressBalance, TokenLabel, TokenPage, TokenRecord, TransferRecord } from '../store/types.js';
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

/** A character JSON text cannot hold as is (fast-json-stringify's test). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what must be escaped.
const NEEDS_ESCAPE = /[\u0000-\u001f\u0022\u005c\ud800-\udfff]/;

/** JSON text of a string that holds no character of {@link NEEDS_ESCAPE}. */
const quoteSafe = (value: string): string => `"${value}"`;

/**
 * JSON text of a string, exactly as the schema serializer writes it: fast-json-stringify quotes
 * a string with nothing to escape and hands any other to `JSON.stringify`, which escapes as it does.
 */
export const jsonString = (value: string): string =>
  NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : quoteSafe(value);

/**
 * The Transaction List's `data` as JSON text, built by hand: byte for byte what the route's
 * schema (`transferListSchema`) makes of {@link transferList}'s objects, which a test checks on
 * hostile strings too. Why by hand (faster than the schema serializer; docs/benchmarks.md, "Where
 * the time goes"): the token's six fields are the same in every record, so they are escaped once
 * per page instead of once per record; the records' own strings (hash, from, to: hex in practice)
 * are checked with one regular-expression scan over all of them rather than one escape pass per
 * string, and go through `JSON.stringify` (which escapes exactly as fast-json-stringify does) only
 * when that scan finds something; and no intermediate objects are made.
 */
export function transferListJson(token: TokenLabel, transfers: TransferRecord[], head: number): string {
  let own = '';
  for (const t of transfers) own += t.txHash + t.from + t.to;
  const quote = NEEDS_ESCAPE.test(own) ? JSON.stringify : quoteSafe;
  const address = JSON.stringify(token.address);
  const symbol = JSON.stringify(token.symbol);
  const decimals = JSON.stringify(String(token.decimals));
  // The constant runs between a record's own fields, in the schema's key order.
  const afterBlock = `,"token":${address},"tokenAddr":${address},"tokenSymbol":${symbol},"tokenDecimals":${decimals},"time":`;
  const afterTxid = `,"tokenInfo":{"h":${address},"f":${JSON.stringify(token.name)},"s":${symbol},"d":${decimals}},"from":`;
  let json = '[';
  for (let i = 0; i < transfers.length; i++) {
    const t = transfers[i]!;
    const confirmations = Math.max(head, t.blockNumber) - t.blockNumber + 1;
    json +=
      `${i === 0 ? '' : ','}{"index":${t.txIndex},"block_no":${t.blockNumber}${afterBlock}${t.time},` +
      `"txid":${quote(t.txHash)}${afterTxid}${quote(t.from)},"to":${quote(t.to)},` +
      `"value":"${t.value}","conformations":${confirmations}}`;
  }
  return `${json}]`;
}

/**
 * The Transaction List's records as objects, the shape `transferListSchema` describes; the
 * reference for {@link transferListJson}. `head` is the newest block the indexer has seen;
 * confirmations never drop below 1, even if it lags a record.
 */
export function transferList(token: TokenLabel, transfers: TransferRecord[], head: number) {
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

// ---- Address Token Balance(s) ----

/**
 * What an address balance shows: the store's balance, never below zero. A balance computed from
 * transfers is negative while a late start has not seeded the holder; `balanceOf` never is.
 */
export const shownBalance = (balance: bigint): bigint => (balance < 0n ? 0n : balance);

export const balanceListSchema = envelopeSchema(
  schema.array(
    schema.object({
      network: schema.string,
      hash: schema.string,
      tokenInfo: schema.object({ h: schema.string, f: schema.string, s: schema.string, d: schema.string }),
      transferCnt: schema.integer,
      balance: schema.string,
    }),
  ),
);

/**
 * Balance entries: `balance` is the raw integer in the token's smallest unit, as `value` is. The
 * reference for {@link balanceListJson}, which the routes send.
 */
export function balanceList(entries: readonly AddressBalance[]) {
  return entries.map(({ token, balance, transferCount }) => ({
    network: token.chain.toUpperCase(),
    hash: token.address,
    tokenInfo: { h: token.address, f: token.name, s: token.symbol, d: String(token.decimals) },
    transferCnt: transferCount,
    balance: shownBalance(balance).toString(),
  }));
}

/**
 * {@link balanceList}'s entries as JSON text, built by hand: byte for byte what `balanceListSchema`
 * makes of them, which a test checks on hostile strings too. Why by hand: an address may hold
 * 10,000 tokens (2.3 MB of JSON), and building an object per entry and its `tokenInfo` for the
 * schema serializer to walk cost about as much as reading them from the store (docs/benchmarks.md,
 * "Address Token Balances: the read"). Each string is checked once and quoted as is unless it
 * needs escaping; `network` is made once per chain, not once per entry.
 */
export function balanceListJson(entries: readonly AddressBalance[]): string {
  let chain: string | undefined;
  let network = '';
  let json = '[';
  for (let i = 0; i < entries.length; i++) {
    const { token, balance, transferCount } = entries[i]!;
    if (token.chain !== chain) {
      chain = token.chain;
      network = jsonString(chain.toUpperCase());
    }
    const hash = jsonString(token.address);
    json +=
      `${i === 0 ? '' : ','}{"network":${network},"hash":${hash},"tokenInfo":{"h":${hash},` +
      `"f":${jsonString(token.name)},"s":${jsonString(token.symbol)},"d":"${token.decimals}"},` +
      `"transferCnt":${transferCount},"balance":"${shownBalance(balance)}"}`;
  }
  return `${json}]`;
}
