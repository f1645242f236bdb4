/**
 * The checks every keyed request passes before its handler (and so before the response cache):
 * the key is active, the client's address is on the key's allow-list, and the key's bucket
 * has a token. In that order, so a caller from a refused address learns nothing about the
 * key and cannot spend its owner's requests. A key that is rate-limited gets the
 * `X-RateLimit-*` headers Tokenview sends on every answer; a refused one gets 429 with
 * `Retry-After` as well. Keys without a limit get no such headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyVerifier, KeyGrant } from './auth.js';
import { invalidApiKey, tooManyRequests } from './errors.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

/** Called once: with nothing to go on to the handler, with an error (an `ApiError`, or a store failure) to answer it. */
export type GateDone = (error?: Error) => void;

export interface KeyGate {
  /** Runs the checks for `apikey` (the raw query value) and calls `done` once. */
  check(apikey: unknown, request: FastifyRequest, reply: FastifyReply, done: GateDone): void;
}

export function createKeyGate(options: { verifier: ApiKeyVerifier; limiter: RateLimiter }): KeyGate {
  const { verifier, limiter } = options;

  function admit(grant: KeyGrant | null, request: FastifyRequest, reply: FastifyReply, done: GateDone): void {
    if (grant === null) {
      done(invalidApiKey());
      return;
    }
    if (grant.allowList !== null) {
      // `request.ip` is the socket's address, or with --trust-proxy the forwarded client's.
      const ip: unknown = request.ip;
      if (typeof ip !== 'string' || !grant.allowList.allows(ip)) {
        done(invalidApiKey());
        return;
      }
    }
    if (grant.limit === null) {
      done();
      return;
    }
    const decision = limiter.take(grant.id, grant.limit);
    if (decision instanceof Promise) decision.then((d) => answer(grant, d, reply, done), done);
    else answer(grant, decision, reply, done);
  }

  function answer(grant: KeyGrant, decision: RateDecision, reply: FastifyReply, done: GateDone): void {
    reply.header('x-ratelimit-remaining', decision.remaining);
    reply.header('x-ratelimit-burst-capacity', grant.burstHeader);
    reply.header('x-ratelimit-replenish-rate', grant.rateHeader);
    if (decision.allowed) {
      done();
      return;
    }
    reply.header('retry-after', decision.retryAfterSeconds);
    done(tooManyRequests());
  }

  return {
    check(apikey, request, reply, done) {
      // A lookup settled within its TTL answers without a promise round trip (the hot path).
      const known = verifier.cached(apikey);
      if (known !== undefined) {
        admit(known, request, reply, done);
        return;
      }
      verifier.verify(apikey).then((grant) => admit(grant, request, reply, done), done);
    },
  };
}
