/**
 * The PostgreSQL store's read parts: `reader` (what the API shows: chain statuses, tokens,
 * transfers, balances), `scans` (whole-history scans for `verify`) and `neo` (the NEO reads).
 * Each reads through the pool, one statement per call, outside any transaction.
 */
import type pg from 'pg';
import { decodeRecentTransfers } from '../chain-activity.js';
import type {
  ChainActivity,
  ChainStatus,
  HistoryScans,
  NeoContractRecord,
  NeoReader,
  NeoTokenPage,
  NeoTokenRecord,
  SeedBalance,
  StoreReader,
  TokenPage,
  TokenRecord,
  TransferRecord,
} from '../types.js';
import {
  type ChainRow,
  decodeAmount,
  decodeHex,
  encodeHex,
  type TokenRow,
  type TransferRow,
  toChainStatus,
  toTokenRecord,
  transferOfRow,
} from './codec.js';
import { getNeoToken, listNeoContracts, listNeoTokens } from './neo-tables.js';
import { run, runnerOn } from './statements.js';

/** The API's reads. */
export function createReader(pool: pg.Pool): StoreReader {
  return {
    async getChainStatus(chain: string): Promise<ChainStatus | null> {
      const row = (await run<ChainRow>(pool, 'getChain', [chain])).rows[0];
      return row === undefined ? null : toChainStatus(row);
    },

    async listChainStatuses(): Promise<ChainStatus[]> {
      return (await run<ChainRow>(pool, 'listChains', [])).rows.map(toChainStatus);
    },

    async getToken(chain: string, address: string): Promise<TokenRecord | null> {
      const row = (await run<TokenRow>(pool, 'getToken', [chain, encodeHex(address)])).rows[0];
      return row === undefined ? null : toTokenRecord(chain, row);
    },

    async listTransfers(
      chain: string,
      token: string,
      offset: number,
      limit: number,
    ): Promise<TransferRecord[]> {
      const result = await run<TransferRow>(pool, 'listTransfers', [chain, encodeHex(token), limit, offset]);
      return result.rows.map((row) => transferOfRow(token, row));
    },

    async listTokens(chain: string, offset: number, limit: number): Promise<TokenPage> {
      const result = await run<TokenRow & { total: number | null }>(pool, 'listTokens', [
        chain,
        limit,
        offset,
      ]);
      const tokens: TokenRecord[] = [];
      for (const row of result.rows) if (row.address !== null) tokens.push(toTokenRecord(chain, row));
      return { total: result.rows[0]?.total ?? 0, tokens };
    },

    async getBalance(chain: string, token: string, holder: string): Promise<bigint> {
      const result = await run<{ amount: string }>(pool, 'getBalance', [
        chain,
        encodeHex(token),
        encodeHex(holder),
      ]);
      const row = result.rows[0];
      return row === undefined ? 0n : decodeAmount(row.amount);
    },

    async getChainActivity(chain: string): Promise<ChainActivity | null> {
      const result = await run<{ transfer_count: number; recent_transfers: string | null }>(
        pool,
        'chainActivity',
        [chain],
      );
      const row = result.rows[0];
      if (row === undefined) return null;
      return { chain, transfers: row.transfer_count, recent: decodeRecentTransfers(row.recent_transfers) };
    },

    async storageBytes(): Promise<number> {
      return (await run<{ bytes: number }>(pool, 'databaseSize', [])).rows[0]?.bytes ?? 0;
    },
  };
}

/** The whole-history scans `verify` runs. */
export function createScans(pool: pg.Pool): HistoryScans {
  return {
    async scanTransfers(chain, token, after, limit): Promise<TransferRecord[]> {
      const result = await run<TransferRow>(pool, 'scanTransfers', [
        chain,
        encodeHex(token),
        after?.blockNumber ?? -1,
        after?.logIndex ?? -1,
        limit,
      ]);
      return result.rows.map((row) => transferOfRow(token, row));
    },

    async scanBalances(chain, token, afterHolder, limit) {
      const result = await run<{ holder: string; amount: string }>(pool, 'scanBalances', [
        chain,
        encodeHex(token),
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      ]);
      return result.rows.map((row) => ({ holder: decodeHex(row.holder), amount: decodeAmount(row.amount) }));
    },

    async scanSeedBalances(chain, token, afterHolder, limit): Promise<SeedBalance[]> {
      const result = await run<{ holder: string; amount: string }>(pool, 'scanSeeds', [
        chain,
        encodeHex(token),
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      ]);
      return result.rows.map((row) => ({
        token,
        holder: decodeHex(row.holder),
        amount: decodeAmount(row.amount),
      }));
    },
  };
}

/** The NEO operations' reads (neo-tables.ts). */
export function createNeoReader(pool: pg.Pool): NeoReader {
  const onPool = runnerOn(pool);
  return {
    async getNeoToken(chain: string, address: string): Promise<NeoTokenRecord | null> {
      return getNeoToken(onPool, chain, address);
    },

    async listNeoTokens(chain: string, offset: number, limit: number): Promise<NeoTokenPage> {
      return listNeoTokens(onPool, chain, offset, limit);
    },

    async listNeoContracts(chain: string, offset: number, limit: number): Promise<NeoContractRecord[]> {
      return listNeoContracts(onPool, chain, offset, limit);
    },
  };
}
