/**
 * One writer per chain among any number of processes on one PostgreSQL database.
 *
 * Election: a session-level advisory lock per chain (`pg_try_advisory_lock`, keys in locks.ts),
 * held on a dedicated connection (not the pool's) for as long as the writer lives. When the
 * writer dies, its session ends and PostgreSQL releases the lock; a standby, which tries every
 * `pollIntervalMs` (1 s), takes it within about a second. Nothing of this is home-made state: the
 * server's own lock table and session lifetime decide.
 *
 * Fencing: a lock says who *should* write, not who *does*. A writer whose lock connection broke
 * while the process lives on (a network blip, `pg_terminate_backend`) may not have noticed yet
 * and still have a batch in flight on its pool. So every newly elected writer bumps
 * `chains.writer_epoch` (under the chain's write lock, see transactions.ts), and each write
 * transaction of a lease checks, under that same lock, that the stored epoch is still its own.
 * Chosen over "check the lock from the connection that writes", which would force every write of
 * a chain (batches, supply updates, status) through the one lock connection, serializing what
 * the pool runs side by side now, and would still need care for a transaction that began before
 * the session was lost. The epoch costs no round trip (it is read with the checkpoint row the
 * write reads anyway) and is exact: an election takes the write lock, so an old writer's write
 * either commits before the election, which then sees its checkpoint, or fails after it.
 */
import { hostname } from 'node:os';
import pg from 'pg';
import { backoffDelay, sleep } from '../../internal/async.js';
import { errorMessage, redactUrls } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';
import type { ChainWriter, StoreWriter, WriterLease, WriterLeaseOptions } from '../types.js';
import { WriterLeaseLostError } from '../writer-lease.js';
import { WRITER_LOCK_CLASS, writerLockKey } from './locks.js';

/** What a write through a writer lease checks (transactions.ts `lockChain`). */
export interface WriteFence {
  readonly chain: string;
  readonly epoch: number;
  /** Throws {@link WriterLeaseLostError} when the lease was released or lost: checked before a write starts. */
  assertHeld(): void;
  /**
   * A write found another epoch stored for the chain (`stored`; null when unknown): the lease is
   * lost from now on. Returns the error to throw.
   */
  superseded(stored: number | null): Error;
}

export interface WriterElectionOptions {
  url: string;
  logger: Logger;
  /** Records a new election of `chain` on `client` (holding the chain's writer lock); returns the new epoch. */
  elect(client: pg.ClientBase, chain: string, writerId: string): Promise<number>;
  /** The writer whose writes check `fence`. */
  fencedWriter(fence: WriteFence): StoreWriter;
  /** The chain's last elected writer, for the standby's log line. */
  currentWriter(chain: string): Promise<ChainWriter | null>;
}

export interface WriterElection {
  acquire(chain: string, options: WriterLeaseOptions): Promise<WriterLease | null>;
  /** Ends every lock connection (leases held are released, waits end with null). */
  close(): Promise<void>;
}

const DEFAULT_POLL_MS = 1000;

export function createWriterElection(options: WriterElectionOptions): WriterElection {
  const { url, logger } = options;
  /** Every lock connection open, so that `close` can end them. */
  const sessions = new Set<pg.Client>();
  let closed = false;

  /** A dedicated session; its `error`/`end` are reported to `onGone` (an unheard error would crash the process). */
  async function openSession(chain: string, onGone: (reason: string) => void): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: url,
      application_name: `tokenquery writer lock ${chain}`,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    client.on('error', (error) => onGone(`lock connection failed: ${redactUrls(error.message)}`));
    client.on('end', () => onGone('lock connection closed'));
    sessions.add(client);
    try {
      await client.connect();
      // The server notices a vanished writer host (no FIN, no RST) after about 5 + 3 × 2 s
      // instead of the OS default of hours, and releases its lock. Ignored on Unix sockets.
      await client.query(
        'SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3',
      );
    } catch (error) {
      endSession(client);
      throw error;
    }
    return client;
  }

  function endSession(client: pg.Client): void {
    if (!sessions.delete(client)) return;
    // Ending the session releases its advisory lock at once. A broken connection may never
    // answer the goodbye; nothing waits for it.
    client.end().catch(() => {});
  }

  async function acquire(chain: string, leaseOptions: WriterLeaseOptions): Promise<WriterLease | null> {
    const { signal } = leaseOptions;
    const pollMs = leaseOptions.pollIntervalMs ?? DEFAULT_POLL_MS;
    const writerId = leaseOptions.writerId ?? `${hostname()}:${process.pid}`;
    const log = logger.child({ component: 'election', chain });
    const waitingSince = Date.now();
    let standbyReported = false;
    let failures = 0;

    while (!signal.aborted && !closed) {
      let client: pg.Client | undefined;
      let gone: string | null = null;
      try {
        client = await openSession(chain, (reason) => {
          gone ??= reason;
        });
        const schema = (await client.query<{ schema: string }>('SELECT current_schema() AS schema')).rows[0]
          ?.schema;
        const key = writerLockKey(schema ?? '', chain);
        while (!signal.aborted && !closed) {
          if (gone !== null) throw new Error(gone);
          const result = await client.query<{ held: boolean }>(
            'SELECT pg_try_advisory_lock($1, $2) AS held',
            [WRITER_LOCK_CLASS, key],
          );
          if (result.rows[0]?.held === true) {
            const epoch = await options.elect(client, chain, writerId);
            const lease = holdLease({ chain, epoch, client, pollMs, log, gone: () => gone });
            log.info(
              { epoch, writer: writerId, waitedMs: Date.now() - waitingSince },
              'elected writer of the chain',
            );
            return lease;
          }
          failures = 0;
          if (!standbyReported) {
            standbyReported = true;
            const current = await options.currentWriter(chain).catch(() => null);
            log.info(
              { writer: current, pollMs },
              'standby: another process writes this chain; this one takes over when it stops',
            );
            leaseOptions.onStandby?.(current);
          }
          await sleep(pollMs, signal);
        }
      } catch (error) {
        if (client !== undefined) endSession(client);
        client = undefined;
        if (signal.aborted || closed) break;
        failures++;
        const delay = Math.max(pollMs, backoffDelay(failures, 500, 10_000));
        log.warn(
          { err: redactUrls(errorMessage(error)), retryInMs: Math.round(delay) },
          'writer election: database unreachable; retrying',
        );
        await sleep(delay, signal);
      } finally {
        // Still waiting (aborted or closed): the session goes; a lease keeps its own.
        if (client !== undefined && (signal.aborted || closed)) endSession(client);
      }
    }
    return null;
  }

  function holdLease(held: {
    chain: string;
    epoch: number;
    client: pg.Client;
    pollMs: number;
    log: Logger;
    gone: () => string | null;
  }): WriterLease {
    const { chain, epoch, client, log } = held;
    const controller = new AbortController();
    let released = false;

    function lose(reason: string): void {
      if (released || controller.signal.aborted) return;
      log.warn({ epoch, reason }, 'lost the writer lease: this process stops writing the chain');
      controller.abort(new WriterLeaseLostError(`lost the writer lease of ${chain}: ${reason}`));
      endSession(client);
    }
    client.removeAllListeners('error');
    client.removeAllListeners('end');
    client.on('error', (error) => lose(`lock connection failed: ${redactUrls(error.message)}`));
    client.on('end', () => lose('lock connection closed'));
    const already = held.gone();
    if (already !== null) lose(already);

    // Heartbeat: a lock connection that stops answering (a silent network failure) loses the
    // lease here within a few seconds, before the server drops the session and elects another.
    // (`query_timeout` per query is read by pg but missing from its types.)
    const ping = { text: 'SELECT 1', query_timeout: Math.max(5_000, 3 * held.pollMs) };
    void (async () => {
      while (!released && !controller.signal.aborted) {
        await sleep(held.pollMs, controller.signal);
        if (released || controller.signal.aborted) return;
        try {
          await client.query(ping);
        } catch (error) {
          lose(`lock connection does not answer: ${redactUrls(errorMessage(error))}`);
        }
      }
    })();

    const fence: WriteFence = {
      chain,
      epoch,
      assertHeld() {
        if (released) throw new WriterLeaseLostError(`the writer lease of ${chain} was released`);
        if (controller.signal.aborted) {
          throw controller.signal.reason instanceof Error
            ? controller.signal.reason
            : new WriterLeaseLostError(`lost the writer lease of ${chain}`);
        }
      },
      superseded(stored) {
        lose(
          stored === null
            ? 'a newer writer was elected'
            : `a newer writer was elected (epoch ${stored}, this one ${epoch})`,
        );
        return new WriterLeaseLostError(
          `not the writer of ${chain} any more: a newer writer was elected; nothing was written`,
        );
      },
    };

    return {
      chain,
      epoch,
      writer: options.fencedWriter(fence),
      lost: controller.signal,
      async release() {
        if (released) return;
        released = true;
        log.info({ epoch }, 'released the writer lease');
        endSession(client);
      },
    };
  }

  return {
    acquire,
    async close() {
      closed = true;
      await Promise.all([...sessions].map((client) => client.end().catch(() => {})));
      sessions.clear();
    },
  };
}
