/**
 * Worker-thread entry: runs the indexers with their own store connection, so that block
 * decoding and database writes never stall the API's event loop in `tokenquery start`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config/types.js';
import { errorMessage } from '../internal/errors.js';
import { createLogger } from '../internal/logger.js';
import { createRpcMetrics } from '../internal/rpc-metrics.js';
import { openStore } from '../store/open.js';
import { runIndexers } from './run.js';
import type { WorkerMessage } from './worker.js';

const { config, tty } = workerData as { config: Config; tty: boolean };
const logger = createLogger({ level: config.logLevel });
const controller = new AbortController();
const post = (message: WorkerMessage) => parentPort?.postMessage(message);

parentPort?.on('message', (message: unknown) => {
  if (message === 'stop') controller.abort();
});

// The API thread's /metrics shows the RPC figures: a snapshot each second in which they moved.
const rpcMetrics = createRpcMetrics();
let postedVersion = 0;
const metricsTimer = setInterval(() => {
  if (rpcMetrics.version() === postedVersion) return;
  postedVersion = rpcMetrics.version();
  post({ type: 'rpc-metrics', series: rpcMetrics.snapshot() });
}, 1000);

const store = await openStore({ location: config.db, logger, writerThread: true });
try {
  await runIndexers({
    chains: config.chains,
    store,
    logger,
    signal: controller.signal,
    tty,
    onRole: (chain, role) => post({ type: 'role', chain, role }),
    rpcMetrics,
  });
  post({ type: 'stopped' });
} catch (error) {
  post({ type: 'failed', message: errorMessage(error) });
} finally {
  clearInterval(metricsTimer);
  await store.close();
  logger.flush();
  // The message port keeps the thread alive; closing it lets the worker exit.
  parentPort?.close();
}
