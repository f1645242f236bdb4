/**
 * EVM family: Token Info, Token Transaction List and Token List on Chain.
 * Handlers run after routing and the key check; they check the chain, then the parameters,
 * then that the token exists, in that order (docs/api.md#check-order).
 */
import type { FastifyInstance } from 'fastify';
import type { TokenRecord } from '../../store/types.js';
import { okBody, okBodyFromJson, sendCachedOk } from '../envelope.js';
import { noData } from '../errors.js';
import {
  tokenPage,
  tokenPageSchema,
  tokenSummary,
  tokenSummarySchema,
  transferListJson,
  transferListSchema,
} from '../evm-views.js';
import { ALL_IN_BAND, LISTS } from '../operation-doc.js';
import { parseEvmAddress, parsePaging } from '../params.js';
import { headOf, pathParams, type RouteContext, registerOperation, requireEvmChain } from '../routing.js';

/** The token, or 404 `无数据` when the index does not know it. */
export async function findToken(ctx: RouteContext, chain: string, address: string): Promise<TokenRecord> {
  const token = await ctx.store.reader.getToken(chain, address);
  if (token === null) throw noData();
  return token;
}

export function evmTokenRoutes(app: FastifyInstance, ctx: RouteContext): void {
  registerOperation(app, ctx, {
    url: '/vipapi/:chain/token/:address',
    response: tokenSummarySchema,
    doc: {
      operationId: 'evmTokenInfo',
      summary: 'Token Info',
      family: 'EVM',
      description: 'Transfer and holder counts and metadata of a token.',
      errors: ALL_IN_BAND,
    },
    async handler(request, reply) {
      const params = pathParams<'chain' | 'address'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const address = parseEvmAddress(params.address);
      return sendCachedOk(ctx, reply, `info ${chain} ${address}`, async () =>
        okBody(reply, tokenSummary(await findToken(ctx, chain, address))),
      );
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/:chain/token/tokentrans/:address/:page/:size',
    response: transferListSchema,
    doc: {
      operationId: 'evmTransferList',
      summary: 'Token Transaction List',
      family: 'EVM',
      description: 'Transfers of a token, newest first. A page past the end answers code 1 with `data: []`.',
      errors: ALL_IN_BAND,
    },
    async handler(request, reply) {
      const params = pathParams<'chain' | 'address' | 'page' | 'size'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const address = parseEvmAddress(params.address);
      const { offset, size } = parsePaging(params.page, params.size);
      return sendCachedOk(ctx, reply, `transfers ${chain} ${address} ${offset} ${size}`, async () => {
        // Read together; the token check still decides the answer before the list is used.
        const [token, transfers, status] = await Promise.all([
          findToken(ctx, chain, address),
          ctx.store.reader.listTransfers(chain, address, offset, size),
          ctx.store.reader.getChainStatus(chain),
        ]);
        return okBodyFromJson(transferListJson(token, transfers, headOf(status)));
      });
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/:chain/tokens/:page/:size',
    response: tokenPageSchema,
    doc: {
      operationId: 'evmTokenList',
      summary: 'Token List on Chain',
      family: 'EVM',
      description: 'Tokens of a chain, most holders first. A page past the end has `data: []`.',
      errors: LISTS,
    },
    async handler(request, reply) {
      const params = pathParams<'chain' | 'page' | 'size'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const { page, size, offset } = parsePaging(params.page, params.size);
      return sendCachedOk(ctx, reply, `tokens ${chain} ${page} ${size}`, async () =>
        okBody(reply, tokenPage(chain, page, size, await ctx.store.reader.listTokens(chain, offset, size))),
      );
    },
  });
}
