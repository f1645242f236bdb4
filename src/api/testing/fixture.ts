/**
 * A running API over a real SQLite store seeded only through the `Store` interface, for the
 * API's tests. The seed is small but covers each shape: decimals, caps, burns, unknown supply,
 * amounts above 2^53, one transaction with two transfers, and a chain whose head lags its data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../internal/api-keys.js';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import type { HttpLimits } from '../../internal/http-limits.js';
import { type Logger, silentLogger } from '../../internal/logger.js';
import type { RateLimit } from '../../internal/rate-limit.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { indexBatch } from '../../store/testing/batches.js';
import type { Store, TokenMetadata, TransferRecord } from '../../store/types.js';
import { startApiServer } from '../server.js';

const address = (hexByte: string): string => `0x${hexByte.repeat(20)}`;

export const ALICE = address('a1');
export const BOB = address('b0');
export const CAROL = address('c0');

/** 6 decimals, total supply raw 1 500 000 (`1.5`), no cap, no burn reading. */
export const USDC = address('11');
/** 18 decimals, total 10^27 (`1000000000`), cap 2·10^27, 10^26 burned. */
export const BIG = address('22');
/** 0 decimals, empty name and symbol, `totalSupply()` unreadable, transfers above 2^53. */
export const NOSUPPLY = address('33');
/** 2 decimals, total 500, burned 700: circulating supply clamps at 0. */
export const OVERBURNED = address('44');
/** An address no chain in the seed has seen. */
export const UNKNOWN = address('55');

export const ETH_HEAD = 120;
export const ETH_INDEXED = 110;
/** bsc's data reaches block 10 while its recorded head is lower. */
export const BSC_INDEXED = 10;
export const BSC_HEAD = 3;
export const BSC_ERROR = 'node unreachable';

/** `2^64 + 1` and `2^53 + 1`: a float would lose both. */
export const HUGE_VALUE = 2n ** 64n + 1n;
export const ODD_VALUE = 2n ** 53n + 1n;

let nextTx = 1;
function transfer(
  token: string,
  blockNumber: number,
  logIndex: number,
  txIndex: number,
  from: string,
  to: string,
  value: bigint,
  txHash = `0x${(nextTx++).toString(16).padStart(64, '0')}`,
): TransferRecord {
  return {
    token,
    blockNumber,
    logIndex,
    txIndex,
    txHash,
    from,
    to,
    value,
    time: 1_700_000_000 + blockNumber * 12,
  };
}

const SHARED_TX = `0x${'f'.repeat(64)}`;

/** The eth transfers, chain order. USDC block 105 holds one transaction (index 2) with two transfers. */
export const ETH_TRANSFERS: TransferRecord[] = [
  transfer(USDC, 100, 0, 0, ZERO_ADDRESS, ALICE, 1_000_000n),
  transfer(USDC, 101, 3, 1, ALICE, BOB, 250_000n),
  transfer(BIG, 102, 0, 0, ZERO_ADDRESS, ALICE, 10n ** 27n),
  transfer(NOSUPPLY, 103, 0, 0, ZERO_ADDRESS, BOB, HUGE_VALUE),
  transfer(NOSUPPLY, 103, 1, 0, BOB, CAROL, ODD_VALUE),
  transfer(OVERBURNED, 104, 0, 0, ZERO_ADDRESS, ALICE, 500n),
  transfer(USDC, 105, 0, 2, ALICE, CAROL, 100_000n, SHARED_TX),
  transfer(USDC, 105, 1, 2, CAROL, BOB, 50_000n, SHARED_TX),
  transfer(USDC, 110, 7, 4, BOB, DEAD_ADDRESS, 1n),
];

export const ETH_TOKENS: TokenMetadata[] = [
  { address: USDC, name: 'USD Coin', symbol: 'USDC', decimals: 6 },
  { address: BIG, name: 'Big Token', symbol: 'BIG', decimals: 18 },
  { address: NOSUPPLY, name: '', symbol: '', decimals: 0 },
  { address: OVERBURNED, name: 'Over Burned', symbol: 'OB', decimals: 2 },
];

export interface ApiFixture {
  url: string;
  store: Store;
  /** Path of the SQLite file, for opening a second handle ("another process"). */
  dbPath: string;
  /** An active key. */
  key: string;
  keyId: string;
  /** Adds an active key and returns it. */
  addKey(label?: string): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  logger?: Logger;
  keyCacheTtlMs?: number;
  /** Configured chains. Default eth, bsc, movr (kcs and neo stay unserved). */
  chains?: string[];
  /** The API's response cache; on by default, as in production. */
  responseCache?: boolean;
  /**
   * The per-address limit of requests without a valid key. Default off: the suites that use the
   * fixture send many refused requests from one address; anonymous-limit.test.ts tests the limit.
   */
  anonymousRateLimit?: RateLimit | null;
  /** Slow-client limits; absent: the defaults. */
  httpLimits?: Partial<HttpLimits>;
}

async function seed(store: Store): Promise<void> {
  await store.writer.applyBatch(
    indexBatch({
      fromBlock: 100,
      toBlock: ETH_INDEXED,
      transfers: ETH_TRANSFERS,
      tokens: ETH_TOKENS,
      head: ETH_HEAD,
    }),
  );
  await store.writer.updateSupplies('eth', [
    { address: USDC, totalSupply: 1_500_000n, cap: null, burnedBalance: null, atBlock: ETH_INDEXED },
    {
      address: BIG,
      totalSupply: 10n ** 27n,
      cap: 2n * 10n ** 27n,
      burnedBalance: 10n ** 26n,
      atBlock: ETH_INDEXED,
    },
    { address: NOSUPPLY, totalSupply: null, cap: null, burnedBalance: null, atBlock: ETH_INDEXED },
    { address: OVERBURNED, totalSupply: 500n, cap: null, burnedBalance: 700n, atBlock: ETH_INDEXED },
  ]);
  // The same address on another chain is another token.
  await store.writer.applyBatch(
    indexBatch({
      chain: 'bsc',
      fromBlock: 1,
      toBlock: BSC_INDEXED,
      transfers: [transfer(USDC, BSC_INDEXED, 0, 0, ZERO_ADDRESS, ALICE, 7n)],
      tokens: [{ address: USDC, name: 'Binance USD Coin', symbol: 'bUSDC', decimals: 18 }],
    }),
  );
  await store.writer.updateSupplies('bsc', [
    { address: USDC, totalSupply: 7n, cap: null, burnedBalance: null, atBlock: BSC_INDEXED },
  ]);
  await store.writer.setChainStatus('bsc', { head: BSC_HEAD, lastError: BSC_ERROR });
}

export async function startApiFixture(options: FixtureOptions = {}): Promise<ApiFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'tq-api-'));
  const dbPath = join(dir, 'api.sqlite');
  const logger = options.logger ?? silentLogger();
  const store = await openSqliteStore({ path: dbPath, logger });
  await seed(store);

  async function addKey(label = 'test'): Promise<{ key: string; id: string }> {
    const { key, id, hash } = generateApiKey();
    await store.keys.createApiKey({ id, hash, label, createdAt: Date.now(), revokedAt: null });
    return { key, id };
  }
  const { key, id: keyId } = await addKey();

  const server = await startApiServer({
    store,
    logger,
    chains: options.chains ?? ['eth', 'bsc', 'movr'],
    host: '127.0.0.1',
    port: 0,
    ...(options.keyCacheTtlMs === undefined ? {} : { keyCacheTtlMs: options.keyCacheTtlMs }),
    ...(options.responseCache === undefined ? {} : { responseCache: options.responseCache }),
    anonymousRateLimit: options.anonymousRateLimit ?? null,
    ...options.httpLimits,
  });

  return {
    url: server.url,
    store,
    dbPath,
    key,
    keyId,
    addKey,
    async close() {
      await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
