/**
 * EVM family supply operations: bare decimal numbers as text/plain (errors stay envelopes).
 * Values are the node's readings at the indexed head, kept in the store by the indexer.
 */
import type { FastifyInstance } from 'fastify';
import { formatUnits } from '../../internal/amount.js';
import type { TokenRecord } from '../../store/types.js';
import { sendBareNumber } from '../envelope.js';
import { noData } from '../errors.js';
import { parseEvmAddress } from '../params.js';
import { pathParams, type RouteContext, registerOperation, requireEvmChain } from '../routing.js';
import { findToken } from './evm-tokens.js';

/** Raw supply of one kind; `totalSupply` is known when this is called. */
type SupplyOf = (token: TokenRecord, totalSupply: bigint) => bigint;

const SUPPLIES: Record<string, SupplyOf> = {
  totalsupply: (_token, total) => total,
  maxsupply: (token, total) => token.cap ?? total,
  // Burned balances are node readings; a token could report less supply than it burned, so clamp at 0.
  circulatingsupply: (token, total) => {
    const circulating = total - (token.burnedBalance ?? 0n);
    return circulating < 0n ? 0n : circulating;
  },
};

export function evmSupplyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  for (const [kind, supplyOf] of Object.entries(SUPPLIES)) {
    registerOperation(app, ctx, {
      url: `/vipapi/token/${kind}/:chain/:address`,
      async handler(request, reply) {
        const params = pathParams<'chain' | 'address'>(request);
        const chain = requireEvmChain(ctx, params.chain);
        const token = await findToken(ctx, chain, parseEvmAddress(params.address));
        // A token whose totalSupply() cannot be read has no supply figures at all.
        if (token.totalSupply === null) throw noData();
        return sendBareNumber(reply, formatUnits(supplyOf(token, token.totalSupply), token.decimals));
      },
    });
  }
}
