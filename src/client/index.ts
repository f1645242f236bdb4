/**
 * tokenquery's typed client, exported as `tokenquery/client`. Pure HTTP over `fetch`: it
 * imports nothing from the server's code and works against any server with the Tokenview
 * `/vipapi/` token interface.
 *
 * @example
 * import { createTokenqueryClient, NoDataError } from 'tokenquery/client';
 * const client = createTokenqueryClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: process.env.KEY! });
 * const info = await client.evm.tokenInfo({ chain: 'eth', address: '0xdac17f958d2ee523a2206206994597c13d831ec7' });
 */
export { createTokenqueryClient } from './client.js';
export {
  InvalidApiKeyError,
  InvalidParameterError,
  type KnownApiError,
  NoDataError,
  NotFoundError,
  ServerBusyError,
  TOKENVIEW_ERROR_CODES,
  TokenqueryApiError,
  TokenqueryClientError,
  TokenqueryNetworkError,
  TokenqueryResponseError,
  TokenqueryTimeoutError,
  type TokenviewErrorCode,
  TooManyRequestsError,
  UnsupportedCoinError,
} from './errors.js';
export type {
  CallOptions,
  EvmAddressArgs,
  EvmAddressTokenArgs,
  EvmOperations,
  EvmTokenArgs,
  FetchFunction,
  NeoAddressArgs,
  NeoAddressTokenArgs,
  NeoOperations,
  NeoTokenArgs,
  PageOptions,
  TokenqueryClient,
  TokenqueryClientOptions,
  TokenqueryOnlyOperations,
} from './operations.js';
export type * from './types.js';
