/**
 * The PostgreSQL store's read parts: `reader` (what the API shows: chain statuses, tokens,
 * transfers, balances), `scans` (whole-history scans for `verify`) and `neo` (the NEO reads).
 * Each reads through the pool, one statement per call, outside any transaction.
 */
import type pg from 'pg';
import { isEvmChain } from '../../internal/chains.js';
import { NON_HOLDERS } from '../batch-plan.js';
import { decodeRecentTransfers } from '../chain-activity.js';
import type {
  AddressBalance,
  AddressHolding,
  ChainActivity,
  ChainStatus,
  HistoryScans,
  HolderEntry,
  NeoContractRecord,
  NeoReader,
  NeoTokenPage,
  NeoTokenRecord,
  NotExactMark,
  SeedBalance,
  StoreReader,
  TokenLabel,
  TokenPage,
  TokenRecord,
  TransferRecord,
} from '../types.js';
import { byteaArray } from './binary-arrays.js';
import {
  type ChainRow,
  decodeAmount,
  decodeHex,
  encodeHex,
  encodeHexDigits,
  type HoldingColumns,
  type TokenLabelRow,
  type TokenRow,
  type TransferRow,
  toChainStatus,
  toHolding,
  toTokenLabel,
  toTokenRecord,
  transferOfRow,
} from './codec.js';
import { getNeoToken, listNeoAddressBalances, listNeoContracts, listNeoTokens } from './neo-tables.js';
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

    async getNotExact(chain: string, address: string): Promise<NotExactMark | null> {
      const row = (
        await run<{
          not_exact_block: string;
          not_exact_drift: string;
          not_exact_sampled: number;
          not_exact_differing: number;
        }>(pool, 'getNotExact', [chain, encodeHex(address)])
      ).rows[0];
      if (row === undefined) return null;
      return {
        atBlock: Number(row.not_exact_block),
        supplyDrift: BigInt(row.not_exact_drift),
        sampled: row.not_exact_sampled,
        differing: row.not_exact_differing,
      };
    },

    async getBalanceSum(chain: string, token: string): Promise<bigint | null> {
      const row = (await run<{ balance_sum: string }>(pool, 'getBalanceSum', [chain, encodeHex(token)]))
        .rows[0];
      return row === undefined ? null : BigInt(row.balance_sum);
    },

    async countNotExact(): Promise<Record<string, number>> {
      const rows = (await run<{ chain: string; n: number }>(pool, 'countNotExact', [])).rows;
      return Object.fromEntries(rows.map((row) => [row.chain, row.n]));
    },

    async getToken(chain: string, address: string): Promise<TokenRecord | null> {
      const row = (await run<TokenRow>(pool, 'getToken', [chain, encodeHex(address)])).rows[0];
      return row === undefined ? null : toTokenRecord(chain, row);
    },

    async getTokenLabels(chain: string, addresses: readonly string[]): Promise<TokenLabel[]> {
      if (addresses.length === 0) return [];
      const rows = await run<TokenLabelRow>(pool, 'getTokenLabels', [
        chain,
        byteaArray(addresses.map((address) => encodeHexDigits(address))),
      ]);
      return rows.rows.map((row) => toTokenLabel(chain, row));
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

    async listAddressBalances(chain: string, address: string): Promise<AddressBalance[]> {
      if (NON_HOLDERS.has(address)) return [];
      const result = await run<TokenLabelRow & HoldingColumns>(pool, 'listAddressBalances', [
        chain,
        encodeHex(address),
      ]);
      return result.rows.map((row) => ({ token: toTokenLabel(chain, row), ...toHolding(row) }));
    },

    async getAddressHolding(chain: string, address: string, token: string): Promise<AddressHolding> {
      const result = await run<{ amount: string; transfer_count: number }>(pool, 'getHolding', [
        chain,
        encodeHex(token),
        encodeHex(address),
      ]);
      const row = result.rows[0];
      return row === undefined
        ? { balance: 0n, transferCount: 0 }
        : { balance: decodeAmount(row.amount), transferCount: row.transfer_count };
    },

    async listAddressTransfers(
      chain: string,
      address: string,
      token: string | null,
      offset: number,
      limit: number,
    ): Promise<TransferRecord[]> {
      if (token !== null) {
        const result = await run<TransferRow>(pool, 'listAddressTokenTransfers', [
          chain,
          encodeHex(token),
          encodeHex(address),
          limit,
          offset,
        ]);
        return result.rows.map((row) => transferOfRow(token, row));
      }
      const statement = isEvmChain(chain) ? 'listEvmAddressTransfers' : 'listAddressTransfers';
      const result = await run<TransferRow & { token: string }>(pool, statement, [
        chain,
        encodeHex(address),
        limit,
        offset,
      ]);
      return result.rows.map((row) => transferOfRow(decodeHex(row.token), row));
    },

    async listHolders(chain: string, token: string, offset: number, limit: number): Promise<HolderEntry[]> {
      const result = await run<{ holder: string; amount: string }>(pool, 'listHolders', [
        chain,
        encodeHex(token),
        limit,
        offset,
      ]);
      return result.rows.map(toHolderEntry);
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

function toHolderEntry(row: { holder: string; amount: string }): HolderEntry {
  return { address: decodeHex(row.holder), balance: decodeAmount(row.amount) };
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

    async scanBalanceChanges(chain, token, after, limit) {
      const result = await run<{ block_number: string; log_index: number; holder: string; amount: string }>(
        pool,
        'scanBalanceChanges',
        [chain, encodeHex(token), after?.blockNumber ?? -1, after?.logIndex ?? -1, limit],
      );
      return result.rows.map((row) => ({
        token,
        blockNumber: Number(row.block_number),
        logIndex: row.log_index,
        holder: decodeHex(row.holder),
        amount: decodeAmount(row.amount),
      }));
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

    async negativeBalances(chain, token, limit) {
      const result = await run<{ holder: string; amount: string }>(pool, 'negativeBalances', [
        chain,
        encodeHex(token),
        limit,
      ]);
      return result.rows.map((row) => ({ holder: decodeHex(row.holder), amount: decodeAmount(row.amount) }));
    },

    async scanHoldings(chain, token, afterHolder, limit) {
      const result = await run<{ holder: string; amount: string; transfer_count: number }>(
        pool,
        'scanHoldings',
        [chain, encodeHex(token), afterHolder === null ? null : encodeHex(afterHolder), limit],
      );
      return result.rows.map((row) => ({
        holder: decodeHex(row.holder),
        balance: decodeAmount(row.amount),
        transferCount: row.transfer_count,
      }));
    },

    async scanHolders(chain, token, after, limit): Promise<HolderEntry[]> {
      type Row = { holder: string; amount: string };
      if (after === null) {
        return (await run<Row>(pool, 'listHolders', [chain, encodeHex(token), limit, 0])).rows.map(
          toHolderEntry,
        );
      }
      const amount = after.balance.toString();
      const tied = await run<Row>(pool, 'scanHoldersTied', [
        chain,
        encodeHex(token),
        amount,
        encodeHex(after.address),
        limit,
      ]);
      const rows = tied.rows;
      if (rows.length < limit) {
        const below = await run<Row>(pool, 'scanHoldersBelow', [
          chain,
          encodeHex(token),
          amount,
          limit - rows.length,
        ]);
        rows.push(...below.rows);
      }
      return rows.map(toHolderEntry);
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

    async listNeoAddressBalances(chain: string, address: string): Promise<AddressBalance<NeoTokenRecord>[]> {
      return listNeoAddressBalances(onPool, chain, address);
    },

    async listNeoContracts(chain: string, offset: number, limit: number): Promise<NeoContractRecord[]> {
      return listNeoContracts(onPool, chain, offset, limit);
    },
  };
}
