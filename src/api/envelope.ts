/**
 * The only place that builds Tokenview JSON: the success envelope, error envelopes and
 * bare-number supply bodies, plus the response schemas fast-json-stringify compiles. (The
 * exceptions: the Transaction List's `data` and the balance entries are serialized by hand in
 * `evm-views.ts` and `neo-views.ts`, tested byte for byte against their schemas.)
 */
import type { FastifyReply } from 'fastify';
import type { ApiError } from './errors.js';
import type { FastPath } from './fast-path.js';
import type { ResponseCache } from './response-cache.js';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** Tokenview's success word. */
export const SUCCESS_MSG = '成功';

/** A JSON schema as fast-json-stringify reads it. */
export type JsonSchema = Record<string, unknown>;

/** Schema helpers: every listed key is required, so a missing field fails loudly (500) instead of vanishing. */
export const schema = {
  string: { type: 'string' } as JsonSchema,
  nullableString: { type: ['string', 'null'] } as JsonSchema,
  integer: { type: 'integer' } as JsonSchema,
  object(properties: Record<string, JsonSchema>): JsonSchema {
    return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
  },
  array(items: JsonSchema): JsonSchema {
    return { type: 'array', items };
  },
};

/** Response schema of a success envelope around `data`. */
export function envelopeSchema(data: JsonSchema): JsonSchema {
  return schema.object({ code: schema.integer, msg: schema.string, data });
}

/** Sends `{"code":1,"msg":"成功","data":...}`; the route's 200 schema serializes it. */
export function sendOk(reply: FastifyReply, data: unknown): FastifyReply {
  return reply.code(200).type(JSON_CONTENT_TYPE).send({ code: 1, msg: SUCCESS_MSG, data });
}

/** The bytes every success envelope starts with; `data` follows, then `}`. */
const OK_PREFIX = Buffer.from(`{"code":1,"msg":${JSON.stringify(SUCCESS_MSG)},"data":`);

/** The success envelope around `data`, serialized by the route's 200 schema, as bytes. */
export function okBody(reply: FastifyReply, data: unknown): Buffer {
  return Buffer.from(reply.code(200).serialize({ code: 1, msg: SUCCESS_MSG, data }) as string);
}

/**
 * The success envelope around `dataJson`, the data's JSON text built by a hand serializer (see
 * `transferListJson`), as bytes. Byte for byte what {@link okBody} gives for the same data. The
 * data text stays one-byte (only `msg` is not Latin-1), so it is measured and copied cheaply.
 */
export function okBodyFromJson(dataJson: string): Buffer {
  const length = Buffer.byteLength(dataJson);
  const body = Buffer.allocUnsafe(OK_PREFIX.length + length + 1);
  OK_PREFIX.copy(body, 0);
  body.write(dataJson, OK_PREFIX.length, length, 'utf8');
  body[body.length - 1] = 0x7d; // }
  return body;
}

/** Where cacheable answers go: the response cache, and the fast path that answers its hits early. */
export interface CachedAnswers {
  responses: ResponseCache | null;
  fastPath: FastPath | null;
}

/**
 * Sends a success envelope: the body the response cache keeps for `key`, or `produce()`'s
 * (kept when the store did not change meanwhile). Without a cache, `produce()`'s every time.
 * Errors `produce` throws are answered as usual and never kept. The fast path learns which key
 * the request's raw path stands for, so that its next hits are answered before routing.
 */
export async function sendCachedOk(
  answers: CachedAnswers,
  reply: FastifyReply,
  key: string,
  produce: () => Promise<Buffer>,
): Promise<FastifyReply> {
  const cache = answers.responses;
  let body: Buffer | undefined;
  if (cache === null) {
    body = await produce();
  } else {
    const version = cache.validate();
    body = cache.get(key);
    let kept = body !== undefined;
    if (body === undefined) {
      body = await produce();
      kept = cache.set(key, body, version);
    }
    // Only a path whose answer the cache holds can be answered before routing. Remembering every
    // routed path would fill the fast path's map, under a crawl of paths asked once each, with
    // paths it never answers (docs/benchmarks.md, Growth: serve's memory under a crawl).
    if (kept) answers.fastPath?.learn(reply.request, key);
  }
  // A Buffer is sent as is: no serializer, and its length needs no UTF-8 measuring.
  return reply.code(200).type(JSON_CONTENT_TYPE).send(body);
}

/** A supply operation's body: the bare decimal number as text/plain, no trailing newline. */
export function sendBareNumber(reply: FastifyReply, text: string): FastifyReply {
  return reply.code(200).type(TEXT_CONTENT_TYPE).send(text);
}

/** The JSON text of an error envelope (`data` is always null). */
export function errorBody(error: ApiError): string {
  return JSON.stringify({ code: error.code, msg: error.msg, data: null });
}

/** Sends an error envelope with the error's HTTP status. Pre-serialized, so no route schema applies to it. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.httpStatus === 405) reply.header('allow', 'GET, HEAD');
  if (error.httpStatus === 503) reply.header('retry-after', '1');
  return reply.code(error.httpStatus).type(JSON_CONTENT_TYPE).send(errorBody(error));
}

/**
 * A complete raw HTTP/1.1 response carrying an error envelope, for sockets fastify never turned
 * into a request. `withBody: false` (a HEAD request, or one whose method is unknown) sends the
 * head alone, with `Content-Length: 0` so that a client of either kind reads it right.
 */
export function rawErrorResponse(
  status: number,
  statusText: string,
  error: ApiError,
  withBody = true,
): string {
  const head = `HTTP/1.1 ${status} ${statusText}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\n`;
  if (!withBody) return `${head}Content-Length: 0\r\nConnection: close\r\n\r\n`;
  const body = errorBody(error);
  return `${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
