/**
 * The writer thread of {@link openSqliteStoreWithWriterThread}: one SQLite connection that runs
 * the store's write methods in the order they arrive, one at a time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { TokenqueryError } from '../../internal/errors.js';
import type { WireBatch } from './batch-wire.js';
import { openSqliteStore } from './sqlite-store.js';
import type {
  SerializedError,
  WriterData,
  WriterLog,
  WriterRequest,
  WriterResponse,
} from './writer-thread.js';

const port = parentPort;
if (port === null) throw new Error('writer-entry.js runs only as a worker thread');
const data = workerData as WriterData;
// The opening thread has migrated the file already. What this connection logs (a bulk load's
// progress, its steps' times at debug level) goes to that thread's logger, as `{ log }` messages
// at that logger's level when the store was opened (it drops or keeps them at its level of the
// moment). Never finer than info unless asked: each message is a copy between threads.
const forward = pino(
  {
    level: data.logLevel,
    base: undefined,
    formatters: { level: (label) => ({ level: label }) },
  },
  { write: (line: string) => port.postMessage({ log: line } satisfies WriterLog) },
);
const store = await openSqliteStore({
  path: data.path,
  logger: forward,
  ...(data.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: data.busyTimeoutMs }),
});

port.on('message', async (message: WriterRequest | 'close') => {
  if (message === 'close') {
    await store.close();
    port.close();
    return;
  }
  let response: WriterResponse;
  try {
    // Batches arrive as columns (batch-wire.ts) and are applied as such.
    const value =
      message.method === 'applyBatch'
        ? await store.writer.applyWireBatch(message.args[0] as WireBatch)
        : await (store.writer[message.method] as (...args: unknown[]) => Promise<unknown>).apply(
            store.writer,
            message.args,
          );
    response = { id: message.id, ok: true, value };
  } catch (error) {
    response = { id: message.id, ok: false, error: serializeError(error) };
  }
  port.postMessage(response);
});

function serializeError(error: unknown): SerializedError {
  if (error instanceof TokenqueryError) {
    return {
      name: error.name,
      message: error.message,
      shortMessage: error.shortMessage,
      ...(error.details === undefined ? {} : { details: error.details }),
    };
  }
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}
