/**
 * EVM family: the address operations (Address Token Balances, Address Token Balance, Address
 * Token Transfers, Address Transfers of all tokens) and Token Holders (docs/api.md#address-operations-and-token-holders,
 * docs/api.md#token-holders). The NEO family's are in `neo-address.ts`, with the same documentation.
 *
 * Handlers run after routing and the key check; they check the chain, then the parameters (the
 * address, then the token, then page and size), then that the token exists (docs/api.md#check-order).
 * An address the index has never seen is no error: it holds nothing and has no transfers (`[]`).
 * Every answer goes through the response cache, like the other read operations.
 */
import type { FastifyInstance } from 'fastify';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import type { TransferRecord } from '../../store/types.js';
import { okBody, okBodyFromJson, sendCachedOk } from '../envelope.js';
import {
  balanceListJson,
  balanceListSchema,
  transferList,
  transferListJson,
  transferListSchema,
} from '../evm-views.js';
import { holderPageSchema, tokenHolderPage } from '../holder-views.js';
import { ALL_IN_BAND, type Family, LISTS, type OperationDoc } from '../operation-doc.js';
import { parseEvmAddress, parsePaging } from '../params.js';
import { headOf, pathParams, type RouteContext, registerOperation, requireEvmChain } from '../routing.js';
import { findToken } from './evm-tokens.js';

/** The five operations' documentation, per family (operation ids `evm…`/`neo…`). */
export function addressDocs(family: 'EVM' | 'NEO') {
  const prefix = family === 'EVM' ? 'evm' : 'neo';
  const doc = (id: string, summary: string, description: string, errors = ALL_IN_BAND): OperationDoc => ({
    operationId: `${prefix}${id}`,
    summary,
    family: family satisfies Family,
    description,
    errors,
  });
  const record = family === 'EVM' ? 'Token Transaction List' : 'NEO Token Transaction List';
  return {
    balances: doc(
      'AddressBalances',
      'Address Token Balances',
      'One balance entry per token whose balance at the address is above zero, ordered like the ' +
        'token list. `balance` is the raw integer in the smallest unit, as transfer `value` is. An ' +
        'address with no tokens (the zero address among them) answers `[]`.',
      LISTS,
    ),
    balance: doc(
      'AddressBalance',
      'Address Token Balance',
      'An array with exactly one balance entry: what the address holds of the token (`"0"` when ' +
        'none) and how many of its transfers name the address. An unknown token answers 404 `无数据`.',
    ),
    transfers: doc(
      'AddressTransfers',
      'Address Token Transfers',
      `The token's transfers in which the address is sender or recipient, newest first, as records ` +
        `of the ${record}. A page past the end answers \`[]\`.`,
    ),
    allTransfers: doc(
      'AddressAllTransfers',
      'Address Transfers, all tokens',
      `Transfers of every token in which the address is sender or recipient, newest first, as ` +
        `records of the ${record}. A page past the end answers \`[]\`.`,
      LISTS,
    ),
    holders: doc(
      'TokenHolders',
      'Token Holders',
      "A token's holders by balance (descending, then address), as a page object. `total` is the " +
        "token's `holderCnt`; `exact` says whether its balances are exact; `percentage` is the " +
        'share of the total supply, truncated to 6 digits, null when the supply is unknown or zero. ' +
        'A page past the end has `data: []`.',
    ),
  };
}

/**
 * The tokens of `transfers`, read once each (a page names at most 50). A token a rollback removed
 * between the two reads is absent: its records are left out of the page rather than failing it.
 */
export async function tokensOf<T>(
  transfers: readonly TransferRecord[],
  read: (address: string) => Promise<T | null>,
): Promise<Map<string, T>> {
  const addresses = [...new Set(transfers.map((t) => t.token))];
  const tokens = await Promise.all(addresses.map(read));
  const found = new Map<string, T>();
  addresses.forEach((address, i) => {
    const token = tokens[i];
    if (token !== null && token !== undefined) found.set(address, token);
  });
  return found;
}

export function evmAddressRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const docs = addressDocs('EVM');
  const { reader } = ctx.store;

  registerOperation(app, ctx, {
    url: '/vipapi/:chain/address/tokenbalance/:address',
    response: balanceListSchema,
    doc: docs.balances,
    async handler(request, reply) {
      const params = pathParams<'chain' | 'address'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const address = parseEvmAddress(params.address);
      return sendCachedOk(ctx, reply, `balances ${chain} ${address}`, async () =>
        okBodyFromJson(balanceListJson(await reader.listAddressBalances(chain, address))),
      );
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/:chain/address/tokenbalance/:address/:token',
    response: balanceListSchema,
    doc: docs.balance,
    async handler(request, reply) {
      const params = pathParams<'chain' | 'address' | 'token'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const address = parseEvmAddress(params.address);
      const tokenAddress = parseEvmAddress(params.token, 'token address');
      return sendCachedOk(ctx, reply, `balance ${chain} ${address} ${tokenAddress}`, async () => {
        const [token, holding] = await Promise.all([
          findToken(ctx, chain, tokenAddress),
          reader.getAddressHolding(chain, address, tokenAddress),
        ]);
        // The zero address holds nothing: what the store computed for it is every burn less every mint.
        const balance = address === ZERO_ADDRESS ? 0n : holding.balance;
        return okBodyFromJson(balanceListJson([{ token, balance, transferCount: holding.transferCount }]));
      });
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/:chain/address/tokentrans/:address/:token/:page/:size',
    response: transferListSchema,
    doc: docs.transfers,
    async handler(request, reply) {
      const params = pathParams<'chain' | 'address' | 'token' | 'page' | 'size'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const address = parseEvmAddress(params.address);
      const tokenAddress = parseEvmAddress(params.token, 'token address');
      const { offset, size } = parsePaging(params.page, params.size);
      const key = `address transfers ${chain} ${address} ${tokenAddress} ${offset} ${size}`;
      return sendCachedOk(ctx, reply, key, async () => {
        // Read together; the token check still decides the answer before the list is used.
        const [token, transfers, status] = await Promise.all([
          findToken(ctx, chain, tokenAddress),
          reader.listAddressTransfers(chain, address, tokenAddress, offset, size),
          reader.getChainStatus(chain),
        ]);
        return okBodyFromJson(transferListJson(token, transfers, headOf(status)));
      });
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/:chain/address/tokentrans/:address/:page/:size',
    response: transferListSchema,
    doc: docs.allTransfers,
    async handler(request, reply) {
      const params = pathParams<'chain' | 'address' | 'page' | 'size'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const address = parseEvmAddress(params.address);
      const { offset, size } = parsePaging(params.page, params.size);
      const key = `address transfers ${chain} ${address} * ${offset} ${size}`;
      return sendCachedOk(ctx, reply, key, async () => {
        const [transfers, status] = await Promise.all([
          reader.listAddressTransfers(chain, address, null, offset, size),
          reader.getChainStatus(chain),
        ]);
        // Every token the page names, in one read (a busy address's page names dozens).
        const labels = await reader.getTokenLabels(chain, [...new Set(transfers.map((t) => t.token))]);
        const tokens = new Map(labels.map((label) => [label.address, label]));
        const head = headOf(status);
        const records = transfers.flatMap((t) => {
          const token = tokens.get(t.token);
          return token === undefined ? [] : transferList(token, [t], head);
        });
        return okBody(reply, records);
      });
    },
  });

  registerOperation(app, ctx, {
    url: '/vipapi/:chain/token/holders/:address/:page/:size',
    response: holderPageSchema,
    doc: docs.holders,
    async handler(request, reply) {
      const params = pathParams<'chain' | 'address' | 'page' | 'size'>(request);
      const chain = requireEvmChain(ctx, params.chain);
      const address = parseEvmAddress(params.address);
      const { page, size, offset } = parsePaging(params.page, params.size);
      return sendCachedOk(ctx, reply, `holders ${chain} ${address} ${offset} ${size}`, async () => {
        const [token, holders, notExact] = await Promise.all([
          findToken(ctx, chain, address),
          reader.listHolders(chain, address, offset, size),
          reader.getNotExact(chain, address),
        ]);
        return okBody(reply, tokenHolderPage(token, { page, size, offset }, holders, notExact));
      });
    },
  });
}
