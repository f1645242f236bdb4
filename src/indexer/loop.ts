/**
 * The run loop every chain family's indexer shares: resume from the checkpoint, step until the
 * signal aborts, wait once caught up, back off and retry a failed step, stop on a fatal error,
 * and keep the chain's status (newest head, last error) in the store. A family gives only what
 * differs: how to step, how to wait when idle, which errors are fatal and how long to back off.
 */

import { RpcError, RpcTransportError } from '../chains/jsonrpc/errors.js';
import type { ChainConfig } from '../config/types.js';
import { backoffDelay, sleep } from '../internal/async.js';
import {
  type ErrorClass,
  errorClassOf,
  errorMessage,
  FatalIndexerError,
  isDiskFull,
  isStoreUnavailable,
} from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { ChainStatus, Checkpoint, StoreWriter } from '../store/types.js';
import type { SupplyRefresh } from './supply-refresh.js';

/** The chain's status row as the indexer keeps it: the newest head seen, and the last error. */
export interface ChainStatusReport {
  /** Newest head seen; never moves backwards (a load balancer may answer from a lagging node). */
  readonly headSeen: number;
  /** Notes a head the node answered. */
  seen(head: number): void;
  /** Records `headSeen` in the chain's status unless a write (a batch's, say) already did. */
  writeHead(): Promise<void>;
  /** A batch recorded `head` with its checkpoint. */
  headWritten(head: number): void;
  /** The error last recorded (null: none). */
  readonly lastError: string | null;
  /** Records `message` as the chain's last error (null clears it); a repeat is not written again. */
  recordError(message: string | null): Promise<void>;
  /** The head the store holds, read at start. */
  resume(head: number): void;
}

export function createChainStatusReport(store: StoreWriter, chain: string): ChainStatusReport {
  let headSeen = 0;
  let headWritten = 0;
  let lastError: string | null = null;
  return {
    get headSeen() {
      return headSeen;
    },
    seen(head) {
      headSeen = Math.max(headSeen, head);
    },
    async writeHead() {
      if (headSeen <= headWritten) return;
      const head = headSeen;
      await store.setChainStatus(chain, { head });
      headWritten = Math.max(headWritten, head);
    },
    headWritten(head) {
      headWritten = Math.max(headWritten, head);
    },
    get lastError() {
      return lastError;
    },
    async recordError(message) {
      if (message === lastError) return;
      lastError = message;
      await store.setChainStatus(chain, { lastError: message });
    },
    resume(head) {
      headSeen = head;
      headWritten = head;
    },
  };
}

/** What a family's indexer gives the loop. */
export interface IndexerSteps {
  /** Picks up from the stored checkpoint (null: none yet), and checks what must hold before anything is written. */
  resume(checkpoint: Checkpoint | null): void | Promise<void>;
  /** Told the stored chain status once it is read, before the first step. */
  started?(status: ChainStatus | null): void;
  /** Fields of the `indexer starting` log line after `next`. */
  startFields?: Record<string, unknown>;
  /** The next block to index, for the logs. */
  next(): number;
  /** One step: 'idle' once caught up with the head. */
  step(): Promise<'busy' | 'idle'>;
  /** Waits for the next block once caught up. Default: `chain.pollIntervalMs`. */
  idle?(): Promise<void>;
  /** The errors retrying cannot cure, as FatalIndexerError; null for the others. Default: FatalIndexerError only. */
  asFatal?(error: unknown): FatalIndexerError | null;
  /** The wait before retrying a failed step; undefined (and the default): a backoff from 500 ms to 30 s over the failures in a row. */
  retryDelay?(error: unknown): number | undefined;
}

export interface IndexerLoopOptions {
  chain: ChainConfig;
  store: StoreWriter;
  /** The indexer's logger (component and chain bound). */
  logger: Logger;
  signal: AbortSignal;
  status: ChainStatusReport;
  supply: SupplyRefresh;
  steps: IndexerSteps;
}

/** Indexes until `signal` aborts. Rejects only on a fatal error, recorded first as the chain's last error. */
export async function runIndexerLoop(options: IndexerLoopOptions): Promise<void> {
  const { chain, store, logger, signal, status, supply, steps } = options;
  const checkpoint = await store.getCheckpoint(chain.name);
  if (checkpoint && chain.fromBlock > checkpoint.block + 1) {
    logger.warn(
      { checkpoint: checkpoint.block, fromBlock: chain.fromBlock },
      '--from-block is ignored: the store already holds this chain; resuming from its checkpoint',
    );
  }
  await steps.resume(checkpoint);
  const stored = await store.getChainStatus(chain.name);
  status.resume(stored?.head ?? 0);
  steps.started?.(stored);
  logger.info({ next: steps.next(), ...steps.startFields }, 'indexer starting');
  supply.kick();

  const asFatal = steps.asFatal ?? ((error) => (error instanceof FatalIndexerError ? error : null));
  let failures = 0;
  while (!signal.aborted) {
    const from = steps.next();
    try {
      const state = await steps.step();
      failures = 0;
      await status.recordError(null);
      if (state === 'idle') {
        if (steps.idle) await steps.idle();
        else await sleep(chain.pollIntervalMs, signal);
      }
    } catch (error) {
      if (signal.aborted) break;
      const fatal = asFatal(error);
      if (fatal !== null) {
        logger.error({ err: fatal.shortMessage }, 'indexer stopped');
        await status.recordError(`${errorClass(fatal)}: ${fatal.shortMessage}`).catch(() => {});
        throw fatal;
      }
      // A step that committed something before it failed made progress: its backoff starts over.
      failures = steps.next() > from ? 1 : failures + 1;
      const message = errorMessage(error);
      const delay = steps.retryDelay?.(error) ?? backoffDelay(failures, 500, 30_000);
      logger.warn(
        { err: message, attempt: failures, retryInMs: Math.round(delay) },
        'indexing step failed; retrying',
      );
      await status.recordError(`${errorClass(error)}: ${message}`).catch(() => {});
      await sleep(delay, signal);
    }
  }
  logger.info({ next: steps.next() }, 'indexer stopped');
}

/**
 * The class `/status` shows anyone for an indexing failure (the text itself only to an operator):
 * from the error's type where it tells, else from its words. RPC faults are wrapped in RpcError
 * by the chain layer, so a bare socket error or a driver's SQLSTATE here comes from the store.
 */
export function errorClass(error: unknown): ErrorClass {
  if (error instanceof FatalIndexerError) {
    return /\breorg\b/i.test(error.shortMessage) ? 'reorg too deep' : 'indexer stopped';
  }
  if (error instanceof RpcTransportError) {
    if (/\btimed out\b/i.test(error.shortMessage)) return 'rpc timeout';
    return error.status === undefined || error.status === 429 || error.status >= 500
      ? 'rpc unreachable'
      : 'rpc error';
  }
  if (error instanceof RpcError) return 'rpc error';
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  // Before the store's other errors: a full disk is the operator's to fix, and says nothing secret.
  if (isDiskFull(error)) return 'disk full';
  if (isStoreUnavailable(error)) return 'database unreachable';
  if (typeof code === 'string' && (/^[0-9A-Z]{5}$/.test(code) || code.startsWith('SQLITE_'))) {
    return 'database error';
  }
  if (name === 'SqliteError' || name === 'WriterLeaseLostError') return 'database error';
  return errorClassOf(errorMessage(error));
}
