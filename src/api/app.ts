/**
 * The HTTP API as a fastify instance (not listening): Tokenview's `/vipapi/` operations,
 * `/healthz` and `/status`. Every answer, framework failures included, is an envelope.
 */
import { type IncomingMessage, METHODS, type ServerResponse } from 'node:http';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { isChainName } from '../internal/chains.js';
import {
  errorMessage,
  isStoreConflict,
  isStoreUnavailable,
  redactUrls,
  UserError,
} from '../internal/errors.js';
import { HTTP_LIMIT_DEFAULTS, type HttpLimits } from '../internal/http-limits.js';
import type { Logger } from '../internal/logger.js';
import type { RateLimit } from '../internal/rate-limit.js';
import type { RpcSeriesSnapshot } from '../internal/rpc-metrics.js';
import type { ApiStore } from '../store/types.js';
import { createApiKeyVerifier } from './auth.js';
import { slowClientOptions } from './client-errors.js';
import { JSON_CONTENT_TYPE, sendError } from './envelope.js';
import {
  ApiError,
  invalidParameter,
  methodNotAllowed,
  notFound,
  serverBusy,
  storeUnavailable,
} from './errors.js';
import { type FastPath, installFastPath, type RequestListener } from './fast-path.js';
import { type AnonymousLimit, createKeyGate, DEFAULT_ANONYMOUS_RATE_LIMIT } from './key-gate.js';
import { OPENAPI_PATH, registerOpenApi } from './openapi.js';
import { createOperatorViews } from './operator.js';
import { createLocalRateLimiter, type RateLimiter } from './rate-limiter.js';
import { createResponseCache, type ResponseCache } from './response-cache.js';
import { evmAddressRoutes } from './routes/address.js';
import { docsRoutes } from './routes/docs.js';
import { evmTokenRoutes } from './routes/evm-tokens.js';
import { healthRoutes } from './routes/health.js';
import { neoRoutes } from './routes/neo.js';
import { neoAddressRoutes } from './routes/neo-address.js';
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
  /**
   * Answer the response cache's hits before fastify's routing (`fast-path.ts`); default true.
   * False: every request is routed (tests compare the two).
   */
  fastPath?: boolean;
  /** The rate limit of keys without their own (`--rate-limit`); absent: unlimited. */
  defaultRateLimit?: RateLimit;
  /**
   * Per client address: requests without a key, with a value that is no key, or with a key that
   * fails (unknown, revoked, outside its allow-list) take from this bucket, and are answered 429
   * once it is empty (`--anonymous-rate-limit`). Absent: `DEFAULT_ANONYMOUS_RATE_LIMIT`; null: off.
   * Always in-process, also with `redis` (see `key-gate.ts`).
   */
  anonymousRateLimit?: RateLimit | null;
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
  /** Slow-client limits (`--request-timeout` etc., internal/http-limits.ts); absent ones take the defaults. */
  requestTimeoutMs?: number;
  headersTimeoutMs?: number;
  idleTimeoutMs?: number;
  maxConnections?: number;
  /**
   * Where `/metrics`, the dashboard and the docs are served (`--operator-listen`): `same` (the
   * default) beside the API, `off` nowhere, `separate` on an instance of their own
   * ({@link createApiApps} only). Elsewhere than `same`, the API answers 404 for them.
   */
  operatorViews?: 'same' | 'off' | 'separate';
}

/** The API, and the operator views' own instance when they are `separate`. */
export interface ApiApps {
  api: FastifyInstance;
  /** Closed with `api`. */
  operator: FastifyInstance | null;
  /** The fast path in front of `api`, when it has one (for tests). */
  fastPath: FastPath | null;
}

/**
 * Path parameters longer than this are refused with 414. Far above any real address or hash,
 * so an overlong address is still routed and answered 10001 rather than 404.
 */
const MAX_PARAM_LENGTH = 8192;

/** The most request body bytes read and dropped to keep a connection (see the 'request' listener). */
const MAX_DISCARDED_BODY = 64 * 1024;

export async function createApiApp(
  options: ApiAppOptions & { operatorViews?: 'same' | 'off' },
): Promise<FastifyInstance> {
  return (await createApiApps(options)).api;
}

export async function createApiApps(options: ApiAppOptions): Promise<ApiApps> {
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

  const limits = { ...HTTP_LIMIT_DEFAULTS, ...definedOnly(options) };
  const app = Fastify({
    loggerInstance: log,
    ...slowClientOptions(limits, log),
    // Fastify's request log prints the URL, query string (and so the apikey) included: we log our own line.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    ...(options.trustProxy === undefined ? {} : { trustProxy: [...options.trustProxy] }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: onFrameworkError,
    // Requests log through the API logger itself rather than a child made per request (a pino
    // child per request is a measurable share of a small answer's cost); lines that concern a
    // request carry its id explicitly.
    childLoggerFactory: (logger) => logger,
  }) as unknown as FastifyInstance;

  app.server.maxConnections = limits.maxConnections;
  // Fastify's own request listener, which routes: the fast path goes in front of it (below).
  const routeRequest = app.server.listeners('request')[0] as RequestListener;
  let lastDropLog = 0;
  app.server.on('drop', () => {
    if (Date.now() - lastDropLog < 10_000) return;
    lastDropLog = Date.now();
    log.warn({ maxConnections: limits.maxConnections }, 'connection cap reached: refusing new connections');
  });
  // No operation takes a body, and Node reads one (to drop it) after the answer, to keep the
  // connection. A body larger than this, or of unannounced size (chunked), is not worth waiting
  // for: the answer closes the connection instead.
  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.headers['transfer-encoding'] !== undefined) response.shouldKeepAlive = false;
    else if (Number(request.headers['content-length'] ?? 0) > MAX_DISCARDED_BODY)
      response.shouldKeepAlive = false;
  });

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
    keyGate: createKeyGate({ verifier: apiKeys, limiter, anonymous: anonymousLimit(options) }),
    responses: responseCacheFor(store, options.responseCache),
    fastPath: null,
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

  // `/metrics` and the dashboard; before every other route, so that each route's requests are counted.
  const where = options.operatorViews ?? 'same';
  const views =
    where === 'off'
      ? null
      : createOperatorViews(app, ctx, {
          chains,
          logger: log,
          ...(options.rpcMetrics === undefined ? {} : { rpcMetrics: options.rpcMetrics }),
        });
  if (where === 'same') views?.register(app, ctx);
  // With debug logging on, every request is routed, so that each gets its debug line.
  if (ctx.responses !== null && options.fastPath !== false && !log.isLevelEnabled('debug')) {
    ctx.fastPath = installFastPath(app, routeRequest, {
      cache: ctx.responses,
      verifier: apiKeys,
      limiter,
      trustProxy: options.trustProxy !== undefined,
      recorder: views === null ? null : views.http.recorder,
    });
  }
  // It collects the routes registered after it, with their schemas, for /openapi.json.
  await registerOpenApi(app, { chains });
  healthRoutes(app, ctx, chains);
  evmTokenRoutes(app, ctx);
  evmSupplyRoutes(app, ctx);
  neoRoutes(app, ctx);
  evmAddressRoutes(app, ctx);
  neoAddressRoutes(app, ctx);
  if (where === 'same') docsRoutes(app);

  let operator: FastifyInstance | null = null;
  if (where === 'separate' && views !== null) {
    operator = createOperatorApp(log, limits);
    // Its own path shapes: the API's router fallback must not learn the dashboard's paths.
    views.register(operator, { ...ctx, pathShapes: [] });
    docsRoutes(operator);
    // The docs page loads the document from its own origin.
    let document: string | undefined;
    operator.get(OPENAPI_PATH, async (_request, reply) => {
      document ??= JSON.stringify(app.swagger());
      return reply.code(200).type(JSON_CONTENT_TYPE).header('cache-control', 'no-cache').send(document);
    });
    const closing = operator;
    app.addHook('onClose', () => closing.close());
    await operator.ready();
  }

  await app.ready();
  return { api: app, operator, fastPath: ctx.fastPath };

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
    const fault = clientFault(error);
    if (fault !== null) return fault;
    if (isStoreUnavailable(error)) {
      storeDown(error);
      return storeUnavailable();
    }
    if (isStoreConflict(error)) {
      request.log.warn(
        { err: redactUrls(errorMessage(error)), reqId: request.id },
        'query cancelled by the database; answered 503',
      );
      return storeUnavailable();
    }
    request.log.error(
      { err: error, reqId: request.id, method: request.method, path: pathOf(request.url) },
      'request failed',
    );
    return serverBusy();
  }
}

/** The operator views' own instance (`--operator-listen <host:port>`): plain answers, envelopes for errors. */
function createOperatorApp(log: Logger, limits: HttpLimits): FastifyInstance {
  const app = Fastify({
    loggerInstance: log,
    ...slowClientOptions(limits, log),
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    childLoggerFactory: (logger) => logger,
  }) as unknown as FastifyInstance;
  app.server.maxConnections = limits.maxConnections;
  app.setNotFoundHandler((_request, reply) => sendError(reply, notFound()));
  app.setErrorHandler((error, request, reply) => {
    const fault = clientFault(error);
    if (fault !== null) return sendError(reply, fault);
    request.log.error({ err: error, path: pathOf(request.url) }, 'operator view failed');
    return sendError(reply, serverBusy());
  });
  return app;
}

/**
 * The answer to an error the client caused: an `ApiError` as it is, fastify's own 4xx (404, 405,
 * a malformed request) as the Tokenview envelope; null when the server failed.
 */
function clientFault(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  if (status === 404) return notFound();
  if (status === 405) return methodNotAllowed();
  return new ApiError(status, 10001, 'invalid parameter: malformed request');
}

/** The slow-client limits given in `options`, leaving out absent ones so that the defaults apply. */
function definedOnly(options: ApiAppOptions): Partial<HttpLimits> {
  const limits: Partial<HttpLimits> = {};
  for (const key of Object.keys(HTTP_LIMIT_DEFAULTS) as (keyof HttpLimits)[]) {
    const value = options[key];
    if (value !== undefined) limits[key] = value;
  }
  return limits;
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

function anonymousLimit(options: ApiAppOptions): AnonymousLimit | null {
  const limit =
    options.anonymousRateLimit === undefined ? DEFAULT_ANONYMOUS_RATE_LIMIT : options.anonymousRateLimit;
  return limit === null ? null : { limit, limiter: createLocalRateLimiter() };
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
