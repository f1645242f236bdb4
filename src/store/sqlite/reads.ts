/**
 * The SQLite store's read parts: `reader` (what the API, the dashboard and `/metrics` read),
 * `scans` (whole-history scans for `verify`) and `neo` (the NEO operations' reads, from
 * neo-tables.ts). Rows come back as text and arrays (see the API reads in statements.ts) and
 * become records through codec.ts.
 */
import { stat } from 'node:fs/promises';
import type Database from 'better-sqlite3';
import { decodeRecentTransfers } from '../chain-activity.js';
import type {
  AddressBalance,
  HistoryScans,
  HolderEntry,
  NeoReader,
  StoreReader,
  TokenLabel,
  TokenPage,
  TransferRecord,
} from '../types.js';
import { createBalanceSumRead } from './balance-sums.js';
import {
  decodeAmount,
  encodeHex,
  rankKey,
  readTokenRecord,
  type SqlValue,
  type TokenListRow,
  toChainStatus,
} from './codec.js';
import type { NeoTables } from './neo-tables.js';
import type { AddressTransferRow, Statements } from './statements.js';

/** A transfer row of the address reads (statements.ts) → TransferRecord of `token`. */
function addressTransfer(token: string, row: AddressTransferRow, at = 0): TransferRecord {
  return {
    token,
    blockNumber: row[at] as number,
    logIndex: row[at + 1] as number,
    txIndex: row[at + 2] as number,
    txHash: row[at + 3] as string,
    from: row[at + 4] as string,
    to: row[at + 5] as string,
    value: decodeAmount(row[at + 6] as SqlValue),
    time: row[at + 7] as number,
  };
}

const holderEntry = ([address, balance]: [string, SqlValue]): HolderEntry => ({
  address,
  balance: decodeAmount(balance),
});

/** How stale `readVersion` may be about other connections' commits. */
export const DATA_VERSION_CHECK_MS = 5;

/** The `reader` part over one connection. */
export function createReader(db: Database.Database, sql: Statements): StoreReader {
  // readVersion's state: the two SQLite counters last seen, and the version they gave.
  let version = 0;
  let externalSeen = -1;
  let ownSeen = -1;
  let externalCheckedAt = Number.NEGATIVE_INFINITY;
  const balanceSum = createBalanceSumRead(db);

  const tokenPage = (chain: string, rows: TokenListRow[], total: number | null | undefined): TokenPage => ({
    total: total ?? 0,
    tokens: rows.map((row) => readTokenRecord(chain, row, 1)),
  });
  // A page past the end has no row to carry the total: read it in the same deferred read
  // transaction as the (still empty, or by now not) page, so both come from one snapshot.
  const listTokensTx = db.transaction((chain: string, offset: number, limit: number): TokenPage => {
    const rows = sql.listTokens.all(chain, chain, limit, offset);
    return tokenPage(chain, rows, rows.length > 0 ? rows[0]![0] : sql.tokenCount.get(chain));
  });

  return {
    async getChainStatus(chain) {
      const row = sql.getChain.get(chain);
      return row === undefined ? null : toChainStatus(row);
    },

    async listChainStatuses() {
      return sql.listChains.all().map(toChainStatus);
    },

    async getNotExact(chain, address) {
      const row = sql.getNotExact.get(chain, encodeHex(address));
      if (row === undefined) return null;
      return {
        atBlock: row.not_exact_block,
        supplyDrift: BigInt(row.not_exact_drift),
        sampled: row.not_exact_sampled,
        differing: row.not_exact_differing,
      };
    },

    async countNotExact() {
      return Object.fromEntries(sql.countNotExact.all().map((row) => [row.chain, row.n]));
    },

    async getBalanceSum(chain, token) {
      return balanceSum(chain, token);
    },

    async getChainActivity(chain) {
      const row = sql.getChain.get(chain);
      if (row === undefined) return null;
      return { chain, transfers: row.transfer_count, recent: decodeRecentTransfers(row.recent_transfers) };
    },

    async storageBytes() {
      // The main file and the WAL (committed pages not yet checkpointed back); the shared-memory
      // index is a cache. An in-memory database has no file: 0.
      if (db.memory) return 0;
      let bytes = 0;
      for (const file of [db.name, `${db.name}-wal`]) {
        bytes += (await stat(file).catch(() => null))?.size ?? 0;
      }
      return bytes;
    },

    async getToken(chain, address) {
      const row = sql.getToken.get(chain, encodeHex(address));
      return row === undefined ? null : readTokenRecord(chain, row);
    },

    // getToken's statement once per token: in process, a lookup each costs less than a statement
    // for each list length. Its row starts with the label's columns (codec.ts, readTokenRecord).
    async getTokenLabels(chain, addresses) {
      const labels: TokenLabel[] = [];
      for (const token of new Set(addresses)) {
        const row = sql.getToken.get(chain, encodeHex(token));
        if (row !== undefined) {
          const { address, name, symbol, decimals } = readTokenRecord(chain, row);
          labels.push({ chain, address, name, symbol, decimals });
        }
      }
      return labels;
    },

    async listTransfers(chain, token, offset, limit) {
      const rows = sql.listTransfers.all(chain, encodeHex(token), limit, offset);
      const transfers: TransferRecord[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const [blockNumber, logIndex, txIndex, txHash, from, to, value, time] = rows[i]!;
        transfers[i] = {
          token,
          blockNumber,
          logIndex,
          txIndex,
          txHash,
          from,
          to,
          value: decodeAmount(value),
          time,
        };
      }
      return transfers;
    },

    async listTokens(chain, offset, limit) {
      const rows = sql.listTokens.all(chain, chain, limit, offset);
      // One statement, one snapshot: no transaction needed unless the page is empty.
      return rows.length > 0 ? tokenPage(chain, rows, rows[0]![0]) : listTokensTx(chain, offset, limit);
    },

    async getBalance(chain, token, holder) {
      const stored = sql.getBalance.get(chain, encodeHex(token), encodeHex(holder));
      return stored === undefined ? 0n : decodeAmount(stored);
    },

    async listAddressBalances(chain, address) {
      const rows = sql.addressBalances.all(encodeHex(address), chain);
      const entries: AddressBalance[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const [amount, transferCount, token, name, symbol, decimals] = rows[i]!;
        entries[i] = {
          balance: decodeAmount(amount),
          transferCount,
          token: { chain, address: token, name, symbol, decimals },
        };
      }
      return entries;
    },

    async getAddressHolding(chain, address, token) {
      const row = sql.addressHolding.get(chain, encodeHex(token), encodeHex(address));
      return row === undefined
        ? { balance: 0n, transferCount: 0 }
        : { balance: decodeAmount(row[0]), transferCount: row[1] };
    },

    async listAddressTransfers(chain, address, token, offset, limit) {
      const holder = encodeHex(address);
      if (token !== null) {
        return sql.addressTransfersOfToken
          .all(chain, holder, chain, encodeHex(token), limit, offset)
          .map((row) => addressTransfer(token, row));
      }
      // Index order is the answer unless two tokens' entries tie on (block, log index) in the page
      // or across its edges (ties are neighbours in index order): read one entry more each side.
      const from = Math.max(0, offset - 1);
      let rows = sql.addressTransfersByIndex.all(chain, holder, limit + (offset - from) + 1, from);
      const tied = rows.some((row, i) => i > 0 && row[1] === rows[i - 1]![1] && row[2] === rows[i - 1]![2]);
      if (tied) rows = sql.addressTransfers.all(chain, holder, limit, offset);
      else rows = rows.slice(offset - from, offset - from + limit);
      return rows.map((row) => addressTransfer(row[0], row.slice(1) as AddressTransferRow));
    },

    async listHolders(chain, token, offset, limit) {
      return sql.holders.all(chain, encodeHex(token), limit, offset).map(holderEntry);
    },

    // `PRAGMA data_version` changes when another connection commits; `total_changes()` counts
    // this connection's row changes (data_version ignores those). The first costs a read
    // transaction, so it is asked at most every DATA_VERSION_CHECK_MS: another process's commit
    // shows up that much late at most. The second is a plain function call, asked every time.
    readVersion() {
      const now = performance.now();
      if (now - externalCheckedAt >= DATA_VERSION_CHECK_MS) {
        externalCheckedAt = now;
        const external = sql.dataVersion.get()!;
        if (external !== externalSeen) {
          externalSeen = external;
          version++;
        }
      }
      const own = sql.totalChanges.get()!;
      if (own !== ownSeen) {
        ownSeen = own;
        version++;
      }
      return version;
    },
  };
}

/** The `scans` part over one connection. */
export function createScans(sql: Statements): Omit<HistoryScans, 'scanBalanceChanges'> {
  return {
    async scanTransfers(chain, token, after, limit) {
      const rows = sql.scanTransfers.all(
        chain,
        encodeHex(token),
        after?.blockNumber ?? -1,
        after?.logIndex ?? -1,
        limit,
      );
      return rows.map(([blockNumber, logIndex, txIndex, txHash, from, to, value, time]) => ({
        token,
        blockNumber,
        logIndex,
        txIndex,
        txHash,
        from,
        to,
        value: decodeAmount(value),
        time,
      }));
    },

    async scanBalances(chain, token, afterHolder, limit) {
      const rows = sql.scanBalances.all(
        chain,
        encodeHex(token),
        afterHolder === null ? 1 : 0,
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      );
      return rows.map(([holder, amount]) => ({ holder, amount: decodeAmount(amount) }));
    },

    async negativeBalances(chain, token, limit) {
      const rows = sql.negativeBalances.all(chain, encodeHex(token), limit);
      return rows.map(([holder, amount]) => ({ holder, amount: decodeAmount(amount) }));
    },

    async scanHoldings(chain, token, afterHolder, limit) {
      const rows = sql.scanHoldings.all(
        chain,
        encodeHex(token),
        afterHolder === null ? 1 : 0,
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      );
      return rows.map(([holder, amount, transferCount]) => ({
        holder,
        balance: decodeAmount(amount),
        transferCount,
      }));
    },

    async scanHolders(chain, token, after, limit) {
      const key = encodeHex(token);
      if (after === null) return sql.holders.all(chain, key, limit, 0).map(holderEntry);
      // Holders of `after`'s balance after it, then those of lower balances. No holder follows a
      // balance that is not positive (holders' balances are).
      if (after.balance <= 0n) return [];
      const rank = rankKey(after.balance);
      const page = sql.holdersOfRankAfter.all(chain, key, rank, encodeHex(after.address), limit);
      if (page.length < limit) page.push(...sql.holdersBelowRank.all(chain, key, rank, limit - page.length));
      return page.map(holderEntry);
    },

    async scanSeedBalances(chain, token, afterHolder, limit) {
      const rows = sql.scanSeeds.all(
        chain,
        encodeHex(token),
        afterHolder === null ? 1 : 0,
        afterHolder === null ? null : encodeHex(afterHolder),
        limit,
      );
      return rows.map(([holder, amount]) => ({ token, holder, amount: decodeAmount(amount) }));
    },
  };
}

/** The `neo` part: the NEO tables' reads, as promises. */
export function createNeoReader(neo: NeoTables): NeoReader {
  return {
    async getNeoToken(chain, address) {
      return neo.getToken(chain, address);
    },

    async listNeoTokens(chain, offset, limit) {
      return neo.listTokens(chain, offset, limit);
    },

    async listNeoAddressBalances(chain, address) {
      return neo.listAddressBalances(chain, address);
    },

    async listNeoContracts(chain, offset, limit) {
      return neo.listContracts(chain, offset, limit);
    },
  };
}
