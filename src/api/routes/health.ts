/**
 * `/healthz` and `/status`: no key needed, plain JSON (not Tokenview envelopes).
 */
import type { FastifyInstance } from 'fastify';
import { errorMessage, redactUrls } from '../../internal/errors.js';
import { JSON_CONTENT_TYPE } from '../envelope.js';
import type { OperationDoc } from '../operation-doc.js';
import { type RouteContext, registerOperation } from '../routing.js';

/** One chain's progress in `/status`. */
export interface ChainProgress {
  /** Newest block seen on the node; 0 before the first sighting. */
  head: number;
  /** Newest block whose data is fully visible in the API; 0 before the first batch commits. */
  indexed: number;
  /** `head - indexed`, never below 0. */
  lag: number;
  /** The indexer's last error (already safe to show), or null. */
  lastError: string | null;
  /** PostgreSQL: the process last elected to write the chain (`<host>:<pid>`, election number, since when). */
  writer?: { id: string; epoch: number; since: number };
  /** `start` on PostgreSQL: whether this process's own indexer is the chain's writer or a standby. */
  role?: 'writer' | 'standby';
  /**
   * Present (true) when the index starts late and the node could not answer the state before the
   * start: holders seen since have no starting balance, so holder counts and balances are partial.
   */
  holdersPartial?: true;
}

const HEALTH_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { enum: ['ok', 'unavailable'] } },
};

const HEALTH: OperationDoc = {
  operationId: 'health',
  summary: 'Health check',
  family: 'Service',
  description: 'HTTP 200 while the store answers, 503 when it does not. Plain JSON, no envelope.',
  body: 'json',
  bodySchema: HEALTH_BODY,
  errors: [],
  responses: {
    503: {
      description: 'The store does not answer.',
      content: { 'application/json': { schema: HEALTH_BODY } },
    },
  },
};

/** `/status`'s body: {@link ChainProgress} per configured chain. */
const STATUS: OperationDoc = {
  operationId: 'status',
  summary: 'Indexing progress',
  family: 'Service',
  description: "Each configured chain's head, indexed block and lag. Plain JSON, no envelope.",
  body: 'json',
  bodySchema: {
    type: 'object',
    additionalProperties: false,
    required: ['chains'],
    properties: {
      chains: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          required: ['head', 'indexed', 'lag', 'lastError'],
          properties: {
            head: { type: 'integer', minimum: 0, description: 'Newest block seen on the node.' },
            indexed: {
              type: 'integer',
              minimum: 0,
              description: 'Newest block whose data the API shows.',
            },
            lag: { type: 'integer', minimum: 0 },
            lastError: { type: ['string', 'null'] },
            writer: {
              type: 'object',
              description: 'PostgreSQL: the process last elected to write the chain.',
              required: ['id', 'epoch', 'since'],
              properties: {
                id: { type: 'string' },
                epoch: { type: 'integer' },
                since: { type: 'integer' },
              },
            },
            role: { enum: ['writer', 'standby'] },
            holdersPartial: {
              type: 'boolean',
              const: true,
              description:
                'Present when indexing starts after a block (--from-block) and the node had no state at the block before it: holders seen since start at 0, so holder counts and balances are partial.',
            },
          },
        },
      },
    },
  },
  errors: [],
};

export function healthRoutes(app: FastifyInstance, ctx: RouteContext, chains: readonly string[]): void {
  registerOperation(app, ctx, {
    url: '/healthz',
    auth: false,
    doc: HEALTH,
    async handler(request, reply) {
      try {
        await ctx.store.reader.listChainStatuses();
      } catch (error) {
        // A warning without the stack: probes poll, and the cause is the same every time.
        request.log.warn({ err: redactUrls(errorMessage(error)) }, 'health check: store unavailable');
        return reply.code(503).type(JSON_CONTENT_TYPE).send('{"status":"unavailable"}');
      }
      return reply.code(200).type(JSON_CONTENT_TYPE).send('{"status":"ok"}');
    },
  });

  registerOperation(app, ctx, {
    url: '/status',
    auth: false,
    doc: STATUS,
    async handler(_request, reply) {
      const statuses = new Map((await ctx.store.reader.listChainStatuses()).map((s) => [s.chain, s]));
      const out: Record<string, ChainProgress> = {};
      for (const chain of chains) {
        const s = statuses.get(chain);
        const head = s?.head ?? 0;
        // 0 rather than null before the first batch: strict clients decode `indexed` as a number.
        const indexed = s?.indexed ?? 0;
        out[chain] = { head, indexed, lag: Math.max(0, head - indexed), lastError: s?.lastError ?? null };
        if (s?.writer !== undefined) out[chain].writer = s.writer;
        if (s?.role !== undefined) out[chain].role = s.role;
        if (s?.holdersPartial === true) out[chain].holdersPartial = true;
      }
      return reply
        .code(200)
        .type(JSON_CONTENT_TYPE)
        .send(JSON.stringify({ chains: out }));
    },
  });
}
