import { redactUrls, TokenqueryError } from '../../internal/errors.js';

/**
 * Errors of the EVM chain layer. Messages are built from the method name, HTTP status and
 * the provider's own error text (URL-redacted): never from the RPC URL, which may embed
 * credentials or API keys.
 */

/** Base of every RPC fault. `retryable` tells a caller whether trying again later may help. */
export class RpcError extends TokenqueryError {
  override name = 'RpcError';
  readonly retryable: boolean;

  constructor(shortMessage: string, options: { cause?: unknown; details?: string; retryable: boolean }) {
    super(redactUrls(shortMessage), {
      cause: options.cause,
      details: options.details === undefined ? undefined : redactUrls(options.details),
    });
    this.retryable = options.retryable;
  }
}

/**
 * The node could not be reached or kept failing (network error, timeout, HTTP 429/5xx,
 * malformed body) until the retries ran out, or it answered a non-retryable HTTP status
 * (401, 403, 404...). `status` is the last HTTP status seen, when there was one.
 */
export class RpcTransportError extends RpcError {
  override name = 'RpcTransportError';
  readonly status: number | undefined;

  constructor(shortMessage: string, options: { cause?: unknown; status?: number; retryable: boolean }) {
    super(shortMessage, options);
    this.status = options.status;
  }
}

/** The node answered with a JSON-RPC error object that retrying will not fix. */
export class RpcResponseError extends RpcError {
  override name = 'RpcResponseError';
  readonly code: number;
  /** The provider's message, URL-redacted. */
  readonly rpcMessage: string;

  constructor(
    method: string,
    error: { code: number; message: string },
    options: { retryable?: boolean } = {},
  ) {
    super(`${method} failed: JSON-RPC error ${error.code}: ${error.message}`, {
      retryable: options.retryable ?? false,
    });
    this.code = error.code;
    this.rpcMessage = redactUrls(error.message);
  }
}

/**
 * The provider refused an `eth_getLogs` (or other) request because the block range or the
 * answer is too large. Thrown at once, without retry: the caller must split the range.
 */
export class RangeTooLargeError extends RpcError {
  override name = 'RangeTooLargeError';
  readonly code: number;
  /** Largest block count the provider said it accepts, when its message names one. */
  readonly suggestedRange: number | undefined;

  constructor(method: string, error: { code: number; message: string }, suggestedRange: number | undefined) {
    super(`${method}: provider refused the range: ${error.message}`, { retryable: false });
    this.code = error.code;
    this.suggestedRange = suggestedRange;
  }
}

/**
 * The node answered, but the answer is malformed, inconsistent or not there yet (a `null`
 * block from a node that is behind). Retryable: another attempt, or another node behind a
 * load balancer, usually answers correctly.
 */
export class InvalidRpcResponseError extends RpcError {
  override name = 'InvalidRpcResponseError';

  constructor(shortMessage: string, options: { cause?: unknown } = {}) {
    super(shortMessage, { ...options, retryable: true });
  }
}

/**
 * The node has no state at the block asked for ("missing trie node", "header not found", ...): it
 * keeps recent state only, like a full node that is not an archive node. Retryable like any
 * invalid answer (a node behind a load balancer may say so for a moment), but a caller that still
 * gets it after its attempts should take the state as gone.
 */
export class StateUnavailableError extends InvalidRpcResponseError {
  override name = 'StateUnavailableError';
}
