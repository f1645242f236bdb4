/**
 * NEO family: the address operations and Token Holders, registered with the static segment `neo`
 * (which the router prefers over the EVM routes' `:chain`), so each keeps the NEO shapes: balance
 * entries with `tokenInfo.c`, the NEO transfer record with `confirmations`. Addresses are NEO 2.x
 * base58check addresses; tokens are NEP-5 script hashes or global asset ids in any accepted
 * spelling (docs/api.md#neo-hashes). Check order and caching as in `address.ts`.
 *
 * Units: the store keeps a global asset's balances as sums of unspent outputs in Fixed8 units
 * (10^-8 of the asset), while its transfer `value`, `d` and total supply are in the asset's own
 * unit (its precision: 1 NEO, 10^-8 GAS). Balances are converted to that unit here
 * (`neoBalanceUnits`), so `balance` reads like `value` and `percentage` compares like with like.
 */
import type { FastifyInstance } from 'fastify';
import { okBody, okBodyFromJson, sendCachedOk } from '../envelope.js';
import { holderPageSchema, tokenHolderPage } from '../holder-views.js';
import {
  neoBalanceListJson,
  neoBalanceListSchema,
  neoBalanceUnits,
  neoTransferList,
  neoTransferListSchema,
} from '../neo-views.js';
import { parseNeoAddress, parseNeoHash, parsePaging } from '../params.js';
import { headOf, pathParams, type RouteContext, registerOperation } from '../routing.js';
import { addressDocs, tokensOf } from './address.js';
import { findNeoToken, requireNeo } from './neo.js';

export function neoAddressRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const docs = addressDocs('NEO');
  const { reader, neo } = ctx.store;

  registerOperation(app, ctx, {
    url: '/vipapi/neo/address/tokenbalance/:address',
    response: neoBalanceListSchema,
    doc: docs.balances,
    async handler(request, reply) {
      const chain = requireNeo(ctx);
      const address = parseNeoAddress(pathParams<'address'>(request).address);
      return sendCachedOk(ctx, reply, `balances ${chain} ${address}`, async () =>
        okBodyFromJson(neoBalanceListJson(await neo.listNeoAddressBalances(chain, address))),
      );
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/neo/address/tokenbalance/:address/:token',
    response: neoBalanceListSchema,
    doc: docs.balance,
    async handler(request, reply) {
      const params = pathParams<'address' | 'token'>(request);
      const chain = requireNeo(ctx);
      const address = parseNeoAddress(params.address);
      const tokenAddress = parseNeoHash(params.token, 'token address');
      return sendCachedOk(ctx, reply, `balance ${chain} ${address} ${tokenAddress}`, async () => {
        const [token, holding] = await Promise.all([
          findNeoToken(ctx, tokenAddress),
          reader.getAddressHolding(chain, address, tokenAddress),
        ]);
        return okBodyFromJson(neoBalanceListJson([{ token, ...holding }]));
      });
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/neo/address/tokentrans/:address/:token/:page/:size',
    response: neoTransferListSchema,
    doc: docs.transfers,
    async handler(request, reply) {
      const params = pathParams<'address' | 'token' | 'page' | 'size'>(request);
      const chain = requireNeo(ctx);
      const address = parseNeoAddress(params.address);
      const tokenAddress = parseNeoHash(params.token, 'token address');
      const { offset, size } = parsePaging(params.page, params.size);
      const key = `address transfers ${chain} ${address} ${tokenAddress} ${offset} ${size}`;
      return sendCachedOk(ctx, reply, key, async () => {
        const [token, transfers, status] = await Promise.all([
          findNeoToken(ctx, tokenAddress),
          reader.listAddressTransfers(chain, address, tokenAddress, offset, size),
          reader.getChainStatus(chain),
        ]);
        return okBody(reply, neoTransferList(token, transfers, headOf(status)));
      });
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/neo/address/tokentrans/:address/:page/:size',
    response: neoTransferListSchema,
    doc: docs.allTransfers,
    async handler(request, reply) {
      const params = pathParams<'address' | 'page' | 'size'>(request);
      const chain = requireNeo(ctx);
      const address = parseNeoAddress(params.address);
      const { offset, size } = parsePaging(params.page, params.size);
      const key = `address transfers ${chain} ${address} * ${offset} ${size}`;
      return sendCachedOk(ctx, reply, key, async () => {
        const [transfers, status] = await Promise.all([
          reader.listAddressTransfers(chain, address, null, offset, size),
          reader.getChainStatus(chain),
        ]);
        const tokens = await tokensOf(transfers, (token) => neo.getNeoToken(chain, token));
        const head = headOf(status);
        const records = transfers.flatMap((t) => {
          const token = tokens.get(t.token);
          return token === undefined ? [] : neoTransferList(token, [t], head);
        });
        return okBody(reply, records);
      });
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/neo/token/holders/:address/:page/:size',
    response: holderPageSchema,
    doc: docs.holders,
    async handler(request, reply) {
      const params = pathParams<'address' | 'page' | 'size'>(request);
      const chain = requireNeo(ctx);
      const address = parseNeoHash(params.address);
      const { page, size, offset } = parsePaging(params.page, params.size);
      return sendCachedOk(ctx, reply, `holders ${chain} ${address} ${offset} ${size}`, async () => {
        const [token, holders, notExact] = await Promise.all([
          findNeoToken(ctx, address),
          reader.listHolders(chain, address, offset, size),
          reader.getNotExact(chain, address),
        ]);
        // A global asset's total supply is in the asset's unit already (the issued amount).
        const inAssetUnits = holders.map((h) => ({
          address: h.address,
          balance: neoBalanceUnits(token, h.balance),
        }));
        return okBody(reply, tokenHolderPage(token, { page, size, offset }, inAssetUnits, notExact));
      });
    },
  });
}
