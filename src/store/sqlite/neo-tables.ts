/**
 * The NEO (Legacy 2.x) part of the SQLite store: the UTXO output table, contract deployments
 * and asset facts (tables of migration `0002_neo`), and the reads the NEO operations need.
 *
 * Global assets are ordinary rows of `tokens`, so counts, balances and the token list work as
 * for any token. What differs is where their balances come from: `planBatch` (../batch-plan.ts) turns a
 * batch's outputs into balance deltas and adds its asset transfers without deltas, and
 * `applyBatch` applies both together with everything else of the batch, in one transaction.
 * The SQL is in neo-statements.ts.
 */
import type Database from 'better-sqlite3';
import { decodeTokenRow, type TokenDecoders, withNeoFields } from '../rows.js';
import type {
  AddressBalance,
  NeoBatchPart,
  NeoContractRecord,
  NeoOutputRow,
  NeoTokenPage,
  NeoTokenRecord,
} from '../types.js';
import {
  decodeAmount,
  decodeHex,
  decodeNullableAmount,
  encodeHex,
  pushAmountParams,
  pushHexParams,
  type SqlValue,
} from './codec.js';
import { type NeoTokenRow, prepareNeoStatements } from './neo-statements.js';

/** The token columns decode as the rest of the store's (codec.ts); names are kept as text. */
const TOKEN_DECODERS: TokenDecoders<SqlValue, string, SqlValue> = {
  address: decodeHex,
  text: (value) => value,
  amount: decodeNullableAmount,
};

function toNeoToken(chain: string, row: NeoTokenRow): NeoTokenRecord {
  return withNeoFields(decodeTokenRow(chain, row, TOKEN_DECODERS), row);
}

/** The NEO statements over one connection: writes run inside `applyBatch`'s transaction. */
export interface NeoTables {
  /** Writes the output table, deployments and asset facts of a batch. Call inside the batch's transaction. */
  write(chain: string, neo: NeoBatchPart): void;
  /** True when the chain holds NEO data (which cannot be rolled back). */
  hasData(chain: string): boolean;
  getOutputs(chain: string, refs: readonly { txid: string; n: number }[]): NeoOutputRow[];
  getToken(chain: string, address: string): NeoTokenRecord | null;
  listAddressBalances(chain: string, address: string): AddressBalance<NeoTokenRecord>[];
  listTokens(chain: string, offset: number, limit: number): NeoTokenPage;
  listContracts(chain: string, offset: number, limit: number): NeoContractRecord[];
}

/** Prepares the NEO statements over an open, migrated connection. */
export function createNeoTables(db: Database.Database): NeoTables {
  const sql = prepareNeoStatements(db);
  const insertOutputs = (chain: string, outputs: readonly NeoOutputRow[]): void => {
    const ROWS = 100;
    for (let start = 0; start < outputs.length; start += ROWS) {
      const part = outputs.slice(start, start + ROWS);
      const params: unknown[] = [];
      for (const o of part) {
        params.push(chain);
        pushHexParams(params, o.txid);
        params.push(o.n);
        pushHexParams(params, o.asset);
        params.push(o.address);
        pushAmountParams(params, o.value);
      }
      sql.insertOutputs(part.length).run(params);
    }
  };

  const listTokensTx = db.transaction((chain: string, offset: number, limit: number): NeoTokenPage => {
    const total = sql.tokenCount.get(chain) ?? 0;
    const rows = sql.listTokens.all(chain, limit, offset);
    return { total, tokens: rows.map((row) => toNeoToken(chain, row)) };
  });

  return {
    write(chain, neo) {
      // Created first: an output created and spent inside the batch comes and goes.
      insertOutputs(chain, neo.outputsCreated);
      for (const output of neo.outputsSpent) {
        const params: unknown[] = [chain];
        pushHexParams(params, output.txid);
        params.push(output.n);
        // An output created before the index began was never in the table: nothing to delete.
        sql.deleteOutput.run(params);
      }
      let seq = 0;
      for (const d of neo.deployments) {
        sql.insertContract.run(
          chain,
          encodeHex(d.hash),
          d.blockNumber,
          d.txIndex,
          seq++,
          encodeHex(d.txHash),
          d.time,
          d.kind,
          d.name,
          d.author,
          d.ownerAddress,
        );
      }
      for (const asset of neo.assets) {
        sql.upsertAsset.run({
          chain,
          asset: encodeHex(asset.asset),
          type: asset.type,
          block: asset.registration?.blockNumber ?? null,
          time: asset.registration?.time ?? null,
          registrar: asset.registration?.registrar ?? null,
        });
      }
    },

    hasData(chain) {
      return sql.hasData.get(chain, chain, chain) === 1;
    },

    getOutputs(chain, refs) {
      const rows: NeoOutputRow[] = [];
      for (const ref of refs) {
        const row = sql.getOutput.get(chain, encodeHex(ref.txid), ref.n);
        if (row === undefined) continue;
        rows.push({
          txid: ref.txid,
          n: ref.n,
          asset: decodeHex(row.asset),
          address: row.address,
          value: decodeAmount(row.value),
        });
      }
      return rows;
    },

    getToken(chain, address) {
      const row = sql.getToken.get(chain, encodeHex(address));
      return row === undefined ? null : toNeoToken(chain, row);
    },

    listTokens(chain, offset, limit) {
      return listTokensTx(chain, offset, limit);
    },

    listAddressBalances(chain, address) {
      return sql.addressBalances.all(encodeHex(address), chain).map((row) => ({
        balance: decodeAmount(row.balance),
        transferCount: row.holder_transfers,
        token: toNeoToken(chain, row),
      }));
    },

    listContracts(chain, offset, limit) {
      return sql.listContracts.all(chain, limit, offset).map((row) => ({
        hash: decodeHex(row.hash),
        blockNumber: row.block_number,
        txIndex: row.tx_index,
        txHash: decodeHex(row.tx_hash),
        time: row.time,
        kind: row.kind,
        name: row.name,
        author: row.author,
        ownerAddress: row.owner,
      }));
    },
  };
}
