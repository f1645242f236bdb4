import { Worker } from 'node:worker_threads';
import type { Config } from '../config/types.js';
import type { RpcSeriesSnapshot } from '../internal/rpc-metrics.js';
import type { WriterRole } from '../store/types.js';

export type WorkerMessage =
  | { type: 'stopped' }
  | { type: 'failed'; message: string }
  | { type: 'role'; chain: string; role: WriterRole }
  | { type: 'rpc-metrics'; series: RpcSeriesSnapshot[] };

export interface IndexerWorker {
  /** Settles when the worker has ended: resolves on a clean stop, rejects with the reason of a failure. */
  readonly done: Promise<void>;
  /** Asks the indexers to finish their current batch and stop, and waits for it. */
  stop(): Promise<void>;
  /**
   * Each chain's role in the writer election, as the worker last reported it (PostgreSQL; empty
   * on a backend without election).
   */
  readonly roles: ReadonlyMap<string, WriterRole>;
  /** The RPC clients' figures as the worker last posted them (about once a second while they move). */
  rpcMetrics(): readonly RpcSeriesSnapshot[];
}

/** Runs the indexers of `config` in a worker thread. */
export function startIndexerWorker(config: Config): IndexerWorker {
  const worker = new Worker(new URL('./worker-entry.js', import.meta.url), {
    workerData: { config, tty: process.stderr.isTTY === true },
  });
  let failure: string | null = null;
  const roles = new Map<string, WriterRole>();
  let rpcSeries: readonly RpcSeriesSnapshot[] = [];
  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'failed') failure = message.message;
    else if (message.type === 'role') roles.set(message.chain, message.role);
    else if (message.type === 'rpc-metrics') rpcSeries = message.series;
  });
  const done = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (failure !== null) reject(new Error(failure));
      else if (code !== 0) reject(new Error(`indexer worker exited with code ${code}`));
      else resolve();
    });
  });
  return {
    done,
    roles,
    rpcMetrics: () => rpcSeries,
    async stop() {
      worker.postMessage('stop');
      await done.catch(() => {});
    },
  };
}
