/**
 * NEO family (NEO Legacy 2.x): the seven operations. Token Info, the transfer list and the two
 * supply operations share their path shapes with the EVM family; they are registered here with
 * the static segment `neo`, which the router prefers over the EVM routes' `:chain`, so each
 * keeps its own response schema. Token Info is also served with the segments swapped
 * (`/vipapi/token/neo/...`), as Tokenview's sample request writes it.
 *
 * Handlers run after routing and the key check; they check the chain, then the parameters,
 * then that the token exists (docs/api.md#check-order). Token hashes and asset ids are accepted
 * by every operation that takes a token address (docs/api.md#neo-hashes).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { formatUnits } from '../../internal/amount.js';
import type { NeoTokenRecord } from '../../store/types.js';
import { sendBareNumber, sendOk } from '../envelope.js';
import { noData, unsupportedCoin } from '../errors.js';
import {
  neoAssetSummary,
  neoAssetSummarySchema,
  neoContractList,
  neoContractListSchema,
  neoTokenPage,
  neoTokenPageSchema,
  neoTokenSummary,
  neoTokenSummarySchema,
  neoTransferList,
  neoTransferListSchema,
} from '../neo-views.js';
import { ALL_IN_BAND, LISTS, type OperationDoc, type RouteDoc, supplyNote } from '../operation-doc.js';
import { parseNeoHash, parsePaging } from '../params.js';
import { headOf, pathParams, type RouteContext, registerOperation } from '../routing.js';

const NEO = 'neo';

/** 50001 unless this server serves neo. */
export function requireNeo(ctx: RouteContext): string {
  if (!ctx.served.has(NEO)) throw unsupportedCoin();
  return NEO;
}

/** The NEP-5 token or global asset, or 404 `无数据`. */
export async function findNeoToken(ctx: RouteContext, address: string): Promise<NeoTokenRecord> {
  const token = await ctx.store.neo.getNeoToken(NEO, address);
  if (token === null) throw noData();
  return token;
}

type SupplyOf = (token: NeoTokenRecord, total: bigint) => bigint;

/**
 * Raw supplies, by path segment, with their documentation: total is `totalSupply()` for NEP-5
 * and the issued amount for assets; max is the asset's cap, else the total (NEP-5 has no cap).
 */
const SUPPLIES: Record<string, { of: SupplyOf; doc: OperationDoc }> = {
  totalsupply: {
    of: (_token, total) => total,
    doc: {
      operationId: 'neoTotalSupply',
      summary: 'Total Supply',
      family: 'NEO',
      description: supplyNote('`totalSupply()` of a NEP-5 token, or the issued amount of a global asset'),
      body: 'number',
      errors: ALL_IN_BAND,
    },
  },
  maxsupply: {
    of: (token, total) => token.cap ?? total,
    doc: {
      operationId: 'neoMaxSupply',
      summary: 'Max Supply',
      family: 'NEO',
      description: supplyNote("A global asset's registered amount; for NEP-5 tokens, the total supply"),
      body: 'number',
      errors: ALL_IN_BAND,
    },
  },
};

const TOKEN_INFO: OperationDoc = {
  operationId: 'neoTokenInfo',
  summary: 'Token Info',
  family: 'NEO',
  description:
    'Transfer and holder counts and metadata of a NEP-5 token or global asset. ' +
    'The same operation also answers at `/vipapi/token/neo/{address}` (the segment order of ' +
    "Tokenview's sample request).",
  errors: ALL_IN_BAND,
};

export function neoRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const tokenInfo = async (address: string, reply: FastifyReply) => {
    requireNeo(ctx);
    const token = await findNeoToken(ctx, parseNeoHash(address));
    return sendOk(reply, neoTokenSummary(token));
  };
  const tokenInfoRoutes: [url: string, doc: RouteDoc][] = [
    ['/vipapi/neo/token/:address', TOKEN_INFO],
    ['/vipapi/token/neo/:address', 'alias'],
  ];
  for (const [url, doc] of tokenInfoRoutes) {
    registerOperation(app, ctx, {
      url,
      response: neoTokenSummarySchema,
      doc,
      handler: (request, reply) => tokenInfo(pathParams<'address'>(request).address, reply),
    });
  }

  for (const [kind, { of: supplyOf, doc }] of Object.entries(SUPPLIES)) {
    registerOperation(app, ctx, {
      url: `/vipapi/token/${kind}/neo/:address`,
      doc,
      async handler(request, reply) {
        requireNeo(ctx);
        const token = await findNeoToken(ctx, parseNeoHash(pathParams<'address'>(request).address));
        // A supply the node could not give is no figure at all (as for EVM).
        if (token.totalSupply === null) throw noData();
        return sendBareNumber(reply, formatUnits(supplyOf(token, token.totalSupply), token.decimals));
      },
    });
  }

  registerOperation(app, ctx, {
    url: '/vipapi/neo/token/tokentrans/:address/:page/:size',
    response: neoTransferListSchema,
    doc: {
      operationId: 'neoTransferList',
      summary: 'Token Transaction List',
      family: 'NEO',
      description: 'Transfers of a NEP-5 token or global asset, newest first.',
      errors: ALL_IN_BAND,
    },
    async handler(request, reply) {
      const params = pathParams<'address' | 'page' | 'size'>(request);
      const chain = requireNeo(ctx);
      const address = parseNeoHash(params.address);
      const { offset, size } = parsePaging(params.page, params.size);
      const [token, transfers, status] = await Promise.all([
        findNeoToken(ctx, address),
        ctx.store.reader.listTransfers(chain, address, offset, size),
        ctx.store.reader.getChainStatus(chain),
      ]);
      return sendOk(reply, neoTransferList(token, transfers, headOf(status)));
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/neo/asset/:address',
    response: neoAssetSummarySchema,
    doc: {
      operationId: 'neoAssetInfo',
      summary: 'Assets (Token) Info',
      family: 'NEO',
      description:
        'A NEP-5 token or global asset with its total supply, category, creation time and creator.',
      errors: ALL_IN_BAND,
    },
    async handler(request, reply) {
      requireNeo(ctx);
      const token = await findNeoToken(ctx, parseNeoHash(pathParams<'address'>(request).address));
      return sendOk(reply, neoAssetSummary(token));
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/tokens/neo/:page/:size',
    response: neoTokenPageSchema,
    doc: {
      operationId: 'neoAssetList',
      summary: 'Assets (Token) List On Chain',
      family: 'NEO',
      description: 'NEP-5 tokens and global assets, most holders first.',
      errors: LISTS,
    },
    async handler(request, reply) {
      const params = pathParams<'page' | 'size'>(request);
      const chain = requireNeo(ctx);
      const { page, size, offset } = parsePaging(params.page, params.size);
      return sendOk(reply, neoTokenPage(page, size, await ctx.store.neo.listNeoTokens(chain, offset, size)));
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/contracts/neo/:page/:size',
    response: neoContractListSchema,
    doc: {
      operationId: 'neoContractList',
      summary: 'Contracts List On Chain',
      family: 'NEO',
      description: 'Contract deployments, newest first.',
      errors: LISTS,
    },
    async handler(request, reply) {
      const params = pathParams<'page' | 'size'>(request);
      const chain = requireNeo(ctx);
      const { offset, size } = parsePaging(params.page, params.size);
      return sendOk(reply, neoContractList(await ctx.store.neo.listNeoContracts(chain, offset, size)));
    },
  });
}
