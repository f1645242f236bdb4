import { Worker } from 'node:worker_threads';
import type { Config } from '../config/types.js';

export type WorkerMessage = { type: 'stopped' } | { type: 'failed'; message: string };

export interface IndexerWorker {
  /** Settles when the worker has ended: resolves on a clean stop, rejects with the reason of a failure. */
  readonly done: Promise<void>;
  /** Asks the indexers to finish their current batch and stop, and waits for it. */
  stop(): Promise<void>;
}

/** Runs the indexers of `config` in a worker thread. */
export function startIndexerWorker(config: Config): IndexerWorker {
  const worker = new Worker(new URL('./worker-entry.js', import.meta.url), {
    workerData: { config, tty: process.stderr.isTTY === true },
  });
  let failure: string | null = null;
  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'failed') failure = message.message;
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
    async stop() {
      worker.postMessage('stop');
      await done.catch(() => {});
    },
  };
}
