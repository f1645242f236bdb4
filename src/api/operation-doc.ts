/**
 * What an operation's route says about itself for the OpenAPI document (openapi.ts reads it):
 * written beside the handler, in the route's `config`, so each URL is written once. It is
 * document-only: route schemas, which fastify validates and serializes with, are not touched.
 */
import type { JsonSchema } from './envelope.js';

export type Family = 'EVM' | 'NEO' | 'Service';

/** Errors answered with HTTP 200 (Tokenview puts most error codes in a 200 envelope). */
export type InBandError = 'unsupportedCoin' | 'invalidParameter' | 'noData';

export interface OperationDoc {
  operationId: string;
  summary: string;
  /** The document's tag. */
  family: Family;
  description?: string;
  /**
   * `envelope` (default): a success envelope whose schema is the route's own 200 schema;
   * `number`: a bare decimal number as text/plain (the supply operations);
   * `json`: plain JSON described by `bodySchema` (service routes, which have no route schema).
   */
  body?: 'envelope' | 'number' | 'json';
  bodySchema?: JsonSchema;
  /** The 200-envelope errors the operation can answer, besides the ones every operation can. */
  errors: readonly InBandError[];
  /** Responses besides 200 and the ones every operation has (401, 429 and 500), by HTTP status. */
  responses?: Record<number, JsonSchema>;
}

/**
 * A route's documentation: its operation, or `alias` for a route that answers an operation
 * documented under another path (it stays out of the document).
 */
export type RouteDoc = OperationDoc | 'alias';

/** What a documented route carries in its config, under `openapi`. */
export interface RouteOpenApi {
  doc: RouteDoc;
  /** Needs the `apikey` query parameter. */
  auth: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    openapi?: RouteOpenApi;
  }
}

export const ALL_IN_BAND: readonly InBandError[] = ['unsupportedCoin', 'invalidParameter', 'noData'];
export const LISTS: readonly InBandError[] = ['unsupportedCoin', 'invalidParameter'];

/** Description of a supply operation that answers `what`. */
export const supplyNote = (what: string): string =>
  `${what}, decimal-adjusted, as a bare number in a text/plain body (no envelope, no trailing ` +
  'newline). Errors are JSON envelopes as elsewhere; a token whose `totalSupply()` could not be ' +
  'read answers 404 `无数据`.';
