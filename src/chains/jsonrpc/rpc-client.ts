/**
 * The JSON-RPC client over HTTP(S): single calls and split batches, retries of transient faults
 * with backoff, typed errors, and an optional scanner that reads big answers from their bytes.
 * How an error object is classified is in `error-classification.ts`; the reading of one HTTP
 * answer in `http-answers.ts`.
 */
import { sleep } from '../../internal/async.js';
import type { Logger } from '../../internal/logger.js';
import type { RpcObserver } from '../../internal/rpc-metrics.js';
import { classifyRpcError, suggestedRangeOf } from './error-classification.js';
import { RangeTooLargeError, RpcResponseError, RpcTransportError } from './errors.js';
import {
  batchMethod,
  bodyText,
  describeNetworkError,
  failureOf,
  isOk,
  isRangeEnvelope,
  isRecord,
  looksLikeJsonRpc,
  parseEndpoint,
  parseErrorObject,
  parseRetryAfter,
  TransientFault,
  tryParseJson,
} from './http-answers.js';
import { createHttpPoster, type HttpAnswer } from './http-post.js';

export { RangeTooLargeError } from './errors.js';

/** Options of {@link createRpcClient}. */
export interface RpcClientOptions {
  /** HTTP(S) JSON-RPC endpoint. `user:pass@` credentials are sent as Basic auth, never logged. */
  url: string;
  logger: Logger;
  /** Per-attempt timeout, covering the whole answer body. Default 30 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt for transient faults. Default 8. */
  maxRetries?: number;
  /** Calls per HTTP request; larger batches are split. Default 100. */
  maxBatchSize?: number;
  /** First backoff ceiling; doubles per attempt (full jitter). Default 250 ms. */
  retryBaseMs?: number;
  /** Backoff cap. Default 5 000 ms. */
  retryMaxMs?: number;
  /** HTTP requests in flight at once for one split batch. Default 4. */
  batchConcurrency?: number;
  /** Aborting it ends retries and in-flight requests at once (shutdown must not wait out a dead node). */
  signal?: AbortSignal;
  /**
   * Called when a call keeps failing (from its third attempt on, when it is also logged as a
   * warning), before the retry: lets the indexer show the fault in `/status` while it lasts,
   * instead of only once the retries run out. `reason` names no URL.
   */
  onPersistentFault?: (fault: { method: string; reason: string }) => void;
  /** Told of every HTTP round trip (method, calls, seconds, how it failed), for `/metrics`. */
  observe?: RpcObserver;
}

export interface RpcBatchCall {
  method: string;
  params: unknown[];
}

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** One answer of a batch, in the order of the calls. */
export type RpcBatchItem = { result: unknown } | { error: RpcErrorObject };

/**
 * Reads a whole answer straight from its bytes (for the biggest answers, where `JSON.parse` and the
 * objects it builds are most of the cost), or returns null to leave the answer to `JSON.parse` and
 * the general path. It is given only HTTP 200 answers, as the bytes received, with the request's
 * id. The answer is made a string only when the general path needs it: for a 3 MB answer that
 * string is a large-object allocation, and those drove the indexer's full garbage collections.
 */
export type AnswerScanner = (bytes: Buffer, id: number) => unknown;

/** What `request` resolves with when its {@link AnswerScanner} read the answer. */
export class ScannedAnswer {
  constructor(readonly value: unknown) {}
}

export interface RpcClient {
  /**
   * One JSON-RPC call. Transient faults are retried; a range/size refusal throws
   * `RangeTooLargeError` at once; other JSON-RPC errors throw `RpcResponseError`.
   * With `scan`, an answer the scanner reads resolves as a {@link ScannedAnswer} instead.
   */
  request<T = unknown>(method: string, params: unknown[], scan?: AnswerScanner): Promise<T>;
  /**
   * JSON-RPC batch, split into requests of at most `maxBatchSize`. Answers come back in call
   * order, matched by id. Per-call errors are returned as `{ error }` items, except
   * rate-limit errors, whose calls are sent again.
   */
  batch(calls: readonly RpcBatchCall[]): Promise<RpcBatchItem[]>;
}

/**
 * A JSON-RPC client over HTTP(S) with retries, batching and typed errors, over `node:http` with
 * keep-alive (see http-post.ts).
 */
export function createRpcClient(options: RpcClientOptions): RpcClient {
  const logger = options.logger;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRetries = options.maxRetries ?? 8;
  const maxBatchSize = Math.max(1, options.maxBatchSize ?? 100);
  const retryBaseMs = options.retryBaseMs ?? 250;
  const retryMaxMs = options.retryMaxMs ?? 5_000;
  const batchConcurrency = Math.max(1, options.batchConcurrency ?? 4);
  const { endpoint, authorization } = parseEndpoint(options.url);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const http = createHttpPoster(endpoint, headers);
  let nextId = 1;

  /**
   * Runs `attemptOnce` until it succeeds or fails for good. `metric` names the method and the
   * number of calls of the next attempt, for the observer.
   */
  async function withRetries<T>(
    label: string,
    attemptOnce: () => Promise<T>,
    metric: { method: string; calls: () => number },
  ): Promise<T> {
    const { observe } = options;
    for (let attempt = 0; ; attempt++) {
      const calls = observe === undefined ? 0 : metric.calls();
      const started = observe === undefined ? 0 : performance.now();
      try {
        const value = await attemptOnce();
        observe?.(metric.method, calls, (performance.now() - started) / 1000, null);
        return value;
      } catch (error) {
        // An attempt cut short by shutdown says nothing about the node.
        if (observe !== undefined && !options.signal?.aborted) {
          observe(metric.method, calls, (performance.now() - started) / 1000, failureOf(error));
        }
        if (!(error instanceof TransientFault)) throw error;
        if (attempt >= maxRetries || options.signal?.aborted) {
          throw new RpcTransportError(`${label} failed after ${attempt + 1} attempts: ${error.message}`, {
            retryable: true,
            status: error.status,
          });
        }
        // Full jitter (AWS architecture blog): spreads retries of many callers evenly.
        const ceiling = Math.min(retryMaxMs, retryBaseMs * 2 ** attempt);
        let delay = Math.random() * ceiling;
        if (error.retryAfterMs !== undefined)
          delay = Math.max(delay, Math.min(error.retryAfterMs, retryMaxMs));
        const log = {
          method: label,
          attempt: attempt + 1,
          reason: error.message,
          delayMs: Math.round(delay),
        };
        if (attempt >= 2) {
          logger.warn(log, 'rpc call failing, retrying');
          options.onPersistentFault?.({ method: label, reason: error.message });
        } else logger.debug(log, 'rpc call failed, retrying');
        await sleep(delay, options.signal);
      }
    }
  }

  /**
   * One HTTP round trip; returns the parsed JSON body (or what `scan` read of it) or throws
   * TransientFault/RpcTransportError.
   */
  async function post(body: string, scan?: { scanner: AnswerScanner; id: number }): Promise<unknown> {
    let response: HttpAnswer;
    const signal = options.signal
      ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)])
      : AbortSignal.timeout(timeoutMs);
    try {
      response = await http.post(body, signal);
    } catch (error) {
      // Aborted: the timeout (or shutdown, which ends retries anyway) cut the round trip short,
      // whichever way the socket then failed.
      const reason = signal.aborted ? `timed out after ${timeoutMs} ms` : describeNetworkError(error);
      throw new TransientFault(reason, { failure: signal.aborted ? 'timeout' : 'network' });
    }
    if (scan !== undefined && response.status === 200) {
      const value = scan.scanner(response.body, scan.id);
      if (value !== null) return new ScannedAnswer(value);
    }
    const parsed = tryParseJson(bodyText(response.body));
    const status = response.status;
    if (status === 429 || status === 408 || status >= 500) {
      // Some providers send a range refusal with a 5xx status; let it through to be classified.
      if (isRangeEnvelope(parsed)) return parsed;
      throw new TransientFault(`HTTP ${status}`, {
        status,
        retryAfterMs: parseRetryAfter(response.retryAfter),
        failure: 'http',
      });
    }
    if (parsed === undefined) {
      if (!isOk(status))
        throw new RpcTransportError(`RPC endpoint answered HTTP ${status}`, { status, retryable: false });
      throw new TransientFault('malformed JSON body', { status });
    }
    if (!isOk(status) && !looksLikeJsonRpc(parsed)) {
      throw new RpcTransportError(`RPC endpoint answered HTTP ${status}`, { status, retryable: false });
    }
    return parsed;
  }

  async function request<T = unknown>(method: string, params: unknown[], scan?: AnswerScanner): Promise<T> {
    return withRetries(
      method,
      async () => {
        const id = nextId++;
        const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
        const answer = await post(body, scan === undefined ? undefined : { scanner: scan, id });
        if (answer instanceof ScannedAnswer) return answer as T;
        if (!isRecord(answer)) throw new TransientFault('answer is not a JSON-RPC response object');
        if (answer.error !== undefined && answer.error !== null) {
          const error = parseErrorObject(answer.error);
          if (error === undefined) throw new TransientFault('malformed JSON-RPC error object');
          const kind = classifyRpcError(error);
          if (kind === 'range') throw new RangeTooLargeError(method, error, suggestedRangeOf(error.message));
          if (kind === 'transient' || kind === 'missing-state') {
            throw new TransientFault(`JSON-RPC error ${error.code}: ${error.message}`, { failure: 'rpc' });
          }
          throw new RpcResponseError(method, error);
        }
        if (!('result' in answer)) throw new TransientFault('answer has neither result nor error');
        if (answer.id !== id) throw new TransientFault('answer id does not match the request');
        return answer.result as T;
      },
      { method, calls: () => 1 },
    );
  }

  /** Sends one chunk (≤ maxBatchSize calls), retrying the calls still unanswered. */
  async function sendChunk(calls: readonly RpcBatchCall[], indices: readonly number[], out: RpcBatchItem[]) {
    let pending = [...indices];
    const label = `batch of ${indices.length} (${calls[indices[0]!]!.method}…)`;
    const metric = { method: batchMethod(calls, indices), calls: () => pending.length };
    await withRetries(
      label,
      async () => {
        const byId = new Map<number, number>();
        const payload = pending.map((index) => {
          const id = nextId++;
          byId.set(id, index);
          const call = calls[index]!;
          return { jsonrpc: '2.0', id, method: call.method, params: call.params };
        });
        const answer = await post(JSON.stringify(payload));
        if (!Array.isArray(answer)) {
          if (isRecord(answer) && answer.error !== undefined) {
            const error = parseErrorObject(answer.error);
            if (error !== undefined && classifyRpcError(error) === 'range') {
              throw new RangeTooLargeError('batch', error, suggestedRangeOf(error.message));
            }
          }
          throw new TransientFault('batch answer is not an array');
        }
        let rateLimited = 0;
        for (const item of answer) {
          if (!isRecord(item) || typeof item.id !== 'number') continue;
          const index = byId.get(item.id);
          if (index === undefined) continue;
          if (item.error !== undefined && item.error !== null) {
            const error = parseErrorObject(item.error);
            if (error === undefined) continue; // malformed item: leave it pending
            if (classifyRpcError(error) === 'transient') {
              rateLimited++;
              continue;
            }
            out[index] = { error };
          } else if ('result' in item) {
            out[index] = { result: item.result };
          } else {
            continue;
          }
          byId.delete(item.id);
        }
        pending = [...byId.values()];
        if (pending.length > 0) {
          throw new TransientFault(
            `${pending.length} of ${payload.length} batch answers missing or rate-limited (${rateLimited} rate-limited)`,
            { failure: rateLimited > 0 ? 'rpc' : 'malformed' },
          );
        }
      },
      metric,
    );
  }

  async function batch(calls: readonly RpcBatchCall[]): Promise<RpcBatchItem[]> {
    const out = new Array<RpcBatchItem>(calls.length);
    const chunks: number[][] = [];
    for (let start = 0; start < calls.length; start += maxBatchSize) {
      const chunk: number[] = [];
      for (let i = start; i < Math.min(calls.length, start + maxBatchSize); i++) chunk.push(i);
      chunks.push(chunk);
    }
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const chunk = chunks[next++]!;
        await sendChunk(calls, chunk, out);
      }
    };
    await Promise.all(Array.from({ length: Math.min(batchConcurrency, chunks.length) }, worker));
    return out;
  }

  return { request, batch };
}
