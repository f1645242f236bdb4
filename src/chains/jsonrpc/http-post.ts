/**
 * One JSON-RPC POST over `node:http`/`node:https` with a keep-alive agent.
 *
 * The global `fetch` (undici) was the first choice, but a backfill reads megabytes of
 * `eth_getLogs` answers per second, and undici's web streams cost client CPU there that
 * `node:http` does not (docs/benchmarks.md, "Where the time goes", change 8).
 */
import http from 'node:http';
import https from 'node:https';

/** An answer: status, the `Retry-After` header if any, and the body. */
export interface HttpAnswer {
  status: number;
  retryAfter: string | undefined;
  body: Buffer;
}

export interface HttpPoster {
  /** POSTs `body`; rejects on network faults and when `signal` aborts (with its reason as `cause`). */
  post(body: string, signal: AbortSignal): Promise<HttpAnswer>;
}

/** A poster for `endpoint` (http or https, no credentials in it) sending `headers` with every request. */
export function createHttpPoster(endpoint: string, headers: Record<string, string>): HttpPoster {
  const url = new URL(endpoint);
  const secure = url.protocol === 'https:';
  const transport = secure ? https : http;
  // Keep-alive, as fetch does: a backfill keeps several requests in flight, one socket each.
  const agent = new transport.Agent({ keepAlive: true });
  return {
    post(body, signal) {
      return new Promise<HttpAnswer>((resolve, reject) => {
        const request = transport.request(
          url,
          {
            method: 'POST',
            agent,
            signal,
            headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => {
              const retryAfter = response.headers['retry-after'];
              resolve({
                status: response.statusCode ?? 0,
                retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
                body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
              });
            });
            response.on('error', reject);
            // A connection cut mid-body ends without 'end' (and, on some versions, without 'error').
            response.on('close', () => {
              if (!response.complete)
                reject(Object.assign(new Error('answer cut short'), { code: 'ECONNRESET' }));
            });
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    },
  };
}
