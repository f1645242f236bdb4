/**
 * The PostgreSQL store: opens the pool (connect.ts) and wires the store's parts over it, each its
 * own object: `writer` (writer.ts), `reader`, `scans` and `neo` (reads.ts), `keys` (api-keys.ts),
 * and the writer election (writer-election.ts), whose leases write through a fenced copy of the
 * writer part. The SQL lives in statements.ts, the row encodings in codec.ts.
 */
import type { Store } from '../types.js';
import { createApiKeys } from './api-keys.js';
import { DEFAULT_COPY_FROM_ROWS } from './bulk-copy.js';
import { connectPool, type PostgresStoreOptions } from './connect.js';
import { createNeoReader, createReader, createScans } from './reads.js';
import { createWriteTransactions, electWriter } from './transactions.js';
import { createWriter } from './writer.js';
import { createWriterElection } from './writer-election.js';

export type { PostgresStoreOptions } from './connect.js';

/** Opens a PostgreSQL store: checks the connection, then brings the schema up to date (migrations.ts). */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const pool = await connectPool(options);
  const { url, logger } = options;
  let closed = false;

  const transactions = createWriteTransactions(pool);
  const reader = createReader(pool);
  const neo = createNeoReader(pool);
  const scans = createScans(pool);
  const copyFromRows = options.copyFromRows ?? DEFAULT_COPY_FROM_ROWS;
  const writer = createWriter(pool, transactions, reader, scans, neo, copyFromRows, logger);

  const election = createWriterElection({
    url,
    logger,
    elect: electWriter,
    fencedWriter: (fence) =>
      createWriter(pool, transactions, reader, scans, neo, copyFromRows, logger, fence),
    currentWriter: async (chain) => (await reader.getChainStatus(chain))?.writer ?? null,
  });

  return {
    kind: 'postgres',
    writer,
    reader,
    scans,
    neo,
    keys: createApiKeys(pool),
    acquireWriterLease: (chain, options) => election.acquire(chain, options),
    async close() {
      if (closed) return;
      closed = true;
      await election.close();
      await pool.end();
    },
  };
}
