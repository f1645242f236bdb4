/**
 * Paths that exist only in the NEO family. They are routed now, so they already follow the
 * check order (404 only for unknown paths, then the key, then the chain); until the NEO family
 * is implemented `neo` is not a served chain and each answers 50001 `unsupport coin`.
 * The shared shapes (/vipapi/neo/token/..., /vipapi/token/totalsupply/neo/...) go through the
 * EVM routes, which must dispatch to NEO handlers once they exist.
 */
import type { FastifyInstance } from 'fastify';
import { unsupportedCoin } from '../errors.js';
import { type RouteContext, registerOperation } from '../routing.js';

export const NEO_ONLY_PATHS = [
  '/vipapi/neo/asset/:hash',
  '/vipapi/tokens/neo/:page/:size',
  '/vipapi/contracts/neo/:page/:size',
  '/vipapi/token/neo/:hash',
] as const;

export function neoRoutes(app: FastifyInstance, ctx: RouteContext): void {
  for (const url of NEO_ONLY_PATHS) {
    registerOperation(app, ctx, {
      url,
      async handler() {
        throw unsupportedCoin();
      },
    });
  }
}
