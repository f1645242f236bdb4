/**
 * Migration `0007_address_views` on a store built by an earlier version: fills the address ids,
 * `address_transfers` and the balances' `transfer_count` from the stored transfers, in place and
 * in the migration's transaction (a crash leaves the store at version 6, and the next open starts
 * over). Everything is done by SQL in chunks of about `CHUNK_TRANSFERS` transfers, so memory stays
 * bounded whatever the store's size; progress is logged with a percentage and an ETA. (`rank` is a
 * virtual column: creating its index computed it.)
 */
import type Database from 'better-sqlite3';
import type { Logger } from '../../internal/logger.js';
import { migrationProgress } from './migration-progress.js';

/** Transfers per chunk of the fill. */
const CHUNK_TRANSFERS = 200_000;
/** Addresses per chunk of the transfer-count step. */
const CHUNK_ADDRESSES = 50_000;
/** Fills the address views from the stored transfers (see the file comment). */
export function fillAddressViews(db: Database.Database, logger: Logger): void {
  const tokens = db
    .prepare<[], { id: number; chain: string; transfer_count: number }>(
      'SELECT id, chain, transfer_count FROM tokens ORDER BY id',
    )
    .all();
  const total = tokens.reduce((sum, token) => sum + token.transfer_count, 0);
  if (total === 0) return;
  logger.info(
    { migration: '0007_address_views', transfers: total },
    `upgrading the database: indexing ${total} stored transfers by address (once; the store is locked meanwhile)`,
  );
  // The end of a chunk: the key `CHUNK_TRANSFERS` rows on, or null for the token's last chunk.
  const chunkEnd = db.prepare<[number, number, number, number], { block_number: number; log_index: number }>(`
      SELECT block_number, log_index FROM transfers
      WHERE token_id = ? AND (block_number, log_index) > (?, ?)
      ORDER BY block_number, log_index LIMIT 1 OFFSET ?`);
  const range = (t: string) =>
    `${t}token_id = @id AND (${t}block_number, ${t}log_index) > (@b0, @l0) AND (${t}block_number, ${t}log_index) <= (@b1, @l1)`;
  const insertAddresses = db.prepare(`
    INSERT OR IGNORE INTO addresses (chain, address)
    SELECT @chain, from_addr FROM transfers WHERE ${range('')}
    UNION SELECT @chain, to_addr FROM transfers WHERE ${range('')}`);
  const insertEntries = db.prepare(`
    INSERT INTO address_transfers (address_id, token_id, block_number, log_index)
    SELECT a.id, t.token_id, t.block_number, t.log_index
    FROM transfers AS t JOIN addresses AS a ON a.chain = @chain AND a.address = t.from_addr
    WHERE ${range('t.')}
    UNION ALL
    SELECT a.id, t.token_id, t.block_number, t.log_index
    FROM transfers AS t JOIN addresses AS a ON a.chain = @chain AND a.address = t.to_addr
    WHERE ${range('t.')}
      AND t.to_addr IS NOT t.from_addr`);
  const MAX = Number.MAX_SAFE_INTEGER;
  let done = 0;
  const report = migrationProgress(logger, '0007_address_views', 'transfers', total);
  for (const token of tokens) {
    let doneInToken = 0;
    let from = { block_number: -1, log_index: -1 };
    for (;;) {
      const end = chunkEnd.get(token.id, from.block_number, from.log_index, CHUNK_TRANSFERS - 1);
      const to = end ?? { block_number: MAX, log_index: MAX };
      const bounds = {
        chain: token.chain,
        id: token.id,
        b0: from.block_number,
        l0: from.log_index,
        b1: to.block_number,
        l1: to.log_index,
      };
      insertAddresses.run(bounds);
      insertEntries.run(bounds);
      if (end === undefined) break;
      doneInToken += CHUNK_TRANSFERS;
      report(done + doneInToken);
      from = end;
    }
    done += token.transfer_count;
    report(done);
  }

  // Transfer counts: the entries of each (address, token), an index-order GROUP BY of the key's prefix.
  const lastId = db.prepare<[], number>('SELECT coalesce(max(id), 0) FROM addresses').pluck().get()!;
  const countNamed = db.prepare(`
    INSERT INTO balances (token_id, holder, amount, transfer_count)
    SELECT x.token_id, a.address, 0, count(*)
    FROM address_transfers AS x JOIN addresses AS a ON a.id = x.address_id
    WHERE x.address_id BETWEEN ? AND ?
    GROUP BY x.address_id, x.token_id
    ON CONFLICT (token_id, holder) DO UPDATE SET transfer_count = excluded.transfer_count`);
  const reportCounts = migrationProgress(logger, '0007_address_views', 'transfer counts', lastId);
  for (let first = 1; first <= lastId; first += CHUNK_ADDRESSES) {
    countNamed.run(first, first + CHUNK_ADDRESSES - 1);
    reportCounts(first + CHUNK_ADDRESSES - 1);
  }
  logger.info({ migration: '0007_address_views', transfers: total }, 'upgrading the database: done');
}
