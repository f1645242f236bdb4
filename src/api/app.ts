/**
 * The HTTP API as a fastify instance (not listening): Tokenview's `/vipapi/` operations,
 * `/healthz` and `/status`. Every answer, framework failures included, is an envelope.
 */
import { METHODS } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { isChainName } from '../internal/chains.js';
import { errorMessage, redactUrls, UserError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { RateLimit } from '../internal/rate-limit.js';
import type { RpcSeriesSnapshot } from '../internal/rpc-metrics.js';
import type { ApiStore } from '../store/types.js';
import { createApiKeyVerifier } from './auth.js';
import { rawErrorResponse, sendError } from './envelope.js';
import {
  ApiError,
  invalidParameter,
  isStoreUnavailable,
  methodNotAllowed,
  notFound,
  serverBusy,
  storeUnavailable,
} from './errors.js';
import { createKeyGate } from './key-gate.js';
import { registerOpenApi } from './openapi.js';
import { registerOperatorViews } from './operator.js';
import { createLocalRateLimiter, type RateLimiter } from './rate-limiter.js';
import { createResponseCache, type ResponseCache } from './response-cache.js';
import { docsRoutes } from './routes/docs.js';
import { evmTokenRoutes } from './routes/evm-tokens.js';
import { healthRoutes } from './routes/health.js';
import { neoRoutes } from './routes/neo.js';
import { evmSupplyRoutes } from './routes/supply.js';
import { matchesOperation, type RouteContext } from './routing.js';

export interface ApiAppOptions {
  store: ApiStore;
  logger: Logger;
  /** Configured chain names (`eth`, `bsc`, ...). Chains outside this list answer 50001. */
  chains: readonly string[];
  /** How long an API-key lookup is cached. Default 500 ms, so a revocation bites within a second. */
  keyCacheTtlMs?: number;
  /**
   * The exact response cache of Token Info, Transaction List and Token List (see
   * `response-cache.ts`): on by default when the store offers `readVersion`; `false` turns it off.
   */
  responseCache?: boolean | { maxBytes?: number; maxEntries?: number };
  /** The rate limit of keys without their own (`--rate-limit`); absent: unlimited. */
  defaultRateLimit?: RateLimit;
  /** `redis://` URL: rate-limit buckets shared by every replica (`--redis`); absent: in-process. */
  redis?: string;
  /** Prefix of the Redis bucket keys; default `tokenquery:ratelimit:`. */
  redisKeyPrefix?: string;
  /** A limiter to use instead of building one (tests); the caller closes it. */
  rateLimiter?: RateLimiter;
  /**
   * Proxies whose `X-Forwarded-For` is believed for the allow-lists (`--trust-proxy`): addresses,
   * CIDRs or proxy-addr's `loopback`/`linklocal`/`uniquelocal`. The client is the nearest address
   * in the chain that is not a trusted proxy. Absent: never believed; the socket's address counts.
   */
  trustProxy?: readonly string[];
  /** The indexer's RPC figures for `/metrics`, when it runs in this process (`start`). */
  rpcMetrics?: () => readonly RpcSeriesSnapshot[];
}

/**
 * Path parameters longer than this are refused with 414. Far above any real address or hash,
 * so an overlong address is still routed and answered 10001 rather than 404.
 */
const MAX_PARAM_LENGTH = 8192;

export async function createApiApp(options: ApiAppOptions): Promise<FastifyInstance> {
  const { store, chains } = options;
  for (const chain of chains) {
    if (!isChainName(chain)) throw new UserError(`unknown chain "${chain}"`);
  }
  // Anything that logs a request logs its path only: the query string carries the apikey.
  const log = options.logger.child(
    { component: 'api' },
    {
      serializers: {
        req: (req: { method?: string; url?: string }) => ({
          method: req.method,
          path: pathOf(req.url ?? ''),
        }),
      },
    },
  );

  const app = Fastify({
    loggerInstance: log,
    // Fastify's request log prints the URL, query string (and so the apikey) included: we log our own line.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    ...(options.trustProxy === undefined ? {} : { trustProxy: [...options.trustProxy] }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
    // Requests log through the API logger itself rather than a child made per request (a pino
    // child per request is a measurable share of a small answer's cost); lines that concern a
    // request carry its id explicitly.
    childLoggerFactory: (logger) => logger,
  }) as unknown as FastifyInstance;

  // Node parses every method in http.METHODS; unknown to fastify they would 404 instead of 405.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }

  const limiter = options.rateLimiter ?? (await createRateLimiter(options));
  if (options.rateLimiter === undefined) app.addHook('onClose', () => limiter.close());
  const apiKeys = createApiKeyVerifier({
    store,
    ttlMs: options.keyCacheTtlMs ?? 500,
    defaultRateLimit: options.defaultRateLimit ?? null,
  });
  const ctx: RouteContext = {
    store,
    served: new Set(chains),
    apiKeys,
    keyGate: createKeyGate({ verifier: apiKeys, limiter }),
    responses: responseCacheFor(store, options.responseCache),
    pathShapes: [],
  };

  let lastUnavailableWarn = Number.NEGATIVE_INFINITY;
  let unavailableAnswers = 0;
  app.setNotFoundHandler((_request, reply) => sendError(reply, notFound()));
  app.setErrorHandler((error, request, reply) => sendError(reply, toApiError(error, request)));
  // A hook costs every request, so the per-request debug line exists only when debug logging is on at start.
  if (log.isLevelEnabled('debug')) {
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug(
        {
          reqId: request.id,
          method: request.method,
          path: pathOf(request.url),
          status: reply.statusCode,
          ms: reply.elapsedTime,
        },
        'request',
      );
    });
  }

  // First: it collects the routes registered after it, with their schemas, for /openapi.json.
  // `/metrics` and the dashboard; before every other route, so that each route's requests are counted.
  registerOperatorViews(app, ctx, {
    chains,
    logger: log,
    ...(options.rpcMetrics === undefined ? {} : { rpcMetrics: options.rpcMetrics }),
  });
  await registerOpenApi(app, { chains });
  healthRoutes(app, ctx, chains);
  evmTokenRoutes(app, ctx);
  evmSupplyRoutes(app, ctx);
  neoRoutes(app, ctx);
  docsRoutes(app);

  await app.ready();
  return app;

  /** Router failures fastify reports before any route runs: bad percent-encoding, overlong parameters. */
  function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      sendError(reply, new ApiError(414, 10001, 'invalid parameter: path segment too long'));
      return;
    }
    if (error.code !== 'FST_ERR_BAD_URL') {
      request.log.error(
        { err: error, reqId: request.id, path: pathOf(request.raw.url ?? '') },
        'router failure',
      );
      sendError(reply, serverBusy());
      return;
    }
    // A malformed path still answers in check order: 404 for unknown paths, the key before the parameter.
    if (!matchesOperation(ctx, pathOf(request.raw.url ?? ''))) {
      sendError(reply, notFound());
      return;
    }
    const apikey = new URLSearchParams(queryOf(request.raw.url ?? '')).getAll('apikey');
    ctx.keyGate.check(apikey.length === 1 ? apikey[0] : undefined, request, reply, (error) =>
      sendError(
        reply,
        error ? toApiError(error, request) : invalidParameter('malformed percent-encoding in path'),
      ),
    );
  }

  /**
   * The database is unreachable: one warning per 10 s with the count answered 503 meanwhile,
   * not an error and a stack per request (a loaded API would write thousands a second).
   */
  function storeDown(error: unknown): void {
    unavailableAnswers++;
    const now = Date.now();
    if (now - lastUnavailableWarn < 10_000) return;
    log.warn(
      { err: redactUrls(errorMessage(error)), answered503: unavailableAnswers },
      'database unreachable: answering 503 until it is back',
    );
    lastUnavailableWarn = now;
    unavailableAnswers = 0;
  }

  /** Maps anything thrown while answering to an envelope; unexpected faults are logged, never shown. */
  function toApiError(error: unknown, request: FastifyRequest): ApiError {
    if (error instanceof ApiError) return error;
    const status = (error as { statusCode?: unknown } | null)?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      if (status === 404) return notFound();
      if (status === 405) return methodNotAllowed();
      return new ApiError(status, 10001, 'invalid parameter: malformed request');
    }
    if (isStoreUnavailable(error)) {
      storeDown(error);
      return storeUnavailable();
    }
    request.log.error(
      { err: error, reqId: request.id, method: request.method, path: pathOf(request.url) },
      'request failed',
    );
    return serverBusy();
  }

  /** Failures of the HTTP parser itself (no request object exists): answered on the raw socket. */
  function onClientError(error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    let response: string;
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      const e = new ApiError(431, 10001, 'invalid parameter: request header fields too large');
      response = rawErrorResponse(431, 'Request Header Fields Too Large', e);
    } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      response = rawErrorResponse(
        408,
        'Request Timeout',
        new ApiError(408, 10001, 'invalid parameter: request timeout'),
      );
    } else {
      response = rawErrorResponse(
        400,
        'Bad Request',
        new ApiError(400, 10001, 'invalid parameter: malformed request'),
      );
    }
    log.trace({ code: error.code }, 'client error');
    if (socket.writable) socket.end(response);
    socket.destroy();
  }
}

/** The Redis limiter (loaded only then) when `redis` is given, else the in-process one. */
async function createRateLimiter(options: ApiAppOptions): Promise<RateLimiter> {
  if (options.redis === undefined) return createLocalRateLimiter();
  const { createRedisRateLimiter } = await import('./redis-rate-limiter.js');
  return createRedisRateLimiter({
    url: options.redis,
    logger: options.logger,
    ...(options.redisKeyPrefix === undefined ? {} : { prefix: options.redisKeyPrefix }),
  });
}

function responseCacheFor(store: ApiStore, option: ApiAppOptions['responseCache']): ResponseCache | null {
  const readVersion = store.reader.readVersion?.bind(store.reader);
  if (option === false || readVersion === undefined) return null;
  return createResponseCache({ version: readVersion, ...(typeof option === 'object' ? option : {}) });
}

/** The path of a request URL without its query string (which carries the apikey). */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function queryOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
}
