/**
 * The checks every keyed request passes before its handler (and so before the response cache;
 * fast-path.ts makes the same ones, in the same order, for the hits it answers before routing):
 * the key is active, the client's address is on the key's allow-list, and the key's bucket
 * has a token. In that order, so a caller from a refused address learns nothing about the
 * key and cannot spend its owner's requests. A key that is rate-limited gets the
 * `X-RateLimit-*` headers Tokenview sends on every answer; a refused one gets 429 with
 * `Retry-After` as well. Keys without a limit get no such headers.
 *
 * Requests that fail the first two checks (no key, a value that is no key, an unknown or
 * revoked key, a key used from outside its allow-list) take a token from their client
 * address's bucket, and are answered 429 once it is empty: an address cannot turn a stream of
 * made-up keys into a stream of store reads. The bucket is in-process even with `--redis`: it
 * protects this process's store connection, and a shared one would cost a Redis round trip on
 * exactly the requests it exists to make cheap.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientNetwork } from '../internal/ip-allow-list.js';
import type { RateLimit } from '../internal/rate-limit.js';
import type { ApiKeyVerifier, KeyGrant } from './auth.js';
import { invalidApiKey, tooManyRequests } from './errors.js';
import type { LocalRateLimiter, RateDecision, RateLimiter } from './rate-limiter.js';

/** Called once: with nothing to go on to the handler, with an error (an `ApiError`, or a store failure) to answer it. */
export type GateDone = (error?: Error) => void;

export interface KeyGate {
  /** Runs the checks for `apikey` (the raw query value) and calls `done` once. */
  check(apikey: unknown, request: FastifyRequest, reply: FastifyReply, done: GateDone): void;
}

/**
 * The per-address limit when none is configured: ten failures a second, as many at once. Far
 * above what a client that has a key but mistyped it needs to see its error, far below what
 * turns made-up keys into load on the store.
 */
export const DEFAULT_ANONYMOUS_RATE_LIMIT: RateLimit = Object.freeze({ perSecond: 10, burst: 10 });

/** The per-address limit of requests without a valid key. */
export interface AnonymousLimit {
  limit: RateLimit;
  /** Buckets, named by client network (`clientNetwork`). */
  limiter: LocalRateLimiter;
}

export function createKeyGate(options: {
  verifier: ApiKeyVerifier;
  limiter: RateLimiter;
  /** Absent or null: requests without a valid key are not limited. */
  anonymous?: AnonymousLimit | null;
}): KeyGate {
  const { verifier, limiter } = options;
  const anonymous = options.anonymous ?? null;

  /** `charged`: this request already took its address's token (while its key was looked up). */
  function admit(
    grant: KeyGrant | null,
    request: FastifyRequest,
    reply: FastifyReply,
    done: GateDone,
    charged: boolean,
  ): void {
    if (grant === null) {
      refuse(request, reply, done, charged);
      return;
    }
    if (grant.allowList !== null) {
      // `request.ip` is the socket's address, or with --trust-proxy the forwarded client's.
      const ip: unknown = request.ip;
      if (typeof ip !== 'string' || !grant.allowList.allows(ip)) {
        refuse(request, reply, done, charged);
        return;
      }
    }
    // A valid key does not count against its address.
    if (charged) anonymous!.limiter.refund(addressOf(request), anonymous!.limit);
    if (grant.limit === null) {
      done();
      return;
    }
    const decision = limiter.take(grant.id, grant.limit);
    if (decision instanceof Promise) decision.then((d) => answer(grant, d, reply, done), done);
    else answer(grant, decision, reply, done);
  }

  /** 401, or 429 when the address has no failure left. */
  function refuse(request: FastifyRequest, reply: FastifyReply, done: GateDone, charged: boolean): void {
    if (charged || anonymous === null) {
      done(invalidApiKey());
      return;
    }
    const decision = anonymous.limiter.take(addressOf(request), anonymous.limit);
    if (decision.allowed) done(invalidApiKey());
    else tooMany(decision, reply, done);
  }

  function answer(grant: KeyGrant, decision: RateDecision, reply: FastifyReply, done: GateDone): void {
    reply.header('x-ratelimit-remaining', decision.remaining);
    reply.header('x-ratelimit-burst-capacity', grant.burstHeader);
    reply.header('x-ratelimit-replenish-rate', grant.rateHeader);
    if (decision.allowed) {
      done();
      return;
    }
    tooMany(decision, reply, done);
  }

  function tooMany(decision: RateDecision, reply: FastifyReply, done: GateDone): void {
    reply.header('retry-after', decision.retryAfterSeconds);
    done(tooManyRequests());
  }

  return {
    check(apikey, request, reply, done) {
      // A lookup settled within its TTL answers without a promise round trip (the hot path).
      const known = verifier.cached(apikey);
      if (known !== undefined) {
        admit(known, request, reply, done, false);
        return;
      }
      // A store read for a key not known to be real takes the address's token first: an address
      // without one gets 429 and costs no read. A real key gets its token back in `admit`.
      let charged = false;
      if (anonymous !== null && !verifier.known(apikey)) {
        const decision = anonymous.limiter.take(addressOf(request), anonymous.limit);
        if (!decision.allowed) {
          tooMany(decision, reply, done);
          return;
        }
        charged = true;
      }
      verifier.verify(apikey).then((grant) => admit(grant, request, reply, done, charged), done);
    },
  };
}

/** The bucket of a request's client (see `clientNetwork`); `request.ip` is trust-proxy aware. */
function addressOf(request: FastifyRequest): string {
  const ip: unknown = request.ip;
  return typeof ip === 'string' ? clientNetwork(ip) : '';
}
