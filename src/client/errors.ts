/**
 * What the client throws. Every error is a {@link TokenqueryClientError}; the server's own
 * answers (Tokenview error envelopes) are {@link TokenqueryApiError}s with the envelope's
 * `code`, one subclass per code of docs/api.md#errors, so callers can `instanceof` or switch on
 * `code`. No message ever contains the API key: the client redacts it from anything a server
 * or the network layer could echo.
 */

/** Base of every error the client throws (a caller's own abort rejects with the signal's reason instead). */
export class TokenqueryClientError extends Error {
  override name = 'TokenqueryClientError';
  /** One line, safe to show. `message` may add `details` below it. */
  readonly shortMessage: string;
  /** More about what happened (for example, which field of an answer was wrong). */
  readonly details: string | undefined;
  /** The operation the client was performing, e.g. `evm.tokenInfo`. */
  readonly operation: string;
  /** Path of the request, without the query string (which holds the API key). */
  readonly path: string;

  constructor(
    shortMessage: string,
    context: { operation: string; path: string; details?: string; cause?: unknown },
  ) {
    super(context.details ? `${shortMessage}\n\nDetails: ${context.details}` : shortMessage, {
      cause: context.cause,
    });
    this.shortMessage = shortMessage;
    this.details = context.details;
    this.operation = context.operation;
    this.path = context.path;
  }
}

/** Codes of the Tokenview error envelopes (docs/api.md#errors). */
export const TOKENVIEW_ERROR_CODES = {
  /** Bad parameter: page or size outside 1..50, malformed or upper-case address. HTTP 200. */
  invalidParameter: 10001,
  /** Unexpected server fault. HTTP 500. */
  serverBusy: 40001,
  /** Token or asset unknown to the index (HTTP 200), or a path that matches no operation (HTTP 404). */
  noData: 404,
  /** Rate limit exceeded. HTTP 429. */
  tooManyRequests: 429,
  /** Chain not served. HTTP 200. */
  unsupportedCoin: 50001,
  /** `apikey` missing, unknown or revoked. HTTP 401. */
  invalidApiKey: 50003,
} as const;

/** A code from {@link TOKENVIEW_ERROR_CODES}. */
export type TokenviewErrorCode = (typeof TOKENVIEW_ERROR_CODES)[keyof typeof TOKENVIEW_ERROR_CODES];

interface ApiErrorInit {
  operation: string;
  path: string;
  httpStatus: number;
  /** The envelope's `msg`. */
  message: string;
}

/**
 * The server answered with a Tokenview error envelope (`{"code":…,"msg":…,"data":null}`).
 * `message` is the server's `msg`; the subclasses below narrow `code`.
 */
export class TokenqueryApiError extends TokenqueryClientError {
  override name = 'TokenqueryApiError';
  /** The envelope's `code` (never 1). */
  readonly code: number;
  /**
   * HTTP status of the answer (docs/api.md#error-codes-and-statuses: 200 for most codes, 401,
   * 404, 429, 500 for some).
   */
  readonly httpStatus: number;

  constructor(code: number, init: ApiErrorInit) {
    super(init.message, { operation: init.operation, path: init.path });
    this.code = code;
    this.httpStatus = init.httpStatus;
  }
}

/** 10001 `invalid parameter: …`: page or size outside 1..50, a malformed or upper-case address. */
export class InvalidParameterError extends TokenqueryApiError {
  override name = 'InvalidParameterError';
  declare readonly code: 10001;
}

/** 40001 `server is busy`: an unexpected fault on the server. */
export class ServerBusyError extends TokenqueryApiError {
  override name = 'ServerBusyError';
  declare readonly code: 40001;
}

/** 404 `无数据` with HTTP 200: the token or asset is unknown to the index (or has no supply figure). */
export class NoDataError extends TokenqueryApiError {
  override name = 'NoDataError';
  declare readonly code: 404;
}

/** 404 `not found` with HTTP 404: the server has no such operation (a path it does not serve). */
export class NotFoundError extends TokenqueryApiError {
  override name = 'NotFoundError';
  declare readonly code: 404;
  declare readonly httpStatus: 404;
}

/** 429 `too many requests`: slow down; `retryAfterSeconds` is the server's `Retry-After` when given. */
export class TooManyRequestsError extends TokenqueryApiError {
  override name = 'TooManyRequestsError';
  declare readonly code: 429;
  /** Seconds to wait before retrying, from `Retry-After`; null when absent or not a number of seconds. */
  readonly retryAfterSeconds: number | null;

  constructor(code: number, init: ApiErrorInit & { retryAfterSeconds: number | null }) {
    super(code, init);
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** 50001 `unsupport coin`: the chain is not served by this server. */
export class UnsupportedCoinError extends TokenqueryApiError {
  override name = 'UnsupportedCoinError';
  declare readonly code: 50001;
}

/** 50003 `invalid apikey`: the key is missing, unknown or revoked (HTTP 401). */
export class InvalidApiKeyError extends TokenqueryApiError {
  override name = 'InvalidApiKeyError';
  declare readonly code: 50003;
}

/** Every API error with a code of docs/api.md#errors, discriminated by `code` (404 by `httpStatus` too). */
export type KnownApiError =
  | InvalidParameterError
  | ServerBusyError
  | NoDataError
  | NotFoundError
  | TooManyRequestsError
  | UnsupportedCoinError
  | InvalidApiKeyError;

/**
 * The typed error for an envelope's code: a subclass for the codes of docs/api.md#errors, the
 * base class otherwise.
 */
export function apiErrorFor(
  code: number,
  init: ApiErrorInit & { retryAfterSeconds: number | null },
): TokenqueryApiError {
  const { retryAfterSeconds, ...rest } = init;
  switch (code) {
    case TOKENVIEW_ERROR_CODES.invalidParameter:
      return new InvalidParameterError(code, rest);
    case TOKENVIEW_ERROR_CODES.serverBusy:
      return new ServerBusyError(code, rest);
    case TOKENVIEW_ERROR_CODES.noData:
      // One code, two meanings: the router's 404 (no such path) is the only one sent as HTTP 404.
      return init.httpStatus === 404 ? new NotFoundError(code, rest) : new NoDataError(code, rest);
    case TOKENVIEW_ERROR_CODES.tooManyRequests:
      return new TooManyRequestsError(code, init);
    case TOKENVIEW_ERROR_CODES.unsupportedCoin:
      return new UnsupportedCoinError(code, rest);
    case TOKENVIEW_ERROR_CODES.invalidApiKey:
      return new InvalidApiKeyError(code, rest);
    default:
      return new TokenqueryApiError(code, rest);
  }
}

/**
 * The server's answer does not follow the contract: not JSON, a missing or mistyped field,
 * an amount that is not exact decimal text, an unexpected HTTP status or a redirect. Usually
 * a wrong `baseUrl` (a proxy, a login page) or a server that is not Tokenview-compatible.
 */
export class TokenqueryResponseError extends TokenqueryClientError {
  override name = 'TokenqueryResponseError';
  /** HTTP status of the answer. */
  readonly httpStatus: number;
  /** The start of the body (at most 200 characters, API key redacted), to recognise what answered. */
  readonly bodyExcerpt: string;

  constructor(
    shortMessage: string,
    context: { operation: string; path: string; details?: string; httpStatus: number; bodyExcerpt: string },
  ) {
    super(shortMessage, context);
    this.httpStatus = context.httpStatus;
    this.bodyExcerpt = context.bodyExcerpt;
  }
}

/** The request did not get an answer: connection refused or reset, DNS failure, and so on (see `cause`). */
export class TokenqueryNetworkError extends TokenqueryClientError {
  override name = 'TokenqueryNetworkError';
}

/** No complete answer within `timeoutMs`. */
export class TokenqueryTimeoutError extends TokenqueryNetworkError {
  override name = 'TokenqueryTimeoutError';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, context: { operation: string; path: string }) {
    super(`${context.operation}: no answer within ${timeoutMs} ms (GET ${context.path})`, context);
    this.timeoutMs = timeoutMs;
  }
}
