/**
 * Limits on slow and hostile HTTP clients (`serve`, `start`; docs/reliability.md): how long a
 * request and its headers may take to arrive, how long a connection may sit idle, and how many
 * connections are open at once. Shared by the API, which applies them, and the config, which
 * reads them.
 */
export interface HttpLimits {
  /** The whole request, headers and body, must arrive within this (`--request-timeout`). */
  requestTimeoutMs: number;
  /** The headers must arrive within this, from the request's first byte (`--headers-timeout`). */
  headersTimeoutMs: number;
  /** A connection without traffic either way for this long is closed (`--idle-timeout`). */
  idleTimeoutMs: number;
  /** Connections beyond this many are closed as soon as they are accepted (`--max-connections`). */
  maxConnections: number;
}

export const HTTP_LIMIT_DEFAULTS: Readonly<HttpLimits> = Object.freeze({
  // Every operation is a GET of a short URL: 30 s is far beyond any real client's request.
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  // Above the 60 s idle timeout of common proxies and load balancers, so they close first and
  // never send a request on a connection this side has just closed (fastify's own default).
  idleTimeoutMs: 72_000,
  // Keep it below the process's open-file limit (`ulimit -n`).
  maxConnections: 4096,
});

/** Accepted ranges, for the flags and the config file. */
export const HTTP_LIMIT_RANGES: Readonly<Record<keyof HttpLimits, { minimum: number; maximum: number }>> =
  Object.freeze({
    requestTimeoutMs: { minimum: 100, maximum: 3_600_000 },
    headersTimeoutMs: { minimum: 100, maximum: 3_600_000 },
    idleTimeoutMs: { minimum: 100, maximum: 3_600_000 },
    maxConnections: { minimum: 1, maximum: 1_000_000 },
  });
