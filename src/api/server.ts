/**
 * Starts the API on a host and port; `port: 0` picks a free port.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from '../internal/logger.js';
import type { ApiStore } from '../store/types.js';
import { type ApiAppOptions, createApiApp } from './app.js';

export interface ApiServerOptions
  extends Pick<
    ApiAppOptions,
    | 'defaultRateLimit'
    | 'redis'
    | 'redisKeyPrefix'
    | 'rateLimiter'
    | 'trustProxy'
    | 'rpcMetrics'
    | 'requestTimeoutMs'
    | 'headersTimeoutMs'
    | 'idleTimeoutMs'
    | 'maxConnections'
  > {
  store: ApiStore;
  logger: Logger;
  /** Configured chain names. */
  chains: readonly string[];
  host: string;
  port: number;
  /** API-key cache lifetime; default 500 ms. */
  keyCacheTtlMs?: number;
  /** See `ApiAppOptions.responseCache`; on by default. */
  responseCache?: ApiAppOptions['responseCache'];
}

export interface ApiServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Stops accepting connections and waits for requests in flight. Does not close the store. */
  close(): Promise<void>;
}

export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const app = await createApiApp(options);
  try {
    await app.listen({
      host: options.host,
      port: options.port,
      listenTextResolver: (address) => `API listening on ${address}`,
    });
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = app.server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    async close() {
      await app.close();
    },
  };
}
