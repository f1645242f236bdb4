/**
 * A SQLite store whose writes run on a thread of their own.
 *
 * better-sqlite3 is synchronous: a 20,000-transfer batch holds the calling thread for tens of
 * milliseconds. The indexer's thread has other work to do meanwhile (parsing and decoding the
 * next `eth_getLogs` answers), so the indexer opens its store this way: every write method is
 * sent to a worker thread that owns a second connection (and the balance cache that goes with
 * it), while its reads and every other part of the store run on this thread's own connection. SQLite's WAL mode lets the two
 * connections work at once, and a write's promise settles only after its transaction has
 * committed, so a read that follows it sees it.
 */
import { Worker } from 'node:worker_threads';
import { TokenqueryError } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import type { Store, StoreWriter } from '../types.js';
import { batchToWire } from './batch-wire.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite-store.js';

/** The writer's methods that write, and so run on the writer thread. */
export const WRITE_METHODS = [
  'applyBatch',
  'rollback',
  'updateSupplies',
  'setExactness',
  'refreshStatistics',
  'setChainStatus',
] as const satisfies readonly (keyof StoreWriter)[];

export type WriteMethod = (typeof WRITE_METHODS)[number];

/** A call sent to the writer thread. */
export interface WriterRequest {
  id: number;
  method: WriteMethod;
  args: unknown[];
}

/** What the writer thread answers. Errors travel as plain data and are rebuilt here. */
export type WriterResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SerializedError };

export interface SerializedError {
  name: string;
  message: string;
  shortMessage?: string;
  details?: string;
}

/** A line the writer thread's connection logged (pino JSON), for the opening thread's logger. */
export interface WriterLog {
  log: string;
}

/**
 * The writer thread's old generation, at most. Not a budget its data needs (its caches are
 * bounded far below it: balances, address ids and bytes, balances behind the checkpoint) but a
 * hint to V8's GC, which scales how far it lets a heap grow past what it holds live with the
 * heap's limit: with the default limit of a machine with gigabytes of RAM the writer's heap, whose
 * batches' short-lived objects reach the old generation (a batch lives for the length of its
 * transaction), held about three times its live data in a backfill, 100+ MiB of garbage; with
 * this limit, 70–100 MiB less at the same CPU (docs/benchmarks.md).
 */
const WRITER_OLD_GENERATION_MB = 1024;

/** Data of the writer thread at start-up. */
export interface WriterData {
  path: string;
  busyTimeoutMs?: number;
  /** The opening thread's log level: the writer logs what that logger would keep (a build's debug lines with --log-level debug). */
  logLevel: string;
}

/**
 * Opens the store (migrating it on this thread, so migrations log here), then starts the writer
 * thread on the same file. `close()` closes both.
 */
export async function openSqliteStoreWithWriterThread(options: SqliteStoreOptions): Promise<Store> {
  const reader = await openSqliteStore(options);
  const workerData: WriterData = {
    path: options.path,
    logLevel: options.logger.level,
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  };
  const worker = new Worker(new URL('./writer-entry.js', import.meta.url), {
    workerData,
    resourceLimits: {
      maxOldGenerationSizeMb: WRITER_OLD_GENERATION_MB,
    },
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let failure: Error | null = null;
  let closed: Promise<void> | null = null;

  const failAll = (error: Error): void => {
    failure = error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  worker.on('message', (response: WriterResponse | WriterLog) => {
    if ('log' in response) {
      relog(options.logger, response.log);
      return;
    }
    const call = pending.get(response.id);
    if (call === undefined) return;
    pending.delete(response.id);
    if (pending.size === 0 && closed === null) worker.unref();
    if (response.ok) call.resolve(response.value);
    else call.reject(rebuildError(response.error));
  });
  worker.on('error', (error) => {
    failAll(new TokenqueryError('the SQLite writer thread failed', { cause: error, details: error.message }));
  });
  worker.on('exit', (code) => {
    failAll(new TokenqueryError(`the SQLite writer thread exited (code ${code})`));
  });
  // An idle writer is no reason to keep the process alive; a pending write is (see `call`).
  worker.unref();

  const call = (method: WriteMethod, args: unknown[]): Promise<never> =>
    new Promise((resolve, reject) => {
      if (failure !== null) {
        reject(failure);
        return;
      }
      const id = nextId++;
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, method, args } satisfies WriterRequest);
    });

  const writer: StoreWriter = {
    ...reader.writer,
    // One worker, one message queue, and a synchronous transaction per message.
    ordersBatches: true,
    // Transfers travel as columns (see batch-wire.ts): the biggest message by far.
    applyBatch: (batch) => call('applyBatch', [batchToWire(batch)]),
    rollback: (...args) => call('rollback', args),
    updateSupplies: (...args) => call('updateSupplies', args),
    setExactness: (...args) => call('setExactness', args),
    refreshStatistics: () => call('refreshStatistics', []),
    setChainStatus: (...args) => call('setChainStatus', args),
  };
  const store: Store = {
    ...reader,
    writer,
    close() {
      closed ??= (async () => {
        // `close` is queued behind every write already sent, so they all finish first.
        if (failure === null) {
          await new Promise<void>((resolve) => {
            worker.ref();
            worker.once('exit', () => resolve());
            worker.postMessage('close');
          });
        }
        await reader.close();
      })();
      return closed;
    },
  };
  return store;
}

/** Logs a line of the writer thread's logger again with `logger`, at its level. */
function relog(logger: Logger, line: string): void {
  try {
    const { level, msg, time: _time, ...fields } = JSON.parse(line) as Record<string, unknown>;
    const method =
      typeof level === 'string' && (LEVELS as readonly string[]).includes(level)
        ? (level as (typeof LEVELS)[number])
        : 'info';
    logger[method](fields, typeof msg === 'string' ? msg : '');
  } catch {
    logger.info(line);
  }
}
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/** Rebuilds an error sent by the writer thread, keeping the classes callers test for. */
function rebuildError(error: SerializedError): Error {
  if (error.shortMessage !== undefined) {
    const rebuilt = new TokenqueryError(error.shortMessage, {
      ...(error.details === undefined ? {} : { details: error.details }),
    });
    return rebuilt;
  }
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name;
  return rebuilt;
}
