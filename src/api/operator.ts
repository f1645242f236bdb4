/**
 * What an operator looks at: `/metrics` (metrics.ts) and the status dashboard at `/`
 * (routes/dashboard.ts), both fed by one chain-progress tracker. No key is needed for either;
 * neither shows anything a key protects (see routes/dashboard.ts), and chains' errors show as
 * classes only. They are served beside the API, on a listener of their own, or not at all
 * (`--operator-listen`, see docs/reliability.md).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../internal/logger.js';
import { PROMETHEUS_CONTENT_TYPE } from '../internal/prometheus.js';
import type { RpcSeriesSnapshot } from '../internal/rpc-metrics.js';
import { createChainProgressTracker } from './chain-progress.js';
import { createProcessMetrics, type HttpMetrics, instrumentHttp, metricsText } from './metrics.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { type RouteContext, registerOperation } from './routing.js';

export interface OperatorViewOptions {
  chains: readonly string[];
  logger: Logger;
  /** The indexer's RPC figures, when it runs in this process (`start`). */
  rpcMetrics?: () => readonly RpcSeriesSnapshot[];
  /** Chain progress sampling period; default 1000 ms. */
  sampleIntervalMs?: number;
}

export interface OperatorViews {
  /** The API's request counts and latencies. */
  http: HttpMetrics;
  /** Registers `/metrics` and the dashboard on `target`: the API's own instance, or the operator listener's. */
  register(target: FastifyInstance, ctx: RouteContext): void;
}

/**
 * Starts counting the requests of `app` (the API; call it before every other route, so that each
 * is counted) and following the chains' progress until `app` closes.
 */
export function createOperatorViews(
  app: FastifyInstance,
  ctx: RouteContext,
  options: OperatorViewOptions,
): OperatorViews {
  const http = instrumentHttp(app);
  const progress = createChainProgressTracker({
    store: ctx.store,
    chains: options.chains,
    logger: options.logger,
    ...(options.sampleIntervalMs === undefined ? {} : { intervalMs: options.sampleIntervalMs }),
  });
  const processMetrics = createProcessMetrics();
  app.addHook('onClose', async () => {
    progress.close();
    processMetrics.close();
  });

  return {
    http,
    register(target, targetCtx) {
      registerOperation(target, targetCtx, {
        url: '/metrics',
        auth: false,
        async handler(_request, reply) {
          const text = metricsText({
            http,
            progress,
            storeKind: ctx.store.kind,
            process: processMetrics,
            ...(options.rpcMetrics === undefined ? {} : { rpc: options.rpcMetrics }),
          });
          return reply.code(200).type(PROMETHEUS_CONTENT_TYPE).header('cache-control', 'no-store').send(text);
        },
      });
      dashboardRoutes(target, targetCtx, progress);
    },
  };
}
