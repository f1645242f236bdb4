/**
 * Slow and malformed clients, for the API and the operator views' instances alike: fastify's
 * slow-client options, and the raw answers to requests Node's HTTP parser refuses or times out
 * (no request object exists for them, and what may be a HEAD gets no body).
 */
import { type IncomingMessage, METHODS, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpLimits } from '../internal/http-limits.js';
import type { Logger } from '../internal/logger.js';
import { rawErrorResponse } from './envelope.js';
import { ApiError } from './errors.js';

/**
 * Failures of the HTTP parser itself, and Node's request and headers timeouts: no request
 * object exists for them, so they are answered on the raw socket, after any answer still being
 * made on it (writing earlier would corrupt that answer).
 */
function answerClientErrors(log: Logger) {
  return (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    log.trace({ code: error.code }, 'client error');
    const incoming = (socket as Socket & { parser?: { incoming?: IncomingMessage | null } }).parser?.incoming;
    // A request whose headers were read and whose body failed or ran out of time was routed as
    // a request: it has its answer, and the connection just closes.
    const response = incoming != null && !incoming.complete ? undefined : clientErrorResponse(error);
    afterAnswersInFlight(socket, () => {
      if (response !== undefined && socket.writable) socket.end(response);
      socket.destroy();
    });
  };
}

/**
 * Fastify's options for the slow-client limits, the same on the API and the operator views' own
 * instance. Node's request and headers timeouts (checked every connectionsCheckingInterval) end
 * requests that arrive too slowly; the idle timeout closes quiet connections, between requests
 * (keep-alive) and within one (a client that neither sends nor reads); a request the parser
 * refuses gets its raw answer (never a body for what may be a HEAD).
 */
export function slowClientOptions(limits: HttpLimits, log: Logger) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    http: {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    clientErrorHandler: answerClientErrors(log),
  };
}

/** The raw answer to a request the parser refused; with the envelope only when it cannot be a HEAD. */
function clientErrorResponse(error: Error & { code?: string; rawPacket?: unknown }): string {
  const withBody = !mayBeHead(error);
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const e = new ApiError(431, 10001, 'invalid parameter: request header fields too large');
    return rawErrorResponse(431, 'Request Header Fields Too Large', e, withBody);
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const e = new ApiError(408, 10001, 'invalid parameter: request timeout');
    return rawErrorResponse(408, 'Request Timeout', e, withBody);
  }
  const e = new ApiError(400, 10001, 'invalid parameter: malformed request');
  return rawErrorResponse(400, 'Bad Request', e, withBody);
}

const HTTP_METHODS = new Set(METHODS);

/**
 * Whether a request the parser refused may be a HEAD, whose answer must have no body. The parser
 * gives no method before the headers are complete; only the bytes of the failing read are known
 * (none for a timeout). So the envelope is sent only when those bytes start with a request line
 * of another method and hold no HEAD request line further on (a pipelined one).
 */
function mayBeHead(error: { code?: string; rawPacket?: unknown }): boolean {
  // Not a method the parser knows, so not a HEAD.
  if (error.code === 'HPE_INVALID_METHOD') return false;
  if (!Buffer.isBuffer(error.rawPacket)) return true;
  const text = error.rawPacket.toString('latin1');
  const method = /^(?:\r?\n)*([A-Z-]+) /.exec(text)?.[1];
  return method === undefined || method === 'HEAD' || !HTTP_METHODS.has(method) || /\nHEAD /.test(text);
}

/**
 * Runs `then` once no answer is being made on `socket`: a request read before the failing one may
 * still be answered (pipelining), and its answer goes first. Node attaches queued answers to the
 * socket as each finishes, so this waits for each in turn.
 */
function afterAnswersInFlight(socket: Socket, then: () => void): void {
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight == null || inFlight.writableFinished) {
    then();
    return;
  }
  let waited = false;
  const next = () => {
    if (waited) return;
    waited = true;
    afterAnswersInFlight(socket, then);
  };
  // 'close' too: an answer cut short never finishes.
  inFlight.once('finish', next).once('close', next);
}
