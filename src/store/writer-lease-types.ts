/**
 * The types of writer election (PostgreSQL: one elected indexer per chain), apart from types.ts
 * to keep that file readable; re-exported from there, which is where the rest of the code takes
 * them from.
 */
import type { StoreWriter } from './types.js';

/** Who was elected to write a chain (see {@link Store.acquireWriterLease}). */
export interface ChainWriter {
  /** `<host>:<pid>` of the elected process. */
  id: string;
  /** Number of the election: every newly elected writer of the chain gets a higher one. */
  epoch: number;
  /** Unix milliseconds of the election. */
  since: number;
}

export type WriterRole = 'writer' | 'standby';

/** How {@link Store.acquireWriterLease} waits. */
export interface WriterLeaseOptions {
  /** Stops waiting (the call resolves with null) and, once elected, nothing else. */
  signal: AbortSignal;
  /** Names this process in `/status` and the logs; default `<host>:<pid>`. */
  writerId?: string;
  /** How often a standby tries to take over; default 1000 ms. */
  pollIntervalMs?: number;
  /** Called once when another process holds the chain and this one starts waiting as a standby. */
  onStandby?: (writer: ChainWriter | null) => void;
}

/** This process's right to write one chain, until it is released or lost. */
export interface WriterLease {
  readonly chain: string;
  /** The election number (see {@link ChainWriter.epoch}). */
  readonly epoch: number;
  /**
   * The writer to write the chain through. Each of its write transactions for the chain checks that
   * this lease is still the newest election and fails with {@link WriterLeaseLostError} otherwise,
   * so a writer that lost its lease can never commit (fencing).
   */
  readonly writer: StoreWriter;
  /** Aborted when the lease is lost: its lock connection failed, or a newer writer was elected. */
  readonly lost: AbortSignal;
  /** Gives the chain up, so a standby can take over at once. Idempotent. */
  release(): Promise<void>;
}
