/**
 * Response-cache hits answered before fastify routes the request: in the `node:http` request
 * handler, the raw URL is looked up and, when it is a plain hit, the cached body is written
 * directly, with the checks and headers the normal path would give it. Anything else (a miss,
 * an unknown or failing key, a key whose allow-list or limiter cannot be decided at once, any
 * URL of another shape) goes to fastify unchanged, which stays the one authority on answers.
 *
 * Why it is exact without parsing paths again: the fast path never decides what a path means.
 * When the normal path serves an answer the cache holds (`sendCachedOk`), it tells the fast path
 * which cache key the raw path turned into and which route answered (`learn`). Routing, decoding and
 * the handlers' parameter checks are deterministic functions of the path, so the next request
 * with that exact raw path reaches the same cache key. Only URLs of one strict form are learned
 * and answered: a path starting with `/` without `#` (the router stops at `#`), then exactly
 * `?apikey=` and a value shaped like a key, so fastify's query parser would see that one value
 * and nothing else.
 *
 * The checks, in the key gate's order (key-gate.ts): the key's lookup must be settled and
 * active within its TTL (`verifier.cached`), the client's address on its allow-list (the
 * socket's address; with `--trust-proxy` a key with an allow-list is left to the normal path),
 * and, when a limit applies, a token from an in-process bucket. A denied take changes nothing in
 * a local bucket, so it falls through and the normal path answers 429; a shared (Redis) bucket
 * cannot be asked without spending, so a limited key on it is left to the normal path too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_KEY_LENGTH } from '../internal/api-keys.js';
import type { ApiKeyVerifier } from './auth.js';
import { JSON_CONTENT_TYPE } from './envelope.js';
import type { RateLimiter } from './rate-limiter.js';
import type { ResponseCache } from './response-cache.js';

/** A `node:http` server's `request` listener. */
export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** Records one answer in a route's `/metrics` series (metrics.ts). */
export type RouteRecorder = (method: string, status: number, seconds: number) => void;

export interface FastPath {
  /** The normal path served `request` from cache key `key`, which the cache holds: remember its raw path. */
  learn(request: FastifyRequest, key: string): void;
  /** Answers a plain hit and returns true; false: nothing was written, route it as usual. */
  answer(request: IncomingMessage, response: ServerResponse): boolean;
  /** From now on every request takes the normal path (fastify adds `Connection: close` while closing). */
  close(): void;
  /** Raw paths remembered right now, and requests answered so far (tests). */
  readonly size: number;
  readonly answered: number;
}

export interface FastPathOptions {
  cache: ResponseCache;
  verifier: ApiKeyVerifier;
  limiter: RateLimiter;
  /** True with `--trust-proxy`: the client's address is not the socket's. */
  trustProxy: boolean;
  /** The `/metrics` recorder of a route URL, or null when no metrics are kept. */
  recorder: ((route: string) => RouteRecorder) | null;
}

/** What a raw path turned into on the normal path. */
interface Learned {
  key: string;
  record: RouteRecorder | null;
}

const QUERY_PREFIX = '?apikey=';
/** Longer paths are never remembered: no operation's real path comes near, and a bound keeps memory small. */
const MAX_PATH_LENGTH = 256;

/** The path of `url` when the whole URL has the one form the fast path answers, else undefined. */
export function fastPathOf(url: string): string | undefined {
  const path = url.length - QUERY_PREFIX.length - API_KEY_LENGTH;
  if (path < 1 || path > MAX_PATH_LENGTH || url.charCodeAt(0) !== 0x2f) return undefined;
  if (!url.startsWith(QUERY_PREFIX, path)) return undefined;
  const raw = url.slice(0, path);
  // `?` before the apikey would start the query earlier; `#` ends the router's path early.
  return raw.includes('?') || raw.includes('#') ? undefined : raw;
}

export function createFastPath(options: FastPathOptions): FastPath {
  const { cache, verifier, limiter, trustProxy, recorder } = options;
  // At most as many raw paths as the cache holds answers, the oldest (first) forgotten first. Not
  // cleared with the cache's entries: what a path means does not depend on the data.
  const paths = new Map<string, Learned>();
  const synchronous = limiter.synchronous === true;
  let closing = false;
  let answered = 0;

  return {
    learn(request, key) {
      const path = fastPathOf(request.raw.url ?? '');
      if (path === undefined || paths.get(path)?.key === key) return;
      paths.delete(path);
      while (paths.size >= cache.maxEntries) paths.delete(paths.keys().next().value as string);
      paths.set(path, { key, record: recorder === null ? null : recorder(request.routeOptions.url ?? '') });
    },
    answer(request, response) {
      const started = performance.now();
      if (closing) return false;
      const method = request.method;
      if (method !== 'GET' && method !== 'HEAD') return false;
      const url = request.url ?? '';
      const path = fastPathOf(url);
      if (path === undefined) return false;
      const learned = paths.get(path);
      if (learned === undefined) return false;
      const grant = verifier.cached(url.slice(path.length + QUERY_PREFIX.length));
      if (grant == null) return false;
      if (grant.allowList !== null) {
        const ip = request.socket.remoteAddress;
        if (trustProxy || typeof ip !== 'string' || !grant.allowList.allows(ip)) return false;
      }
      if (grant.limit !== null && !synchronous) return false;
      let body: Buffer | undefined;
      try {
        cache.validate();
        body = cache.get(learned.key);
      } catch {
        // The store failed to say its version: the routed path meets the same failure and answers it.
        return false;
      }
      if (body === undefined) return false;
      let headers: Record<string, string | number>;
      if (grant.limit === null) {
        headers = { 'content-type': JSON_CONTENT_TYPE, 'content-length': String(body.length) };
      } else {
        const decision = limiter.take(grant.id, grant.limit);
        // A denied take spent nothing (see above): the normal path takes again and answers 429.
        if (decision instanceof Promise || !decision.allowed) return false;
        // The order fastify writes them in: the gate's headers, then the type, then the length.
        headers = {
          'x-ratelimit-remaining': decision.remaining,
          'x-ratelimit-burst-capacity': grant.burstHeader,
          'x-ratelimit-replenish-rate': grant.rateHeader,
          'content-type': JSON_CONTENT_TYPE,
          'content-length': String(body.length),
        };
      }
      response.writeHead(200, headers);
      // Node writes no body for a HEAD request; the length says what GET would send.
      if (method === 'HEAD') response.end();
      else response.end(body);
      learned.record?.(method, 200, (performance.now() - started) / 1000);
      answered++;
      return true;
    },
    close() {
      closing = true;
    },
    get size() {
      return paths.size;
    },
    get answered() {
      return answered;
    },
  };
}

/**
 * Puts a fast path in front of `app`: its server's `routeRequest` listener (fastify's, which
 * routes) is replaced by one that tries the fast path first. Listeners prepended before it (the
 * connection-keeping one in app.ts) still run first.
 */
export function installFastPath(
  app: FastifyInstance,
  routeRequest: RequestListener,
  options: FastPathOptions,
): FastPath {
  const fastPath = createFastPath(options);
  app.server.removeListener('request', routeRequest);
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!fastPath.answer(request, response)) routeRequest(request, response);
  });
  // Closing, fastify answers with `Connection: close`: from then on it answers everything.
  app.addHook('preClose', (done) => {
    fastPath.close();
    done();
  });
  return fastPath;
}
