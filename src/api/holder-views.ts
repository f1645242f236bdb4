/**
 * Token Holders (docs/api.md#token-holders), one shape for both families: the page object
 * `{page, size, total, exact, data}` with `{rank, address, balance, percentage}` entries.
 * `balance` is the raw integer in the token's smallest unit (as transfer `value` is, NEO global
 * assets included: the NEO routes convert the store's Fixed8 sums before they come here), and
 * `percentage` is computed against the total supply in that same unit.
 */
import { formatUnits } from '../internal/amount.js';
import type { HolderEntry, NotExactMark, TokenRecord } from '../store/types.js';
import { envelopeSchema, schema } from './envelope.js';

/** Digits after the point `percentage` keeps (truncated, never rounded). */
const PERCENTAGE_DIGITS = 6;
const PERCENTAGE_SCALE = 10n ** BigInt(PERCENTAGE_DIGITS);

/**
 * `balance` as a share of `totalSupply` in percent: exact decimal text truncated to 6 digits after
 * the point, without trailing zeros, point or exponent (`"85"`, `"12.345678"`, `"0.000001"`, `"0"`);
 * null when the total supply is unknown or zero. Never via floating point.
 */
export function holderPercentage(balance: bigint, totalSupply: bigint | null): string | null {
  if (totalSupply === null || totalSupply <= 0n) return null;
  const share = balance <= 0n ? 0n : (balance * 100n * PERCENTAGE_SCALE) / totalSupply;
  return formatUnits(share, PERCENTAGE_DIGITS);
}

export const holderPageSchema = envelopeSchema(
  schema.object({
    page: schema.integer,
    size: schema.integer,
    total: schema.integer,
    exact: { type: 'boolean' },
    data: schema.array(
      schema.object({
        rank: schema.integer,
        address: schema.string,
        balance: schema.string,
        percentage: schema.nullableString,
      }),
    ),
  }),
);

export interface HolderPageInput {
  page: number;
  size: number;
  /** The token's `holderCnt`. */
  total: number;
  /** Whether the token's balances equal `balanceOf` at the head (docs/api.md#token-holders). */
  exact: boolean;
  /** Offset of the first holder: ranks count from `offset + 1`. */
  offset: number;
  /** Holders in the token's smallest unit, as the page's entries. */
  holders: readonly HolderEntry[];
  /** Total supply in the same unit; null when unknown. */
  totalSupply: bigint | null;
}

export function holderPage(input: HolderPageInput) {
  return {
    page: input.page,
    size: input.size,
    total: input.total,
    exact: input.exact,
    data: input.holders.map((holder, i) => ({
      rank: input.offset + i + 1,
      address: holder.address,
      balance: holder.balance.toString(),
      percentage: holderPercentage(holder.balance, input.totalSupply),
    })),
  };
}

/**
 * The holder page of `token`: `total` is its `holderCnt`, `percentage` is against its total
 * supply, and `exact` is decided here for both families: false exactly when the token carries a
 * not-exact mark (`StoreReader.getNotExact`; docs/api.md#token-holders, docs/reliability.md).
 */
export function tokenHolderPage(
  token: Pick<TokenRecord, 'holderCount' | 'totalSupply'>,
  paging: { page: number; size: number; offset: number },
  holders: readonly HolderEntry[],
  notExact: NotExactMark | null,
) {
  return holderPage({
    ...paging,
    total: token.holderCount,
    exact: notExact === null,
    holders,
    totalSupply: token.totalSupply,
  });
}
