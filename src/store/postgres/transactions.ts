/**
 * The PostgreSQL store's write transactions: one connection of the pool per transaction, the
 * chain's write lock with the checkpoint row read under it, the fencing of a writer lease's
 * writes, and a new writer's election (writer-election.ts), which takes the same lock.
 */
import type pg from 'pg';
import { TokenqueryError } from '../../internal/errors.js';
import { WRITE_LOCK_CLASS } from './locks.js';
import { run, SQL } from './statements.js';
import type { WriteFence } from './writer-election.js';

/*
 * Every write transaction of a chain first takes the chain's transaction-level advisory lock
 * (WRITE_LOCK_CLASS, locks.ts). It serializes a chain's writers between processes as SQLite's
 * write lock does, so the checkpoint check and the write cannot interleave, and an
 * `updateSupplies` cannot deadlock against an `applyBatch` on the same token rows. A writer
 * election takes it too, which is what makes the fencing of writer-election.ts exact.
 */

/** The checkpoint row of a chain, as a write transaction reads it under the chain's write lock. */
export interface LockedChain {
  indexed_block: number | null;
  journal_floor: number;
  seed_block: number | null;
  /** The block before a bulk load waiting for its build (bulk-load.ts), or null. */
  bulk_block: number | null;
  /** Transfers of the chain. */
  transfer_count: number;
}

/** Takes the chain's write lock in `client`'s transaction and reads its checkpoint row (see {@link WriteTransactions}). */
export type LockChain = (client: pg.PoolClient, chain: string) => Promise<LockedChain | undefined>;

export interface WriteTransactions {
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, fence?: WriteFence): Promise<T>;
  lockChain: LockChain;
}

/** The write transactions over `pool`. */
export function createWriteTransactions(pool: pg.Pool): WriteTransactions {
  /** The fence of each connection inside a transaction of a writer lease's store. */
  const fences = new WeakMap<pg.PoolClient, WriteFence>();

  /**
   * Runs `fn` in a transaction on one connection; rolls back on any error. With a `fence` (a
   * writer lease's write), `lockChain` checks it inside the transaction.
   */
  async function transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, fence?: WriteFence): Promise<T> {
    fence?.assertHeld();
    const client = await pool.connect();
    if (fence !== undefined) fences.set(client, fence);
    let broken: Error | undefined;
    // A connection that breaks between two queries (a database restart) emits 'error' with no
    // query to fail; unheard, that ends the process (the pool listens only while a connection is
    // idle). The next query fails anyway, and the pool must then discard the connection.
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        // The connection is unusable: the pool must discard it, not hand it out again.
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      }
      throw error;
    } finally {
      fences.delete(client);
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  /**
   * Takes the chain's write lock and reads its checkpoint row. In a writer lease's transaction it
   * also checks, under that lock, that the lease is still the chain's newest election: fencing
   * costs no extra round trip, and an election (which takes the same lock) cannot slip in
   * between the check and the commit.
   */
  async function lockChain(client: pg.PoolClient, chain: string): Promise<LockedChain | undefined> {
    await run(client, 'lockChain', [WRITE_LOCK_CLASS, chain]);
    const result = await run<LockedChain & { writer_epoch: number }>(client, 'chainForWrite', [chain]);
    const row = result.rows[0];
    const fence = fences.get(client);
    if (fence !== undefined) {
      if (chain !== fence.chain) {
        throw new TokenqueryError(`a writer lease of ${fence.chain} cannot write ${chain}`);
      }
      const stored = row?.writer_epoch ?? 0;
      if (stored !== fence.epoch) throw fence.superseded(stored);
    }
    return row;
  }

  return { transaction, lockChain };
}

/** A new writer's election (writer-election.ts), on its lock connection: returns the new epoch. */
export async function electWriter(client: pg.ClientBase, chain: string, writerId: string): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query({ name: 'lockChain', text: SQL.lockChain, values: [WRITE_LOCK_CLASS, chain] });
    const result = await client.query<{ writer_epoch: string | number }>({
      name: 'electWriter',
      text: SQL.electWriter,
      values: [chain, writerId, Date.now()],
    });
    await client.query('COMMIT');
    return Number(result.rows[0]!.writer_epoch);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
