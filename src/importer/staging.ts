/**
 * The external sort behind `import`: rows go into a temporary SQLite file keyed by
 * (block, log index), in whatever order the export has them, and come back in chain order.
 *
 * Why SQLite: exports are often unordered (BigQuery writes sharded files in no particular
 * order; ethereum-etl's parallel workers finish block ranges out of order) and may be far larger
 * than memory. A `WITHOUT ROWID` table clustered on (block, log index) keeps them sorted on disk
 * as they arrive, within a bounded page cache, and a scan reads them back in order with no
 * sorter and no temporary files elsewhere. The key also finds duplicates: a row given twice
 * (overlapping exports) is counted and dropped; two different rows for one log are refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Database as Db, Statement } from 'better-sqlite3';
import Database from 'better-sqlite3';
import { ImportInputError, type ImportRow } from './columns.js';

export interface Staging {
  /** Adds rows; returns how many were exact duplicates of rows already added (and dropped). */
  add(rows: readonly ImportRow[]): number;
  /** Rows added so far (duplicates excluded). */
  readonly count: number;
  /** Every row, in chain order (block, then log index). */
  sorted(): IterableIterator<ImportRow>;
  /** Bytes of the staging file, for reports. */
  bytes(): number;
  /** Closes and deletes the temporary files. */
  close(): void;
}

export interface StagingOptions {
  /** Directory for the temporary file (it can grow to ~150 bytes per row). */
  dir: string;
  /** Describes a row's origin (`file:line`) for duplicate messages. */
  where: (file: number, line: number) => string;
  /** Page cache in MiB. Default 64. */
  cacheMiB?: number;
}

type StagedRow = [
  block: number,
  log: number,
  token: string,
  from: string,
  to: string,
  value: string,
  tx: string,
  txIndex: number | null,
  time: number | null,
  blockHash: string | null,
  file: number,
  line: number,
];

/** Creates the temporary store in a fresh directory under `options.dir`. */
export function createStaging(options: StagingOptions): Staging {
  const dir = mkdtempSync(join(options.dir, '.tokenquery-import-'));
  let db: Db;
  try {
    db = new Database(join(dir, 'staging.sqlite'));
    // A scratch file: no journal and no syncs; a crash loses nothing the next run will not redo.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('page_size = 16384');
    db.pragma(`cache_size = ${-1024 * (options.cacheMiB ?? 64)}`);
    // Hex is kept as BLOBs (half the bytes), converted by SQLite's own hex()/unhex().
    db.exec(`CREATE TABLE rows (
      block INTEGER NOT NULL, log INTEGER NOT NULL,
      token BLOB NOT NULL, sender BLOB NOT NULL, recipient BLOB NOT NULL, value TEXT NOT NULL,
      tx BLOB NOT NULL, tx_index INTEGER, time INTEGER, block_hash BLOB,
      file INTEGER NOT NULL, line INTEGER NOT NULL,
      PRIMARY KEY (block, log)
    ) WITHOUT ROWID`);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const columns = `block, log, '0x' || lower(hex(token)), '0x' || lower(hex(sender)), '0x' || lower(hex(recipient)), value,
    '0x' || lower(hex(tx)), tx_index, time, CASE WHEN block_hash IS NULL THEN NULL ELSE '0x' || lower(hex(block_hash)) END, file, line`;
  const insert: Statement = db.prepare(
    `INSERT INTO rows VALUES (?, ?, unhex(?), unhex(?), unhex(?), ?, unhex(?), ?, ?, unhex(?), ?, ?)
     ON CONFLICT DO NOTHING`,
  );
  const existing = db.prepare(`SELECT ${columns} FROM rows WHERE block = ? AND log = ?`).raw();
  const scan = db.prepare(`SELECT ${columns} FROM rows ORDER BY block, log`).raw();
  let count = 0;

  const addAll = db.transaction((rows: readonly ImportRow[]): number => {
    let duplicates = 0;
    for (const r of rows) {
      const result = insert.run(
        r.blockNumber,
        r.logIndex,
        r.token.slice(2),
        r.from.slice(2),
        r.to.slice(2),
        r.value,
        r.txHash.slice(2),
        r.txIndex,
        r.time,
        r.blockHash === null ? null : r.blockHash.slice(2),
        r.file,
        r.line,
      );
      if (result.changes === 1) {
        count++;
        continue;
      }
      const before = toRow(existing.get(r.blockNumber, r.logIndex) as StagedRow);
      if (!sameTransfer(before, r)) {
        throw new ImportInputError(
          `${options.where(r.file, r.line)}: block ${r.blockNumber} log ${r.logIndex} was already given with different data at ${options.where(before.file, before.line)}`,
        );
      }
      duplicates++;
    }
    return duplicates;
  });

  return {
    add: (rows) => addAll(rows),
    get count() {
      return count;
    },
    *sorted() {
      for (const raw of scan.iterate() as IterableIterator<StagedRow>) yield toRow(raw);
    },
    bytes() {
      const pages = db.pragma('page_count', { simple: true }) as number;
      return pages * 16384;
    },
    close() {
      try {
        if (db.open) db.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function toRow(raw: StagedRow): ImportRow {
  return {
    blockNumber: raw[0],
    logIndex: raw[1],
    token: raw[2],
    from: raw[3],
    to: raw[4],
    value: raw[5],
    txHash: raw[6],
    txIndex: raw[7],
    time: raw[8],
    blockHash: raw[9],
    file: raw[10],
    line: raw[11],
  };
}

/**
 * Two rows for the same log describe the same transfer. Optional columns count only when both
 * rows have them: one export may carry timestamps that another lacks.
 */
export function sameTransfer(a: ImportRow, b: ImportRow): boolean {
  const agree = <T>(x: T | null, y: T | null) => x === null || y === null || x === y;
  return (
    a.blockNumber === b.blockNumber &&
    a.logIndex === b.logIndex &&
    a.token === b.token &&
    a.from === b.from &&
    a.to === b.to &&
    a.value === b.value &&
    a.txHash === b.txHash &&
    agree(a.txIndex, b.txIndex) &&
    agree(a.time, b.time) &&
    agree(a.blockHash, b.blockHash)
  );
}
