/**
 * What the sections of the store contract suite share: the context a backend's factory gives
 * them, the addresses they use, a random history and a snapshot of everything a store can tell.
 */
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import { seededRandom as random } from '../../internal/random.js';
import { batch, holder, tokenAddress, transferRecord } from '../testing/batches.js';
import type { IndexBatch, Store, TransferRecord } from '../types.js';

/** What the factory hands each test. */
export interface StoreUnderTest {
  /** A fresh, empty store. */
  store: Store;
  /** Opens the same data again (after `store.close()`); omit when the backend cannot. */
  reopen?: () => Promise<Store>;
  /** Closes every store handed out that is still open, then deletes the data. */
  cleanup: () => Promise<void>;
}

/** What the suite hands each of its sections. */
export interface ContractContext {
  /** Runs `fn` on a fresh store and always cleans up. */
  withStore(fn: (store: Store, context: StoreUnderTest) => Promise<void>): Promise<void>;
  /** The backend's factory, for a second (reference) store; its caller cleans it up. */
  open(): Promise<StoreUnderTest>;
}

export const T1 = tokenAddress(1);
export const T2 = tokenAddress(2);
export const T3 = tokenAddress(3);
export const T4 = tokenAddress(4);
export const T5 = tokenAddress(5);
export const H1 = holder(1);
export const H2 = holder(2);
export const H3 = holder(3);

export interface History {
  transfers: TransferRecord[];
  tokens: string[];
  parties: string[];
}

/**
 * Random transfers over `blocks` blocks: mints, burns, `0x…dead`, balances that go negative,
 * self transfers, zero and uint256-sized values, and tokens that first appear late.
 */
export function randomHistory(
  seed: number,
  blocks: number,
  tokenCount: number,
  holderCount: number,
): History {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const tokens = Array.from({ length: tokenCount }, (_, i) => tokenAddress(i + 1));
  const holders = Array.from({ length: holderCount }, (_, i) => holder(i + 1));
  const parties = [ZERO_ADDRESS, DEAD_ADDRESS, ...holders];
  const value = (): bigint => {
    const kind = next();
    if (kind < 0.1) return 0n;
    if (kind < 0.6) return BigInt(Math.floor(next() * 1_000_000));
    let hex = '';
    for (let i = 0; i < 64; i++) hex += Math.floor(next() * 16).toString(16);
    return BigInt(`0x${hex}`) >> BigInt(Math.floor(next() * 200));
  };
  const transfers: TransferRecord[] = [];
  for (let block = 1; block <= blocks; block++) {
    const count = Math.floor(next() * 5);
    // Token i becomes available from block 1 + i * blocks / tokenCount.
    const available = tokens.filter((_, i) => block >= 1 + Math.floor((i * blocks) / tokenCount));
    for (let log = 0; log < count; log++) {
      const from = next() < 0.3 ? ZERO_ADDRESS : pick(parties);
      const to = next() < 0.1 ? from : pick(parties);
      transfers.push(
        transferRecord({
          token: pick(available),
          blockNumber: block,
          logIndex: log,
          from,
          to,
          value: value(),
        }),
      );
    }
  }
  return { transfers, tokens, parties };
}

/** Batches covering `ranges` (inclusive `[from, to]`), each with its part of the history. */
export function batchesOf(history: History, ranges: [number, number][], window?: number): IndexBatch[] {
  return ranges.map(([from, to]) =>
    batch({
      from,
      to,
      transfers: history.transfers.filter((t) => t.blockNumber >= from && t.blockNumber <= to),
      prune: window === undefined ? 0 : Math.max(0, to - window),
    }),
  );
}

/** Everything the interface can tell about one chain, for deep comparisons. */
export async function snapshot(store: Store, chain: string, tokens: string[], parties: string[]) {
  return {
    checkpoint: await store.writer.getCheckpoint(chain),
    list: await store.reader.listTokens(chain, 0, 10_000),
    tokens: await Promise.all(tokens.map((t) => store.reader.getToken(chain, t))),
    transfers: await Promise.all(tokens.map((t) => store.reader.listTransfers(chain, t, 0, 100_000))),
    balances: await Promise.all(
      tokens.map((t) => Promise.all(parties.map((p) => store.reader.getBalance(chain, t, p)))),
    ),
    needingSupply: (await store.writer.tokensNeedingSupply(chain, 0, 10_000)).sort(),
  };
}

export async function applyAll(store: Store, batches: IndexBatch[]): Promise<void> {
  for (const b of batches) await store.writer.applyBatch(b);
}
