/**
 * The advisory-lock keys of the PostgreSQL store, in one place so that no two uses collide.
 *
 * PostgreSQL has two key spaces for advisory locks: one `bigint`, and pairs of `integer`s; a key
 * in one never conflicts with a key in the other. The migration lock uses the `bigint` space
 * (migrations.ts); the two locks below use pairs, with distinct first keys.
 */
import { createHash } from 'node:crypto';

/**
 * First key of the transaction-level lock each write to a chain takes (`tq`), the second being
 * `hashtext(chain)`. It serializes a chain's write transactions between processes as SQLite's
 * write lock does (see transactions.ts), and orders every write against a writer election.
 */
export const WRITE_LOCK_CLASS = 0x7471;

/**
 * First key of the session-level lock the elected writer of a chain holds (`tqwr`) for as long as
 * its lock connection lives (writer-election.ts). The second key is {@link writerLockKey}.
 */
export const WRITER_LOCK_CLASS = 0x74717772;

/**
 * Second key of a chain's writer lock: the first 4 bytes of SHA-256 of `<schema>/<chain>`, as a
 * signed 32-bit integer. The schema is part of it because advisory locks are per database, and two
 * stores in different schemas of one database are different deployments whose writers must not
 * wait for each other. (A collision between two chain names, about 1 in 4·10⁸ for a pair, would
 * only keep one chain waiting, never let two writers of one chain in.)
 */
export function writerLockKey(schema: string, chain: string): number {
  return createHash('sha256').update(`${schema}/${chain}`).digest().readInt32BE(0);
}
