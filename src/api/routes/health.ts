/**
 * `/healthz` and `/status`: no key needed, plain JSON (not Tokenview envelopes).
 *
 * Anyone may ask, so what they answer is built from one shared reading of the chain statuses,
 * taken at most every {@link STATUS_MAX_AGE_MS} (concurrent requests share the reading in
 * flight): a flood of them costs the store a few reads a second. Anonymous `/status` shows each
 * chain's last error as a class only (`rpc unreachable`, `database error`, ...) and the writer
 * without its host name and pid; with a valid `apikey` it shows both in full, for the operator.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorClassOf, errorMessage, redactUrls } from '../../internal/errors.js';
import type { ChainStatus } from '../../store/types.js';
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
  /** Tokens of the chain marked not exact (docs/reliability.md#exact-balances). */
  notExactTokens: number;
  /** The indexer's last error, or null: its class (`rpc unreachable`, ...), or with a valid key its text. */
  lastError: string | null;
  /**
   * PostgreSQL: the last election of the chain's writer (election number, since when); with a
   * valid key also the process elected (`id`, `<host>:<pid>`).
   */
  writer?: { id?: string; epoch: number; since: number };
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
  description:
    "Each configured chain's head, indexed block and lag. Plain JSON, no envelope. Without a key, `lastError` is a class (`rpc unreachable`, `rpc timeout`, `rpc error`, `database unreachable`, `database error`, `reorg too deep`, `indexer stopped`, `internal error`); with a valid `apikey` it is the full text and `writer` names the process.",
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
          required: ['head', 'indexed', 'lag', 'notExactTokens', 'lastError'],
          properties: {
            head: { type: 'integer', minimum: 0, description: 'Newest block seen on the node.' },
            indexed: {
              type: 'integer',
              minimum: 0,
              description: 'Newest block whose data the API shows.',
            },
            lag: { type: 'integer', minimum: 0 },
            notExactTokens: {
              type: 'integer',
              minimum: 0,
              description:
                'Tokens whose stored balances differ from `balanceOf` at the head, as the last check found (a sample of holders after their summed balances differed from `totalSupply()`); their Token Holders pages answer `"exact": false`.',
            },
            lastError: { type: ['string', 'null'] },
            writer: {
              type: 'object',
              description: "PostgreSQL: the last election of the chain's writer.",
              required: ['epoch', 'since'],
              properties: {
                id: {
                  type: 'string',
                  description: 'The elected process, `<host>:<pid>`; with a valid key only.',
                },
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

/** The chain statuses behind `/status` and `/healthz` are read at most this often. */
export const STATUS_MAX_AGE_MS = 250;

/** One reading behind `/status` and `/healthz`: the chain statuses and the not-exact counts. */
interface StatusReading {
  statuses: ChainStatus[];
  notExact: Record<string, number>;
}

/**
 * The chain statuses, read at most once per `maxAgeMs` (a failed reading counts too: the store
 * that just failed is not asked again at once), the reading in flight shared by every caller.
 */
function createStatusSnapshot(
  read: () => Promise<StatusReading>,
  maxAgeMs: number,
): () => Promise<StatusReading> {
  let reading: Promise<StatusReading> | null = null;
  let settledAt = Number.NEGATIVE_INFINITY;
  let inFlight = false;
  return () => {
    if (reading === null || (!inFlight && Date.now() - settledAt >= maxAgeMs)) {
      inFlight = true;
      const current = read().finally(() => {
        inFlight = false;
        settledAt = Date.now();
      });
      // Each caller handles the failure; this one only keeps it from being unhandled.
      current.catch(() => {});
      reading = current;
    }
    return reading;
  };
}

/** Resolves once the key gate admits `apikey`; rejects with its refusal (401, 429). */
function admitKey(ctx: RouteContext, apikey: unknown, request: FastifyRequest, reply: FastifyReply) {
  return new Promise<void>((resolve, reject) =>
    ctx.keyGate.check(apikey, request, reply, (error) => (error ? reject(error) : resolve())),
  );
}

export function healthRoutes(app: FastifyInstance, ctx: RouteContext, chains: readonly string[]): void {
  const { reader } = ctx.store;
  const statuses = createStatusSnapshot(async () => {
    const [list, notExact] = await Promise.all([reader.listChainStatuses(), reader.countNotExact()]);
    return { statuses: list, notExact };
  }, STATUS_MAX_AGE_MS);

  registerOperation(app, ctx, {
    url: '/healthz',
    auth: false,
    doc: HEALTH,
    async handler(request, reply) {
      try {
        await statuses();
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
    async handler(request, reply) {
      // The operator's view: a key is asked for only when one is given; a wrong one is refused.
      const apikey = (request.query as Record<string, unknown>).apikey;
      const operator = apikey !== undefined;
      if (operator) await admitKey(ctx, apikey, request, reply);
      const reading = await statuses();
      const byChain = new Map(reading.statuses.map((s) => [s.chain, s]));
      const out: Record<string, ChainProgress> = {};
      for (const chain of chains) {
        const s = byChain.get(chain);
        const head = s?.head ?? 0;
        // 0 rather than null before the first batch: strict clients decode `indexed` as a number.
        const indexed = s?.indexed ?? 0;
        const error = s?.lastError ?? null;
        out[chain] = {
          head,
          indexed,
          lag: Math.max(0, head - indexed),
          notExactTokens: reading.notExact[chain] ?? 0,
          lastError: error === null || operator ? error : errorClassOf(error),
        };
        if (s?.writer !== undefined) {
          const { id, epoch, since } = s.writer;
          out[chain].writer = operator ? { id, epoch, since } : { epoch, since };
        }
        if (s?.role !== undefined) out[chain].role = s.role;
        if (s?.holdersPartial === true) out[chain].holdersPartial = true;
      }
      // The operator's view is for the operator alone: no shared cache keeps it.
      if (operator) reply.header('cache-control', 'no-store');
      return reply
        .code(200)
        .type(JSON_CONTENT_TYPE)
        .send(JSON.stringify({ chains: out }));
    },
  });
}
