/**
 * The NEO family's Tokenview shapes, each builder beside the schema that serializes it.
 * Every key docs/api.md shows as `null` is present with `null`; counts, `index`, `block_no`,
 * `time`, `confirmations` and `createTime` are numbers; `d`, `t`, `value` and
 * `circulationSupply` are strings (docs/api.md#json-types).
 *
 * `tokenInfo.p` is null: Tokenview's NEO payloads carry `p: null` (the chain is in `network`).
 * `t` is null in Token Info and in transfer records and the total supply in the asset
 * operations (docs/api.md#neo-t-and-circulationsupply), null there only when the node could not say.
 */
import { fixed8ToAssetUnits } from '../internal/neo.js';
import type {
  AddressBalance,
  NeoContractRecord,
  NeoTokenPage,
  NeoTokenRecord,
  TransferRecord,
} from '../store/types.js';
import { envelopeSchema, type JsonSchema, schema } from './envelope.js';
import { jsonString, shownBalance, totalSupplyText } from './evm-views.js';

/** `network` of every NEO payload. */
export const NEO_NETWORK = 'NEO';

const nullOnly: JsonSchema = { type: 'null' };

/** The NEO token info object with every NEO key (Token Info, transfer records, asset list). */
const neoTokenInfoSchema = schema.object({
  appendixData: nullOnly,
  pending: nullOnly,
  h: schema.string,
  p: nullOnly,
  f: schema.string,
  s: schema.string,
  d: schema.string,
  t: schema.nullableString,
  c: schema.string,
  i: schema.nullableString,
  o: schema.nullableString,
  l: nullOnly,
});

function neoTokenInfo(token: NeoTokenRecord, t: string | null) {
  return {
    appendixData: null,
    pending: null,
    h: token.address,
    p: null,
    f: token.name,
    s: token.symbol,
    d: String(token.decimals),
    t,
    c: token.category,
    i: token.createdAt === null ? null : String(token.createdAt),
    o: token.creator,
    l: null,
  };
}

// ---- Token Info ----

export const neoTokenSummarySchema = envelopeSchema(
  schema.object({
    appendixData: nullOnly,
    pending: nullOnly,
    network: schema.string,
    tokenHash: schema.string,
    transferCnt: schema.integer,
    holderCnt: schema.integer,
    contract: nullOnly,
    circulationSupply: nullOnly,
    tokenInfo: neoTokenInfoSchema,
  }),
);

export function neoTokenSummary(token: NeoTokenRecord) {
  return {
    appendixData: null,
    pending: null,
    network: NEO_NETWORK,
    tokenHash: token.address,
    transferCnt: token.transferCount,
    holderCnt: token.holderCount,
    contract: null,
    circulationSupply: null,
    tokenInfo: neoTokenInfo(token, null),
  };
}

// ---- Assets (Token) Info ----

export const neoAssetSummarySchema = envelopeSchema(
  schema.object({
    network: schema.string,
    tokenHash: schema.string,
    transferCnt: schema.integer,
    holderCnt: schema.integer,
    tokenInfo: schema.object({
      h: schema.string,
      f: schema.string,
      s: schema.string,
      d: schema.string,
      t: schema.nullableString,
      c: schema.string,
      i: schema.nullableString,
      o: schema.nullableString,
    }),
  }),
);

export function neoAssetSummary(token: NeoTokenRecord) {
  return {
    network: NEO_NETWORK,
    tokenHash: token.address,
    transferCnt: token.transferCount,
    holderCnt: token.holderCount,
    tokenInfo: {
      h: token.address,
      f: token.name,
      s: token.symbol,
      d: String(token.decimals),
      t: totalSupplyText(token),
      c: token.category,
      i: token.createdAt === null ? null : String(token.createdAt),
      o: token.creator,
    },
  };
}

// ---- Assets (Token) List On Chain ----

export const neoTokenPageSchema = envelopeSchema(
  schema.object({
    page: schema.integer,
    size: schema.integer,
    total: schema.integer,
    data: schema.array(
      schema.object({
        appendixData: nullOnly,
        pending: nullOnly,
        network: nullOnly,
        tokenHash: nullOnly,
        transferCnt: nullOnly,
        holderCnt: schema.integer,
        contract: nullOnly,
        circulationSupply: schema.nullableString,
        tokenInfo: neoTokenInfoSchema,
      }),
    ),
    appendixData: nullOnly,
    pending: nullOnly,
    note: nullOnly,
  }),
);

export function neoTokenPage(page: number, size: number, result: NeoTokenPage) {
  return {
    page,
    size,
    total: result.total,
    data: result.tokens.map((token) => {
      const supply = totalSupplyText(token);
      return {
        appendixData: null,
        pending: null,
        network: null,
        tokenHash: null,
        transferCnt: null,
        holderCnt: token.holderCount,
        contract: null,
        circulationSupply: supply,
        tokenInfo: neoTokenInfo(token, supply),
      };
    }),
    appendixData: null,
    pending: null,
    note: null,
  };
}

// ---- Token Transaction List ----

export const neoTransferListSchema = envelopeSchema(
  schema.array(
    schema.object({
      index: schema.integer,
      block_no: schema.integer,
      token: nullOnly,
      asset: nullOnly,
      tokenAddr: schema.string,
      tokenSymbol: schema.string,
      tokenDecimals: schema.string,
      time: schema.integer,
      txid: schema.string,
      tokenInfo: neoTokenInfoSchema,
      confirmations: schema.integer,
      type: nullOnly,
      from: schema.string,
      to: schema.string,
      fromAlias: nullOnly,
      toAlias: nullOnly,
      value: schema.string,
      valueIsNft: nullOnly,
      fromIsContract: nullOnly,
      toIsContract: nullOnly,
      amount: nullOnly,
    }),
  ),
);

/** `head` is the newest block seen; confirmations never drop below 1, even if it lags a record. */
export function neoTransferList(token: NeoTokenRecord, transfers: TransferRecord[], head: number) {
  const decimals = String(token.decimals);
  const tokenInfo = neoTokenInfo(token, null);
  return transfers.map((t) => ({
    index: t.txIndex,
    block_no: t.blockNumber,
    token: null,
    asset: null,
    tokenAddr: token.address,
    tokenSymbol: token.symbol,
    tokenDecimals: decimals,
    time: t.time,
    txid: t.txHash,
    tokenInfo,
    confirmations: Math.max(head, t.blockNumber) - t.blockNumber + 1,
    type: null,
    from: t.from,
    to: t.to,
    fromAlias: null,
    toAlias: null,
    value: t.value.toString(),
    valueIsNft: null,
    fromIsContract: null,
    toIsContract: null,
    amount: null,
  }));
}

// ---- Contracts List On Chain ----

export const neoContractListSchema = envelopeSchema(
  schema.array(
    schema.object({
      createTime: schema.integer,
      author: schema.string,
      name: schema.string,
      contractAddress: schema.string,
      ownerAddress: schema.string,
    }),
  ),
);

export function neoContractList(contracts: NeoContractRecord[]) {
  return contracts.map((c) => ({
    createTime: c.time,
    author: c.author,
    name: c.name,
    contractAddress: c.hash,
    // A deployment without a witness has no owner; the field is a string in every shape.
    ownerAddress: c.ownerAddress ?? '',
  }));
}

// ---- Address Token Balance(s) ----

/** A global asset's id is 32 bytes (`0x` + 64 hex); a NEP-5 script hash is 20. */
export const isNeoAssetId = (address: string): boolean => address.length === 66;

/**
 * A balance as the store keeps it → the token's smallest unit, the unit of transfer `value`,
 * `d` and the total supply. The store sums a global asset's unspent outputs in Fixed8 units
 * (10^-8 whatever the asset's precision: 244 NEO is 24400000000); NEP-5 balances are raw already.
 * Never below zero (see {@link shownBalance}).
 */
export function neoBalanceUnits(token: Pick<NeoTokenRecord, 'address' | 'decimals'>, stored: bigint): bigint {
  const balance = shownBalance(stored);
  return isNeoAssetId(token.address) ? fixed8ToAssetUnits(balance, token.decimals) : balance;
}

export const neoBalanceListSchema = envelopeSchema(
  schema.array(
    schema.object({
      network: schema.string,
      hash: schema.string,
      tokenInfo: schema.object({
        h: schema.string,
        f: schema.string,
        s: schema.string,
        d: schema.string,
        c: schema.string,
      }),
      transferCnt: schema.integer,
      balance: schema.string,
    }),
  ),
);

/**
 * NEO balance entries: the EVM entry with `tokenInfo.c`, balances in the token's smallest unit.
 * The reference for {@link neoBalanceListJson}, which the routes send.
 */
export function neoBalanceList(entries: readonly AddressBalance<NeoTokenRecord>[]) {
  return entries.map(({ token, balance, transferCount }) => ({
    network: NEO_NETWORK,
    hash: token.address,
    tokenInfo: {
      h: token.address,
      f: token.name,
      s: token.symbol,
      d: String(token.decimals),
      c: token.category,
    },
    transferCnt: transferCount,
    balance: neoBalanceUnits(token, balance).toString(),
  }));
}

/**
 * {@link neoBalanceList}'s entries as JSON text, built by hand as `balanceListJson` (evm-views.ts)
 * builds the EVM ones, for the same reason (an address may hold many tokens: NEO airdrops were
 * many): byte for byte what `neoBalanceListSchema` makes of them, which a test checks.
 */
export function neoBalanceListJson(entries: readonly AddressBalance<NeoTokenRecord>[]): string {
  const network = jsonString(NEO_NETWORK);
  let json = '[';
  for (let i = 0; i < entries.length; i++) {
    const { token, balance, transferCount } = entries[i]!;
    const hash = jsonString(token.address);
    json +=
      `${i === 0 ? '' : ','}{"network":${network},"hash":${hash},"tokenInfo":{"h":${hash},` +
      `"f":${jsonString(token.name)},"s":${jsonString(token.symbol)},"d":"${token.decimals}",` +
      `"c":${jsonString(token.category)}},"transferCnt":${transferCount},` +
      `"balance":"${neoBalanceUnits(token, balance)}"}`;
  }
  return `${json}]`;
}
