/**
 * EVM family supply operations: bare decimal numbers as text/plain (errors stay envelopes).
 * Values are the node's readings at the indexed head, kept in the store by the indexer.
 */
import type { FastifyInstance } from 'fastify';
import { formatUnits } from '../../internal/amount.js';
import type { TokenRecord } from '../../store/types.js';
import { sendBareNumber } from '../envelope.js';
import { noData } from '../errors.js';
import { ALL_IN_BAND, type OperationDoc, supplyNote } from '../operation-doc.js';
import { parseEvmAddress } from '../params.js';
import { pathParams, type RouteContext, registerOperation, requireEvmChain } from '../routing.js';
import { findToken } from './evm-tokens.js';

/** Raw supply of one kind; `totalSupply` is known when this is called. */
type SupplyOf = (token: TokenRecord, totalSupply: bigint) => bigint;

const supplyDoc = (operationId: string, summary: string, what: string): OperationDoc => ({
  operationId,
  summary,
  family: 'EVM',
  description: supplyNote(what),
  body: 'number',
  errors: ALL_IN_BAND,
});

/** Each supply operation, by its path segment: its figure and its documentation. */
const SUPPLIES: Record<string, { of: SupplyOf; doc: OperationDoc }> = {
  totalsupply: {
    of: (_token, total) => total,
    doc: supplyDoc('evmTotalSupply', 'Total Supply', '`totalSupply()` at the indexed head'),
  },
  maxsupply: {
    of: (token, total) => token.cap ?? total,
    doc: supplyDoc(
      'evmMaxSupply',
      'Max Supply',
      'The cap (`cap()`) when the token has one, else the total supply',
    ),
  },
  circulatingsupply: {
    // Burned balances are node readings; a token could report less supply than it burned, so clamp at 0.
    of: (token, total) => {
      const circulating = total - (token.burnedBalance ?? 0n);
      return circulating < 0n ? 0n : circulating;
    },
    doc: supplyDoc(
      'evmCirculatingSupply',
      'Circulating Supply',
      'The total supply less the balances of the burn addresses `0x0…0` and `0x0…dead` (never below 0)',
    ),
  },
};

export function evmSupplyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  for (const [kind, { of: supplyOf, doc }] of Object.entries(SUPPLIES)) {
    registerOperation(app, ctx, {
      url: `/vipapi/token/${kind}/:chain/:address`,
      doc,
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
