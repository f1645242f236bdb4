/**
 * The API's answers other than success. Each carries its HTTP status and its Tokenview code
 * and message (docs/api.md#errors), so routes throw and never build error JSON by hand;
 * `envelope.ts` turns them into bodies.
 */
import { TokenqueryError } from '../internal/errors.js';

export class ApiError extends TokenqueryError {
  override name = 'ApiError';
  /** HTTP status of the response. */
  readonly httpStatus: number;
  /** Tokenview `code` in the envelope. */
  readonly code: number;
  /** Tokenview `msg` in the envelope: safe to show, never echoes the apikey. */
  readonly msg: string;

  constructor(httpStatus: number, code: number, msg: string) {
    super(msg);
    this.httpStatus = httpStatus;
    this.code = code;
    this.msg = msg;
  }
}

/** `apikey` missing, unknown or revoked. */
export const invalidApiKey = (): ApiError => new ApiError(401, 50003, 'invalid apikey');

/** Rate limit exceeded (the caller adds `Retry-After` and `X-RateLimit-*`). */
export const tooManyRequests = (): ApiError => new ApiError(429, 429, 'too many requests');

/** Chain not one of eth, bsc, kcs, movr, neo, or not configured on this server. */
export const unsupportedCoin = (): ApiError => new ApiError(200, 50001, 'unsupport coin');

/** A request parameter is malformed; `what` says which and why (never echo the raw value). */
export const invalidParameter = (what: string): ApiError =>
  new ApiError(200, 10001, `invalid parameter: ${what}`);

/** The token or asset is unknown to the index. */
export const noData = (): ApiError => new ApiError(200, 404, '无数据');

/** The path matches no operation. */
export const notFound = (): ApiError => new ApiError(404, 404, 'not found');

/** Any method other than GET and HEAD on a known path (sent with `Allow: GET, HEAD`). */
export const methodNotAllowed = (): ApiError =>
  new ApiError(405, 10001, 'invalid parameter: method not allowed');

/** An unexpected fault: the details go to the log, never to the caller. */
export const serverBusy = (): ApiError => new ApiError(500, 40001, 'server is busy');

/**
 * The database cannot be reached right now (down, restarting, refusing connections): the same
 * Tokenview code as {@link serverBusy}, but HTTP 503 with `Retry-After`, since a retry soon succeeds.
 */
export const storeUnavailable = (): ApiError => new ApiError(503, 40001, 'server is busy');
