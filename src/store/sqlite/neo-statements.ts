/**
 * The SQL of the NEO (Legacy 2.x) part of the SQLite store (tables of migration `0002_neo`),
 * prepared once per connection; neo-tables.ts runs it.
 */
import type Database from 'better-sqlite3';
import type { NeoTokenColumns, TokenColumns } from '../rows.js';
import { type SqlValue, UNHEX_OR_VALUE } from './codec.js';
import { hintedRead } from './index-hint.js';

/** A token row with its NEO facts, as `NEO_TOKEN_SELECT` reads it. */
export type NeoTokenRow = TokenColumns<SqlValue, string, SqlValue> & NeoTokenColumns;

/** A row of `neo_contracts`. */
export interface ContractRow {
  hash: SqlValue;
  block_number: number;
  tx_index: number;
  tx_hash: SqlValue;
  time: number;
  kind: string;
  name: string;
  author: string;
  owner: string | null;
}

const NEO_TOKEN_SELECT = `
  SELECT t.address, t.name, t.symbol, t.decimals, t.total_supply, t.cap, t.burned_balance,
    t.holder_count, t.transfer_count, t.first_block, t.icon,
    a.type AS asset_type, a.registered_time, a.registrar,
    c.time AS contract_time, c.owner AS contract_owner
  FROM tokens AS t
  LEFT JOIN neo_assets AS a ON a.chain = t.chain AND a.asset = t.address
  LEFT JOIN neo_contracts AS c ON c.chain = t.chain AND c.hash = t.address`;

/** The NEO statements over one connection. */
export function prepareNeoStatements(db: Database.Database) {
  const outputInserts = new Map<number, Database.Statement>();
  return {
    deleteOutput: db.prepare(
      `DELETE FROM neo_outputs WHERE chain = ? AND txid = ${UNHEX_OR_VALUE} AND n = ?`,
    ),
    getOutput: db.prepare<unknown[], { asset: SqlValue; address: string; value: SqlValue }>(
      'SELECT asset, address, value FROM neo_outputs WHERE chain = ? AND txid = ? AND n = ?',
    ),
    insertContract: db.prepare(`
      INSERT OR IGNORE INTO neo_contracts
        (chain, hash, block_number, tx_index, seq, tx_hash, time, kind, name, author, owner)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    upsertAsset: db.prepare(`
      INSERT INTO neo_assets (chain, asset, type, registered_block, registered_time, registrar)
      VALUES (@chain, @asset, @type, @block, @time, @registrar)
      ON CONFLICT (chain, asset) DO UPDATE SET
        type = coalesce(excluded.type, type),
        registered_block = coalesce(registered_block, excluded.registered_block),
        registered_time = CASE WHEN registered_block IS NULL THEN excluded.registered_time ELSE registered_time END,
        registrar = CASE WHEN registered_block IS NULL THEN excluded.registrar ELSE registrar END`),
    hasData: db
      .prepare<[string, string, string], number>(`
        SELECT EXISTS (SELECT 1 FROM neo_outputs WHERE chain = ?)
          OR EXISTS (SELECT 1 FROM neo_contracts WHERE chain = ?)
          OR EXISTS (SELECT 1 FROM neo_assets WHERE chain = ?)`)
      .pluck(),
    getToken: db.prepare<[string, SqlValue], NeoTokenRow>(
      `${NEO_TOKEN_SELECT} WHERE t.chain = ? AND t.address = ?`,
    ),
    listTokens: db.prepare<[string, number, number], NeoTokenRow>(`
      ${NEO_TOKEN_SELECT} WHERE t.chain = ?
      ORDER BY t.holder_count DESC, t.transfer_count DESC, t.address ASC LIMIT +? OFFSET +?`),
    tokenCount: db.prepare<[string], number>('SELECT token_count FROM chains WHERE chain = ?').pluck(),
    // `listAddressBalances` (statements.ts) with the NEO facts of each token.
    // (Unforced while a bulk load's build has dropped the index: index-hint.ts.)
    addressBalances: hintedRead<
      [SqlValue, string],
      NeoTokenRow & { balance: SqlValue; holder_transfers: number }
    >(
      db,
      `
      SELECT t.address, t.name, t.symbol, t.decimals, t.total_supply, t.cap, t.burned_balance,
        t.holder_count, t.transfer_count, t.first_block, t.icon,
        a.type AS asset_type, a.registered_time, a.registrar,
        c.time AS contract_time, c.owner AS contract_owner,
        b.amount AS balance, b.transfer_count AS holder_transfers
      FROM balances AS b INDEXED BY balances_by_holder
      CROSS JOIN tokens AS t ON t.id = b.token_id
      LEFT JOIN neo_assets AS a ON a.chain = t.chain AND a.asset = t.address
      LEFT JOIN neo_contracts AS c ON c.chain = t.chain AND c.hash = t.address
      WHERE b.holder = ? AND t.chain = ? AND b.rank IS NOT NULL
      ORDER BY t.holder_count DESC, t.transfer_count DESC, t.address ASC`,
      'balances_by_holder',
    ),
    listContracts: db.prepare<[string, number, number], ContractRow>(`
      SELECT hash, block_number, tx_index, tx_hash, time, kind, name, author, owner FROM neo_contracts
      WHERE chain = ? ORDER BY block_number DESC, tx_index DESC, seq DESC LIMIT +? OFFSET +?`),
    /** The multi-row insert of `rows` outputs, prepared on first use and kept. */
    insertOutputs: (rows: number): Database.Statement => {
      let prepared = outputInserts.get(rows);
      if (prepared === undefined) {
        const row = `(?, ${UNHEX_OR_VALUE}, ?, ${UNHEX_OR_VALUE}, ?, ${UNHEX_OR_VALUE})`;
        prepared = db.prepare(
          `INSERT INTO neo_outputs (chain, txid, n, asset, address, value) VALUES ${Array(rows).fill(row).join(', ')}`,
        );
        outputInserts.set(rows, prepared);
      }
      return prepared;
    },
  };
}

/** The NEO statements over one connection. */
export type NeoStatements = ReturnType<typeof prepareNeoStatements>;
