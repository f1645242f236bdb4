/**
 * Starts the API on a host and port; `port: 0` picks a free port.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from '../internal/logger.js';
import type { ApiStore } from '../store/types.js';
import { type ApiAppOptions, createApiApps } from './app.js';

export interface ApiServerOptions
  extends Pick<
    ApiAppOptions,
    | 'defaultRateLimit'
    | 'anonymousRateLimit'
    | 'redis'
    | 'redisKeyPrefix'
    | 'rateLimiter'
    | 'trustProxy'
    | 'rpcMetrics'
    | 'requestTimeoutMs'
    | 'headersTimeoutMs'
    | 'idleTimeoutMs'
    | 'maxConnections'
    | 'fastPath'
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
  /**
   * Where `/metrics`, the dashboard and the docs are served (`--operator-listen`): `same` (the
   * default) beside the API, `off` nowhere, or a listener of their own on `host:port`.
   */
  operatorListen?: OperatorListen;
}

/** `--operator-listen`: see `ApiServerOptions.operatorListen`. */
export type OperatorListen = 'same' | 'off' | { host: string; port: number };

export interface ApiServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Base URL of the operator views' own listener, when they have one. */
  operatorUrl?: string;
  /** Stops accepting connections and waits for requests in flight. Does not close the store. */
  close(): Promise<void>;
}

export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const where = options.operatorListen ?? 'same';
  const { api: app, operator } = await createApiApps({
    ...options,
    operatorViews: typeof where === 'object' ? 'separate' : where,
  });
  try {
    await app.listen({
      host: options.host,
      port: options.port,
      listenTextResolver: (address) => `API listening on ${address}`,
    });
    if (operator !== null && typeof where === 'object') {
      await operator.listen({
        host: where.host,
        port: where.port,
        listenTextResolver: (address) => `metrics, dashboard and docs listening on ${address}`,
      });
    }
  } catch (error) {
    // Closes the operator instance too.
    await app.close();
    throw error;
  }
  return {
    url: baseUrl(options.host, app),
    ...(operator !== null && typeof where === 'object' ? { operatorUrl: baseUrl(where.host, operator) } : {}),
    async close() {
      await app.close();
    },
  };
}

function baseUrl(host: string, app: { server: { address(): unknown } }): string {
  const { port } = app.server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
