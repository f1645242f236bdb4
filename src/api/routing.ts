/**
 * How every path is registered: GET (HEAD follows automatically) with its response schema and,
 * for operations, the API-key check; every other method on the same path answers 405.
 * The check order (docs/api.md#check-order) falls out of the layering: routing (404), the 405 route,
 * the `onRequest` key gate (401 for a bad key or address, 429 past the rate limit), then the
 * handler (chain, parameters, token; the response cache lives in handlers, after the gate). The
 * fast path (fast-path.ts) answers cache hits of plain requests before all of this, with the
 * gate's checks, and leaves everything else to it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { isEvmChain } from '../internal/chains.js';
import type { ApiStore, ChainStatus } from '../store/types.js';
import type { ApiKeyVerifier } from './auth.js';
import { type JsonSchema, sendError } from './envelope.js';
import { methodNotAllowed, unsupportedCoin } from './errors.js';
import type { FastPath } from './fast-path.js';
import type { KeyGate } from './key-gate.js';
import type { RouteDoc } from './operation-doc.js';
import type { ResponseCache } from './response-cache.js';

/** What route handlers need. */
export interface RouteContext {
  store: ApiStore;
  /** Chains this server answers for: configured and implemented. */
  served: ReadonlySet<string>;
  apiKeys: ApiKeyVerifier;
  /** Key, allow-list and rate-limit checks of every keyed request. */
  keyGate: KeyGate;
  /** Whole answers of the read operations, or null when caching is off (or the store cannot say when data changes). */
  responses: ResponseCache | null;
  /** Answers `responses`' hits before routing (fast-path.ts), or null. */
  fastPath: FastPath | null;
  /** Shapes of every registered path, for requests the router could not decode (see `matchesOperation`). */
  pathShapes: RegExp[];
}

export interface OperationOptions {
  url: string;
  /** Schema of the 200 body when it is JSON; omitted for bare-number and pre-serialized bodies. */
  response?: JsonSchema;
  /** False for `/healthz` and `/status`. Default true. */
  auth?: boolean;
  /** The operation's OpenAPI documentation; every `/vipapi/` route has one. */
  doc?: RouteDoc;
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
}

export function registerOperation(app: FastifyInstance, ctx: RouteContext, options: OperationOptions): void {
  if (options.doc === undefined && options.url.startsWith('/vipapi/')) {
    throw new Error(`operation ${options.url} is not documented`);
  }
  ctx.pathShapes.push(pathShape(options.url));
  // Callback style, so that a key whose lookup is cached passes without a promise round trip.
  const requireApiKey: onRequestHookHandler = (request, reply, done) => {
    ctx.keyGate.check((request.query as Record<string, unknown>).apikey, request, reply, done);
  };
  app.route({
    method: 'GET',
    url: options.url,
    ...(options.auth === false ? {} : { onRequest: requireApiKey }),
    ...(options.response ? { schema: { response: { 200: options.response } } } : {}),
    ...(options.doc === undefined
      ? {}
      : { config: { openapi: { doc: options.doc, auth: options.auth !== false } } }),
    handler: options.handler,
  });
  app.route({
    method: app.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD'),
    url: options.url,
    // Answered in onRequest, before fastify would read or parse a request body.
    onRequest: async (_request, reply) => sendError(reply, methodNotAllowed()),
    handler: async (_request, reply) => sendError(reply, methodNotAllowed()),
  });
}

/** The chain as the EVM family serves it, or 50001 `unsupport coin`. */
export function requireEvmChain(ctx: RouteContext, chain: string): string {
  // NEO's operations of these shapes are routes of their own (static `neo` segment, see routes/neo.ts);
  // what reaches an EVM route with `neo` (the token list, circulating supply) has no NEO counterpart.
  if (!ctx.served.has(chain) || !isEvmChain(chain)) throw unsupportedCoin();
  return chain;
}

/** Confirmations count from the newest block the indexer has seen (never below the indexed one). */
export function headOf(status: ChainStatus | null): number {
  return Math.max(status?.head ?? 0, status?.indexed ?? 0);
}

/** A route URL as a regular expression over raw paths: each `:param` matches one segment. */
function pathShape(url: string): RegExp {
  const segments = url.split('/').map((segment) => {
    if (segment.startsWith(':')) return '[^/]*';
    // Static segments are plain words; anything else would need escaping here.
    if (!/^[a-z]*$/.test(segment)) throw new Error(`unsupported static path segment: ${segment}`);
    return segment;
  });
  return new RegExp(`^${segments.join('/')}$`);
}

/**
 * True when a raw (undecoded) path has the shape of an operation. Used when the router fails
 * to percent-decode a path, so that such a request still answers 404 only for unknown paths.
 */
export function matchesOperation(ctx: RouteContext, rawPath: string): boolean {
  return ctx.pathShapes.some((shape) => shape.test(rawPath));
}

/** Path parameters as strings (fastify has already percent-decoded them). */
export function pathParams<K extends string>(request: FastifyRequest): Record<K, string> {
  return request.params as Record<K, string>;
}
