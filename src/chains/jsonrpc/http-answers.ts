/**
 * The RPC client's reading of one HTTP round trip: the endpoint URL and its credentials, the fault
 * worth another attempt and its name in the metrics, the answer body as text and JSON, and the
 * checks of its JSON-RPC shape.
 */
import { isAscii } from 'node:buffer';
import { UserError } from '../../internal/errors.js';
import type { RpcFailure } from '../../internal/rpc-metrics.js';
import { classifyRpcError } from './error-classification.js';
import { RangeTooLargeError, RpcResponseError, RpcTransportError } from './errors.js';
import type { RpcBatchCall, RpcErrorObject } from './rpc-client.js';

/** A fault worth another attempt, for the client's retry loop. */
export class TransientFault extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /** How the round trip failed, for the metrics; default `malformed`. */
  readonly failure: RpcFailure;

  constructor(
    reason: string,
    options: { status?: number; retryAfterMs?: number; failure?: RpcFailure } = {},
  ) {
    super(reason);
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.failure = options.failure ?? 'malformed';
  }
}

/** The metrics' name for how an attempt failed. */
export function failureOf(error: unknown): RpcFailure {
  if (error instanceof TransientFault) return error.failure;
  if (error instanceof RangeTooLargeError) return 'range';
  if (error instanceof RpcResponseError) return 'rpc';
  if (error instanceof RpcTransportError) return 'http';
  return 'malformed';
}

/** A batch's method for the metrics: the one its calls share, or `mixed`. */
export function batchMethod(calls: readonly RpcBatchCall[], indices: readonly number[]): string {
  const method = calls[indices[0]!]!.method;
  return indices.every((i) => calls[i]!.method === method) ? method : 'mixed';
}

/** Splits `user:pass@` out of the URL: credentials go in the Authorization header, never in logs. */
export function parseEndpoint(url: string): { endpoint: string; authorization: string | undefined } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UserError('invalid RPC URL (not a URL)');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UserError(`invalid RPC URL: protocol ${parsed.protocol} is not supported (use http or https)`);
  }
  let authorization: string | undefined;
  if (parsed.username !== '' || parsed.password !== '') {
    const user = decodeURIComponent(parsed.username);
    const pass = decodeURIComponent(parsed.password);
    authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    parsed.username = '';
    parsed.password = '';
  }
  return { endpoint: parsed.toString(), authorization };
}

/** A short reason for a failed round trip, without addresses: error messages can name host and port. */
export function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const own = (error as { code?: unknown }).code;
    if (typeof own === 'string') return `network error (${own})`;
    const cause = (error as { cause?: unknown }).cause;
    const code = isRecord(cause) && typeof cause.code === 'string' ? cause.code : undefined;
    if (code !== undefined) return `network error (${code})`;
    if (cause instanceof Error) return `network error (${cause.name})`;
    return `network error (${error.name})`;
  }
  return 'network error';
}

export function isOk(status: number): boolean {
  return status >= 200 && status < 300;
}

export function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * The body as a string. JSON-RPC answers are nearly always pure ASCII (hex strings, numbers), and
 * then a one-byte (latin1) string is built directly, cheaper to make and to parse than UTF-8
 * decoding (docs/benchmarks.md, "Where the time goes"). Anything else is decoded as UTF-8.
 */
export function bodyText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function looksLikeJsonRpc(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every(isRecord);
  return isRecord(value) && ('result' in value || 'error' in value);
}

export function isRangeEnvelope(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const error = parseErrorObject(value.error);
  return error !== undefined && classifyRpcError(error) === 'range';
}

export function parseErrorObject(value: unknown): RpcErrorObject | undefined {
  if (!isRecord(value)) return undefined;
  const code = typeof value.code === 'number' && Number.isInteger(value.code) ? value.code : undefined;
  const message = typeof value.message === 'string' ? value.message : undefined;
  if (code === undefined || message === undefined) return undefined;
  return value.data === undefined ? { code, message } : { code, message, data: value.data };
}
