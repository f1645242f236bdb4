/**
 * The OpenAPI 3.1 document of the API, served at `/openapi.json` (no key needed).
 *
 * It is generated from fastify's route table by @fastify/swagger: every route registered after
 * {@link registerOpenApi} is collected with the schema fastify compiled for it, so each 200 body
 * is described by the very schema that serializes it. What a route schema cannot say (summaries,
 * which Tokenview errors an operation answers, the bare-number bodies of the supply operations)
 * each route says in its config (`openapi`, see operation-doc.ts); path parameters and the
 * responses every operation shares are added here. All of it goes only to the document: route
 * schemas are read, never changed, so validation and serialization stay exactly as they are.
 * A `/vipapi/` route without its documentation fails the build of the document.
 */
import { readFileSync } from 'node:fs';
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { EVM_CHAINS, isEvmChain } from '../internal/chains.js';
import { errorBody, JSON_CONTENT_TYPE, type JsonSchema } from './envelope.js';
import {
  ApiError,
  invalidApiKey,
  invalidParameter,
  noData,
  notFound,
  serverBusy,
  storeUnavailable,
  tooManyRequests,
  unsupportedCoin,
} from './errors.js';
import type { Family, InBandError, OperationDoc } from './operation-doc.js';
import {
  EVM_ADDRESS,
  MAX_PAGE,
  MAX_PAGE_SIZE,
  NEO_ADDRESS,
  NEO_HASH,
  parseEvmAddress,
  parseNeoAddress,
  parseNeoHash,
  parsePaging,
} from './params.js';

/** Where the document is served. */
export const OPENAPI_PATH = '/openapi.json';

/** Name of the API-key security scheme in the document. */
export const API_KEY_SCHEME = 'apikey';

/** The errors, by the factories that make them, so codes and messages come from one place. */
const IN_BAND_ERRORS: Record<InBandError, { error: ApiError; when: string; msgIsPrefix?: boolean }> = {
  unsupportedCoin: { error: unsupportedCoin(), when: 'the chain is not served by this server' },
  invalidParameter: {
    error: invalidParameter(''),
    when: 'a path parameter is malformed; the message says which and why',
    msgIsPrefix: true,
  },
  noData: { error: noData(), when: 'the token or asset is unknown to the index' },
};

/**
 * JSON schema of one error envelope: its code and message exactly (or the message's fixed
 * prefix), `data: null`; `example` is a real answer of this kind.
 */
function errorSchema(error: ApiError, msgIsPrefix = false, example: ApiError = error): JsonSchema {
  return {
    title: `${error.code} ${msgIsPrefix ? `${error.msg}…` : error.msg}`,
    type: 'object',
    additionalProperties: false,
    required: ['code', 'msg', 'data'],
    properties: {
      code: { const: error.code },
      msg: msgIsPrefix ? { type: 'string', pattern: `^${escapeRegExp(error.msg)}` } : { const: error.msg },
      data: { type: 'null' },
    },
    examples: [JSON.parse(errorBody(example))],
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What the handlers answer for a malformed first parameter of `url` (an example message). */
function parameterError(url: string, family: Family): ApiError {
  try {
    if (isAddressOperation(url)) {
      if (family === 'NEO') parseNeoAddress('');
      else parseEvmAddress('');
    } else if (url.includes('/:address')) {
      if (family === 'NEO') parseNeoHash('');
      else parseEvmAddress('');
    } else {
      parsePaging('0', '1');
    }
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  return invalidParameter('malformed path parameter');
}

/** The address operations: their `:address` is the holder's address, and `:token` the token's. */
const isAddressOperation = (url: string): boolean => url.includes('/address/');

/** A response with an error envelope only. */
function errorResponse(error: ApiError, description: string): JsonSchema {
  return { description, content: { 'application/json': { schema: errorSchema(error) } } };
}

/** Path parameters, in URL order, as the handlers validate them (patterns shared with params.ts). */
function paramsSchema(url: string, family: Family, chains: readonly string[]): JsonSchema | undefined {
  const names = url
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));
  if (names.length === 0) return undefined;
  const served = chains.filter(isEvmChain);
  const properties: Record<string, JsonSchema> = {};
  for (const name of names) {
    if (name === 'chain') {
      properties[name] = {
        type: 'string',
        enum: [...EVM_CHAINS],
        ...(served[0] === undefined ? {} : { default: served[0] }),
        description:
          `EVM chain abbreviation. This server serves: ${served.length > 0 ? served.join(', ') : 'none'}; ` +
          'the others answer 50001.',
      };
    } else if (name === 'address' && isAddressOperation(url)) {
      properties[name] =
        family === 'EVM'
          ? {
              type: 'string',
              pattern: EVM_ADDRESS.source,
              description: 'The address asked about: `0x` and 40 lower-case hex digits.',
            }
          : {
              type: 'string',
              pattern: NEO_ADDRESS.source,
              description:
                'The address asked about: a NEO 2.x base58check address (34 characters starting with `A`, checksum verified).',
            };
    } else if (name === 'token' && family === 'EVM') {
      properties[name] = {
        type: 'string',
        pattern: EVM_ADDRESS.source,
        description: 'Token contract address: `0x` and 40 lower-case hex digits.',
      };
    } else if (name === 'token' && family === 'NEO') {
      properties[name] = {
        type: 'string',
        pattern: NEO_HASH.source,
        description:
          'NEP-5 script hash (40 hex digits) or global asset id (64 hex digits), with or without `0x`, either case.',
      };
    } else if (name === 'address' && family === 'EVM') {
      properties[name] = {
        type: 'string',
        pattern: EVM_ADDRESS.source,
        description: 'Token contract address: `0x` and 40 lower-case hex digits.',
      };
    } else if (name === 'address' && family === 'NEO') {
      properties[name] = {
        type: 'string',
        pattern: NEO_HASH.source,
        description:
          'NEP-5 script hash (40 hex digits) or global asset id (64 hex digits), with or without `0x`, either case.',
      };
    } else if (name === 'page' || name === 'size') {
      const max = name === 'page' ? MAX_PAGE : MAX_PAGE_SIZE;
      properties[name] = {
        type: 'integer',
        minimum: 1,
        maximum: max,
        default: 1,
        description:
          name === 'page'
            ? `Page number, 1 to ${max}.`
            : `Entries per page, 1 to ${max}. Plain decimal digits; anything else is 10001.`,
      };
    } else {
      throw new Error(`openapi: no documentation for path parameter :${name} of ${url}`);
    }
  }
  return { type: 'object', required: names, properties };
}

/** The document-only schema of one documented GET route. */
function operationSchema(
  url: string,
  doc: OperationDoc,
  auth: boolean,
  route: RouteOptions,
  chains: readonly string[],
) {
  const body = doc.body ?? 'envelope';
  const routeResponse = (route.schema?.response as Record<string, JsonSchema> | undefined)?.['200'];
  const example = parameterError(url, doc.family);
  const inBandSchemas = doc.errors.map((name) => {
    const { error, msgIsPrefix } = IN_BAND_ERRORS[name];
    return errorSchema(error, msgIsPrefix, msgIsPrefix ? example : error);
  });
  const inBand = doc.errors.map((name) => IN_BAND_ERRORS[name]);
  let success: JsonSchema;
  let content: Record<string, { schema: JsonSchema }>;
  if (body === 'envelope') {
    if (routeResponse === undefined) throw new Error(`openapi: route ${url} has no 200 response schema`);
    success = routeResponse;
    content = {
      'application/json': {
        schema: inBand.length === 0 ? success : { oneOf: [success, ...inBandSchemas] },
      },
    };
  } else if (body === 'number') {
    if (routeResponse !== undefined) throw new Error(`openapi: route ${url} is documented as text`);
    content = {
      'text/plain': {
        schema: {
          type: 'string',
          pattern: '^[0-9]+(\\.[0-9]*[1-9])?$',
          description: 'Decimal number, no exponent, no trailing zeros after the point.',
          examples: ['21000000.5'],
        },
      },
      'application/json': {
        schema: { oneOf: inBandSchemas },
      },
    };
  } else {
    if (doc.bodySchema === undefined) throw new Error(`openapi: ${url} documents no body schema`);
    content = { 'application/json': { schema: doc.bodySchema } };
  }

  const codes = inBand.map((e) => `\`${e.error.code}\` ${e.when}`);
  const response: Record<string, JsonSchema> = {
    200: {
      description:
        body === 'number'
          ? `The number; or, as JSON with HTTP 200, the error envelope: ${codes.join('; ')}.`
          : codes.length > 0
            ? `Success envelope (\`code\` 1), or an error envelope with HTTP 200: ${codes.join('; ')}.`
            : 'OK',
      content,
    },
  };
  Object.assign(response, doc.responses);
  if (auth) {
    response[401] = errorResponse(invalidApiKey(), '`apikey` missing, unknown or revoked.');
    response[429] = {
      ...errorResponse(
        tooManyRequests(),
        "Rate limit exceeded (only when rate limits are configured for the key). `X-RateLimit-*` headers describe the key's limit.",
      ),
      headers: { 'Retry-After': { type: 'integer', description: 'Seconds until a request may succeed.' } },
    };
  }
  response[500] = errorResponse(serverBusy(), 'Unexpected server fault (details go to the log only).');
  response[503] = {
    ...errorResponse(storeUnavailable(), 'The database cannot be reached right now (down or restarting), or cancelled the query to be tried again (a read replica replaying, a deadlock).'),
    headers: { 'Retry-After': { type: 'integer', description: 'Seconds until a request may succeed.' } },
  };

  const params = paramsSchema(url, doc.family, chains);
  const schema: FastifySchema = {
    operationId: doc.operationId,
    summary: doc.summary,
    tags: [doc.family],
    ...(doc.description === undefined ? {} : { description: doc.description }),
    ...(params === undefined ? {} : { params }),
    ...(auth ? { security: [{ [API_KEY_SCHEME]: [] }] } : { security: [] }),
    response,
  };
  return schema;
}

/** The API's overview: how to call it and every error, with codes from errors.ts. */
function overview(): string {
  const rows: [ApiError, string, string][] = [
    [invalidApiKey(), 'the `apikey` query parameter is missing, unknown or revoked', ''],
    [tooManyRequests(), 'rate limit exceeded (with `Retry-After` and `X-RateLimit-*` headers)', ''],
    [unsupportedCoin(), 'the chain is not served', ''],
    [invalidParameter('<what and why>'), 'a parameter is malformed', ''],
    [noData(), 'the token or asset is unknown to the index', ''],
    [notFound(), 'the path matches no operation', ''],
    [serverBusy(), 'unexpected server fault', ''],
    [storeUnavailable(), 'the database cannot be reached right now, or cancelled the query to be tried again (with `Retry-After`)', ''],
  ];
  return [
    "A self-hosted, drop-in replacement for Tokenview's token API (`/vipapi/`), answering from its own index.",
    '',
    'Every operation is a GET (HEAD answers like GET without a body; other methods answer 405) and ' +
      'needs an active API key in the `apikey` query parameter. Here, press **Authorize**, enter a key ' +
      '(`tokenquery keys create` makes one) and use **Try it out**.',
    '',
    'Success bodies are envelopes `{"code":1,"msg":"成功","data":…}`, except the supply operations, ' +
      'which answer a bare number. Errors are envelopes with `data: null`:',
    '',
    '| HTTP | code | msg | when |',
    '|---|---|---|---|',
    ...rows.map(([e, when]) => `| ${e.httpStatus} | ${e.code} | \`${e.msg}\` | ${when} |`),
    '',
    'Checks run in this order and the first that fails answers: the path, the key, the chain, the ' +
      'parameters, the token.',
  ].join('\n');
}

function packageVersion(): string {
  try {
    // src/api/openapi.ts and dist/src/api/openapi.js are both three levels below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export interface OpenApiOptions {
  /** Configured chains: they set the default and the description of the `chain` parameter. */
  chains: readonly string[];
}

/**
 * Starts collecting routes (call it before registering any route) and serves the document at
 * {@link OPENAPI_PATH}. The document is built on its first request and kept.
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'tokenquery', version: packageVersion(), description: overview() },
      tags: [
        { name: 'EVM', description: 'EVM-style chains: eth, bsc, kcs, movr.' },
        { name: 'NEO', description: 'NEO Legacy (2.x): NEP-5 tokens and global assets.' },
        { name: 'Service', description: 'Health, progress and this document; no key needed.' },
      ],
      components: {
        securitySchemes: {
          [API_KEY_SCHEME]: {
            type: 'apiKey',
            in: 'query',
            name: 'apikey',
            description: 'An active key, from `tokenquery keys create`. Only the query parameter counts.',
          },
        },
      },
    },
    convertConstToEnum: false,
    transform({ schema, url, route }) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const openapi = route.config?.openapi;
      if (methods.length !== 1 || methods[0] !== 'GET' || openapi === undefined || openapi.doc === 'alias') {
        // Other methods only answer 405; an alias is documented under its main path. Undocumented
        // GET routes outside /vipapi/ (static assets, pages) stay out; an operation may not.
        if (methods.includes('GET') && url.startsWith('/vipapi/') && openapi === undefined) {
          throw new Error(`openapi: operation ${url} is not documented`);
        }
        return { schema: { ...schema, hide: true }, url };
      }
      return { schema: operationSchema(url, openapi.doc, openapi.auth, route, options.chains), url };
    },
  });

  let body: string | undefined;
  const doc: OperationDoc = {
    operationId: 'openapi',
    summary: 'This OpenAPI document',
    family: 'Service',
    body: 'json',
    bodySchema: { type: 'object', required: ['openapi', 'info', 'paths'] },
    errors: [],
  };
  app.get(OPENAPI_PATH, { config: { openapi: { doc, auth: false } } }, async (_request, reply) => {
    body ??= JSON.stringify(app.swagger());
    return reply.code(200).type(JSON_CONTENT_TYPE).header('cache-control', 'no-cache').send(body);
  });
}
