/**
 * The one behaviour suite every `Store` backend must pass, through the `Store` interface only
 * (like kysely's per-dialect test loop). A backend's test file calls `runStoreContractSuite`
 * with a factory that hands out a fresh, empty store for each test.
 *
 * Choices this suite pins down where `types.ts` leaves room:
 * - `""` (NEO's mint/burn party) is never a holder, like the zero address.
 * - `tokensNeedingSupply(chain, staleBefore, limit)`: `staleBefore` is a block number; marked
 *   tokens come first (oldest mark first), then tokens whose last read (`atBlock`) is older than
 *   `staleBefore`, oldest first.
 * - A supply read at a block older than the transfer that marked the token records its values
 *   but leaves the token marked.
 * - `RollbackResult.affectedTokens` lists, sorted, every token that lost transfers, including
 *   tokens that disappear (so a caller can forget them).
 * - A batch or rollback that does not fit the checkpoint is rejected and changes nothing.
 * - Starting balances (`IndexBatch.seeds`) are recorded per (token, holder) even when zero, count
 *   once, survive rollbacks, and go away only with a token a rollback drops whole.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_UINT256 } from '../internal/amount.js';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../internal/chains.js';
import { seededRandom as random } from '../internal/random.js';
import { runNeoContractCases } from './store-neo.contract.js';
import type { ApiKeyRecord, BlockRef, IndexBatch, Store, TokenMetadata, TransferRecord } from './types.js';

/** What the factory hands each test. */
export interface StoreUnderTest {
  /** A fresh, empty store. */
  store: Store;
  /** Opens the same data again (after `store.close()`); omit when the backend cannot. */
  reopen?: () => Promise<Store>;
  /** Closes every store handed out that is still open, then deletes the data. */
  cleanup: () => Promise<void>;
}

// ---------- fixtures ----------

function address(prefix: string, n: number): string {
  return `0x${prefix}${n.toString(16).padStart(40 - prefix.length, '0')}`;
}
/** A holder address (never a burn address). */
const holder = (n: number): string => address('11', n);
/** A token address; larger n sorts later. */
const tokenAddress = (n: number): string => address('ee', n);
const hash = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;
const blockHash = (n: number): string => hash(0xb10c000000 + n);

function metadata(token: string): TokenMetadata {
  return { address: token, name: `Token ${token.slice(-4)}`, symbol: `T${token.slice(-4)}`, decimals: 18 };
}

interface TransferSpec {
  token: string;
  block: number;
  log: number;
  from: string;
  to: string;
  value: bigint;
  txIndex?: number;
}

function transfer(spec: TransferSpec): TransferRecord {
  return {
    token: spec.token,
    blockNumber: spec.block,
    logIndex: spec.log,
    txIndex: spec.txIndex ?? Math.floor(spec.log / 2),
    txHash: hash(spec.block * 10_000 + (spec.txIndex ?? Math.floor(spec.log / 2))),
    from: spec.from,
    to: spec.to,
    value: spec.value,
    time: 1_600_000_000 + spec.block * 12,
  };
}

function refs(from: number, to: number): BlockRef[] {
  const out: BlockRef[] = [];
  for (let n = from; n <= to; n++) out.push({ number: n, hash: blockHash(n), parentHash: blockHash(n - 1) });
  return out;
}

interface BatchSpec {
  chain?: string;
  from: number;
  to: number;
  transfers?: TransferRecord[];
  tokens?: TokenMetadata[];
  head?: number;
  prune?: number;
}

/** A batch with block refs for every block, metadata for every token in it, and the hash of `to`. */
function batch(spec: BatchSpec): IndexBatch {
  const transfers = spec.transfers ?? [];
  const tokens = spec.tokens ?? [...new Set(transfers.map((t) => t.token))].map(metadata);
  const prune = spec.prune ?? 0;
  return {
    chain: spec.chain ?? 'eth',
    fromBlock: spec.from,
    toBlock: spec.to,
    toBlockHash: blockHash(spec.to),
    transfers,
    tokens,
    blocks: refs(Math.max(spec.from, prune), spec.to),
    head: spec.head ?? spec.to + 5,
    pruneBlocksBelow: prune,
  };
}

/** Transfers of one token in one block, log indexes counting up from `firstLog`. */
function moves(
  token: string,
  block: number,
  list: [string, string, bigint][],
  firstLog = 0,
): TransferRecord[] {
  return list.map(([from, to, value], i) => transfer({ token, block, log: firstLog + i, from, to, value }));
}

interface History {
  transfers: TransferRecord[];
  tokens: string[];
  parties: string[];
}

/**
 * Random transfers over `blocks` blocks: mints, burns, `0x…dead`, balances that go negative,
 * self transfers, zero and uint256-sized values, and tokens that first appear late.
 */
function randomHistory(seed: number, blocks: number, tokenCount: number, holderCount: number): History {
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
      transfers.push(transfer({ token: pick(available), block, log, from, to, value: value() }));
    }
  }
  return { transfers, tokens, parties };
}

/** Batches covering `ranges` (inclusive `[from, to]`), each with its part of the history. */
function batchesOf(history: History, ranges: [number, number][], window?: number): IndexBatch[] {
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
async function snapshot(store: Store, chain: string, tokens: string[], parties: string[]) {
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

async function applyAll(store: Store, batches: IndexBatch[]): Promise<void> {
  for (const b of batches) await store.writer.applyBatch(b);
}

// ---------- the suite ----------

/** Options of {@link runStoreContractSuite}. */
export interface StoreContractOptions {
  /**
   * Run the NEO cases (`store-neo.contract.ts`). Default true; a backend whose NEO tables are
   * not written yet passes false until they are.
   */
  neo?: boolean;
}

export function runStoreContractSuite(
  name: string,
  open: () => Promise<StoreUnderTest>,
  options: StoreContractOptions = {},
): void {
  /** Runs `fn` on a fresh store and always cleans up. */
  async function withStore(fn: (store: Store, context: StoreUnderTest) => Promise<void>): Promise<void> {
    const context = await open();
    try {
      await fn(context.store, context);
    } finally {
      await context.cleanup();
    }
  }

  const T1 = tokenAddress(1);
  const T2 = tokenAddress(2);
  const T3 = tokenAddress(3);
  const T4 = tokenAddress(4);
  const T5 = tokenAddress(5);
  const [H1, H2, H3] = [holder(1), holder(2), holder(3)];

  describe(`store contract: ${name}`, () => {
    describe('empty store', () => {
      test('answers nothing before the first batch', () =>
        withStore(async (store) => {
          assert.equal(await store.writer.getCheckpoint('eth'), null);
          assert.equal(await store.reader.getChainStatus('eth'), null);
          assert.deepEqual(await store.reader.listChainStatuses(), []);
          assert.equal(await store.reader.getToken('eth', T1), null);
          assert.deepEqual(await store.reader.listTransfers('eth', T1, 0, 10), []);
          assert.deepEqual(await store.reader.listTokens('eth', 0, 10), { total: 0, tokens: [] });
          assert.equal(await store.reader.getBalance('eth', T1, H1), 0n);
          assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 100), []);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 100, 10), []);
          assert.deepEqual(await store.keys.listApiKeys(), []);
          assert.equal(typeof store.kind, 'string');
        }));
    });

    describe('applying batches', () => {
      test('a new token gets its metadata, first block and counts', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({
              from: 10,
              to: 11,
              transfers: [...moves(T1, 10, [[ZERO_ADDRESS, H1, 1000n]]), ...moves(T1, 11, [[H1, H2, 300n]])],
              tokens: [{ address: T1, name: 'Tether USD', symbol: 'USDT', decimals: 6 }],
            }),
          );
          assert.deepEqual(await store.reader.getToken('eth', T1), {
            chain: 'eth',
            address: T1,
            name: 'Tether USD',
            symbol: 'USDT',
            decimals: 6,
            totalSupply: null,
            cap: null,
            burnedBalance: null,
            holderCount: 2,
            transferCount: 2,
            firstBlock: 10,
            icon: '',
          });
          assert.equal(await store.reader.getBalance('eth', T1, H1), 700n);
          assert.equal(await store.reader.getBalance('eth', T1, H2), 300n);
          assert.equal(await store.reader.getBalance('eth', T1, ZERO_ADDRESS), -1000n);
          assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
        }));

      test('a known token keeps the metadata it was first seen with', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          await store.writer.applyBatch(
            batch({
              from: 2,
              to: 2,
              transfers: moves(T1, 2, [[H1, H2, 1n]]),
              tokens: [{ address: T1, name: 'Other', symbol: 'OTH', decimals: 2 }],
            }),
          );
          const token = await store.reader.getToken('eth', T1);
          assert.equal(token?.name, metadata(T1).name);
          assert.equal(token?.decimals, 18);
          assert.equal(token?.firstBlock, 1);
        }));

      test('the checkpoint follows each batch, empty batches too', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 100, to: 104, transfers: moves(T1, 102, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 104, hash: blockHash(104) });
          await store.writer.applyBatch({ ...batch({ from: 105, to: 110 }), toBlockHash: null });
          assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 110, hash: null });
          assert.equal(await store.writer.getCheckpoint('bsc'), null);
        }));

      test('uint256 extremes round-trip exactly', () =>
        withStore(async (store) => {
          const values = [
            0n,
            1n,
            2n ** 53n - 1n,
            2n ** 53n,
            2n ** 53n + 1n,
            2n ** 64n,
            2n ** 255n,
            2n ** 255n - 1n,
          ];
          const sent = values.reduce((a, b) => a + b, 0n);
          const transfers = [
            ...moves(T1, 1, [[ZERO_ADDRESS, H1, MAX_UINT256]]),
            ...moves(
              T1,
              2,
              values.map((v): [string, string, bigint] => [H1, H2, v]),
            ),
          ];
          await store.writer.applyBatch(batch({ from: 1, to: 2, transfers }));
          const listed = await store.reader.listTransfers('eth', T1, 0, 50);
          assert.deepEqual(listed, [...transfers].reverse());
          assert.equal(await store.reader.getBalance('eth', T1, ZERO_ADDRESS), -MAX_UINT256);
          assert.equal(await store.reader.getBalance('eth', T1, H1), MAX_UINT256 - sent);
          assert.equal(await store.reader.getBalance('eth', T1, H2), sent);
          await store.writer.updateSupplies('eth', [
            {
              address: T1,
              totalSupply: MAX_UINT256,
              cap: MAX_UINT256 - 1n,
              burnedBalance: 2n ** 200n,
              atBlock: 2,
            },
          ]);
          const token = await store.reader.getToken('eth', T1);
          assert.equal(token?.totalSupply, MAX_UINT256);
          assert.equal(token?.cap, MAX_UINT256 - 1n);
          assert.equal(token?.burnedBalance, 2n ** 200n);
        }));

      test('a negative balance is kept exactly and is not a holder', () =>
        withStore(async (store) => {
          // History that starts late: H1 sends what it received before the first indexed block.
          const big = 3n * 2n ** 200n;
          await store.writer.applyBatch(batch({ from: 1, to: 1, transfers: moves(T1, 1, [[H1, H2, big]]) }));
          assert.equal(await store.reader.getBalance('eth', T1, H1), -big);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 1);
          await store.writer.applyBatch(
            batch({ from: 2, to: 2, transfers: moves(T1, 2, [[H3, H1, big + 7n]]) }),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H1), 7n);
          assert.equal(await store.reader.getBalance('eth', T1, H3), -(big + 7n));
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
        }));

      test('the holder count follows balances to zero and back', () =>
        withStore(async (store) => {
          const steps: [[string, string, bigint][], number][] = [
            [[[ZERO_ADDRESS, H1, 10n]], 1],
            [[[H1, H2, 10n]], 1],
            [[[H2, H1, 4n]], 2],
            [[[H1, H2, 4n]], 1],
            // Within one batch: H3 receives everything and gives it all back.
            [
              [
                [H2, H3, 10n],
                [H3, H2, 10n],
              ],
              1,
            ],
            [[[H2, ZERO_ADDRESS, 10n]], 0],
            [[[ZERO_ADDRESS, H2, 1n]], 1],
          ];
          let block = 1;
          for (const [list, holders] of steps) {
            await store.writer.applyBatch(
              batch({ from: block, to: block, transfers: moves(T1, block, list) }),
            );
            assert.equal(
              (await store.reader.getToken('eth', T1))?.holderCount,
              holders,
              `after block ${block}`,
            );
            block++;
          }
          assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
          assert.equal(await store.reader.getBalance('eth', T1, H2), 1n);
          assert.equal(await store.reader.getBalance('eth', T1, H1), 0n);
        }));

      test('the zero address is never a holder, 0x…dead is', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({
              from: 1,
              to: 1,
              transfers: moves(T1, 1, [
                [H1, ZERO_ADDRESS, 5n],
                [H2, DEAD_ADDRESS, 6n],
              ]),
            }),
          );
          assert.equal(await store.reader.getBalance('eth', T1, ZERO_ADDRESS), 5n);
          assert.equal(await store.reader.getBalance('eth', T1, DEAD_ADDRESS), 6n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 1);
        }));

      test('every transfer counts, zero-value and self transfers too', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({
              from: 1,
              to: 1,
              transfers: [
                ...moves(T1, 1, [
                  [ZERO_ADDRESS, H1, 10n],
                  [H1, H1, 4n],
                  [H1, H2, 0n],
                ]),
                ...moves(T2, 1, [[ZERO_ADDRESS, H1, 1n]], 3),
              ],
            }),
          );
          await store.writer.applyBatch(batch({ from: 2, to: 3, transfers: moves(T1, 3, [[H1, H2, 1n]]) }));
          assert.equal((await store.reader.getToken('eth', T1))?.transferCount, 4);
          assert.equal((await store.reader.getToken('eth', T2))?.transferCount, 1);
          assert.equal(await store.reader.getBalance('eth', T1, H1), 9n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
        }));

      test('chains are separate', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ chain: 'eth', from: 1, to: 1, transfers: moves(T1, 1, [[H1, H2, 5n]]) }),
          );
          await store.writer.applyBatch(
            batch({ chain: 'bsc', from: 50, to: 50, transfers: moves(T1, 50, [[H1, H3, 7n]]) }),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H2), 5n);
          assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
          assert.equal(await store.reader.getBalance('bsc', T1, H3), 7n);
          assert.equal((await store.reader.getToken('bsc', T1))?.firstBlock, 50);
          assert.equal((await store.reader.listTransfers('eth', T1, 0, 10)).length, 1);
          assert.equal((await store.reader.listTokens('bsc', 0, 10)).total, 1);
          assert.equal(await store.reader.getToken('kcs', T1), null);
        }));

      test('NEO-style addresses, empty parties and any other strings round-trip', () =>
        withStore(async (store) => {
          const token = '0xceab719b8baa2310f232ee0d277c061704541cfb';
          const alice = 'AK2nJJpJr6o664CWJKi1QRXjqeic2zRp8y';
          const bob = 'AQzRMe3zyGS8W177xLJfewRRQZY2kddMun';
          const odd = '0xABCdef';
          const transfers = [
            transfer({ token, block: 7, log: 0, from: '', to: alice, value: 100n }),
            transfer({ token, block: 7, log: 1, from: alice, to: bob, value: 40n }),
            transfer({ token, block: 8, log: 0, from: bob, to: '', value: 15n }),
            {
              ...transfer({ token, block: 8, log: 1, from: alice, to: odd, value: 1n }),
              txHash: '0xABCDEF01',
            },
          ];
          await store.writer.applyBatch(batch({ chain: 'neo', from: 7, to: 8, transfers }));
          assert.deepEqual(await store.reader.listTransfers('neo', token, 0, 10), [...transfers].reverse());
          assert.equal(await store.reader.getBalance('neo', token, alice), 59n);
          assert.equal(await store.reader.getBalance('neo', token, bob), 25n);
          assert.equal(await store.reader.getBalance('neo', token, ''), -85n);
          assert.equal(await store.reader.getBalance('neo', token, odd), 1n);
          assert.equal(await store.reader.getBalance('neo', token, odd.toLowerCase()), 0n);
          // alice, bob and the odd address; '' (mints and burns) is never a holder.
          assert.equal((await store.reader.getToken('neo', token))?.holderCount, 3);
          await store.writer.applyBatch(
            batch({ chain: 'neo', from: 9, to: 9, transfers: moves(token, 9, [[bob, '', 200n]]) }),
          );
          assert.equal(await store.reader.getBalance('neo', token, ''), 115n);
          assert.equal((await store.reader.getToken('neo', token))?.holderCount, 2);
        }));

      test('a batch that does not continue the checkpoint is rejected and changes nothing', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 10, transfers: moves(T1, 5, [[ZERO_ADDRESS, H1, 9n]]) }),
          );
          const parties = [ZERO_ADDRESS, H1, H2];
          const before = await snapshot(store, 'eth', [T1, T2], parties);
          const statusBefore = await store.reader.getChainStatus('eth');
          const refsBefore = await store.writer.getBlockRefs('eth', 0, 100);
          for (const from of [12, 10, 1]) {
            const bad = batch({
              from,
              to: from + 3,
              transfers: [
                ...moves(T1, from, [[H1, H2, 1n]]),
                ...moves(T2, from + 1, [[ZERO_ADDRESS, H2, 1n]]),
              ],
              head: 99,
            });
            await assert.rejects(store.writer.applyBatch(bad), `batch from ${from}`);
          }
          assert.deepEqual(await snapshot(store, 'eth', [T1, T2], parties), before);
          assert.deepEqual(await store.reader.getChainStatus('eth'), statusBefore);
          assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 100), refsBefore);
          // The right continuation is still accepted.
          await store.writer.applyBatch(
            batch({ from: 11, to: 11, transfers: moves(T1, 11, [[H1, H2, 1n]]) }),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H2), 1n);
        }));
    });

    describe('transfer list', () => {
      const transfers = [
        ...moves(T1, 5, [
          [ZERO_ADDRESS, H1, 100n],
          [H1, H2, 1n],
          [H1, H3, 2n],
        ]),
        ...moves(T2, 5, [[ZERO_ADDRESS, H1, 1n]], 3),
        transfer({ token: T1, block: 6, log: 9, from: H2, to: H3, value: 1n, txIndex: 4 }),
        ...moves(T1, 7, [
          [H3, H1, 1n],
          [H1, H2, 5n],
        ]),
        transfer({ token: T1, block: 7, log: 3, from: H2, to: H1, value: 2n, txIndex: 0 }),
      ];
      const newestFirst = transfers
        .filter((t) => t.token === T1)
        .sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);

      test('is newest first: block, then log index, descending', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(batch({ from: 5, to: 7, transfers }));
          const listed = await store.reader.listTransfers('eth', T1, 0, 50);
          assert.deepEqual(listed, newestFirst);
          assert.deepEqual(
            listed.map((t) => [t.blockNumber, t.logIndex]),
            [
              [7, 3],
              [7, 1],
              [7, 0],
              [6, 9],
              [5, 2],
              [5, 1],
              [5, 0],
            ],
          );
        }));

      test('pages with offset and limit, also across batches', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 5, to: 5, transfers: transfers.filter((t) => t.blockNumber === 5) }),
          );
          await store.writer.applyBatch(
            batch({ from: 6, to: 7, transfers: transfers.filter((t) => t.blockNumber > 5) }),
          );
          const pages = [];
          for (let offset = 0; offset < 7; offset += 2)
            pages.push(...(await store.reader.listTransfers('eth', T1, offset, 2)));
          assert.deepEqual(pages, newestFirst);
          assert.deepEqual(await store.reader.listTransfers('eth', T1, 3, 3), newestFirst.slice(3, 6));
        }));

      test('page past the end returns an empty list', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(batch({ from: 5, to: 7, transfers }));
          assert.deepEqual(await store.reader.listTransfers('eth', T1, 7, 10), []);
          assert.deepEqual(await store.reader.listTransfers('eth', T1, 1000, 10), []);
        }));

      test('an unknown token has no transfers', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(batch({ from: 5, to: 7, transfers }));
          assert.deepEqual(await store.reader.listTransfers('eth', T3, 0, 10), []);
          assert.deepEqual(await store.reader.listTransfers('bsc', T1, 0, 10), []);
        }));
    });

    describe('whole-history scans', () => {
      test('scanTransfers pages oldest first without gaps or repeats; scanBalances lists every non-zero balance', () =>
        withStore(async (store) => {
          const rand = random(7);
          const holders = Array.from({ length: 9 }, (_, i) => holder(i + 1));
          const expected = new Map<string, bigint>();
          const all: TransferRecord[] = [];
          for (let block = 1; block <= 6; block++) {
            const list: [string, string, bigint][] = [];
            for (let i = 0; i < 7; i++) {
              const to = holders[Math.floor(rand() * holders.length)]!;
              list.push([ZERO_ADDRESS, to, BigInt(1 + Math.floor(rand() * 5))]);
            }
            const transfers = moves(T1, block, list);
            for (const t of transfers) {
              expected.set(t.to, (expected.get(t.to) ?? 0n) + t.value);
              // The mint's sender is stored too, negative (as any balance while history starts late).
              expected.set(t.from, (expected.get(t.from) ?? 0n) - t.value);
            }
            all.push(...transfers);
            await store.writer.applyBatch(batch({ from: block, to: block, transfers }));
          }
          // An emptied balance has no row: move one holder's whole balance away.
          const [emptied] = [...expected.keys()].filter((h) => h !== ZERO_ADDRESS);
          const amount = expected.get(emptied!)!;
          const last = transfer({
            token: T1,
            block: 7,
            log: 0,
            from: emptied!,
            to: holder(99),
            value: amount,
          });
          await store.writer.applyBatch(batch({ from: 7, to: 7, transfers: [last] }));
          all.push(last);
          expected.delete(emptied!);
          expected.set(holder(99), amount);

          const scanned: TransferRecord[] = [];
          let after: { blockNumber: number; logIndex: number } | null = null;
          for (;;) {
            const page = await store.scans.scanTransfers('eth', T1, after, 5);
            if (page.length === 0) break;
            scanned.push(...page);
            const tail = page[page.length - 1]!;
            after = { blockNumber: tail.blockNumber, logIndex: tail.logIndex };
          }
          assert.deepEqual(scanned, all);

          const balances = new Map<string, bigint>();
          let afterHolder: string | null = null;
          for (;;) {
            const page = await store.scans.scanBalances('eth', T1, afterHolder, 4);
            if (page.length === 0) break;
            for (const row of page) {
              assert.ok(!balances.has(row.holder), `holder ${row.holder} listed twice`);
              balances.set(row.holder, row.amount);
            }
            afterHolder = page[page.length - 1]!.holder;
          }
          assert.deepEqual(balances, expected);
          assert.deepEqual(await store.scans.scanTransfers('eth', T2, null, 5), []);
          assert.deepEqual(await store.scans.scanBalances('eth', T2, null, 5), []);
        }));
    });

    describe('token list', () => {
      /** A token with exactly `holders` holders and `count` transfers, all in `block`. */
      function shaped(token: string, block: number, holders: number, count: number): TransferRecord[] {
        const list: [string, string, bigint][] = [];
        for (let i = 0; i < holders; i++) list.push([ZERO_ADDRESS, holder(i + 1), 1n]);
        for (let i = holders; i < count; i++) list.push([holder(1), holder(1), 0n]);
        return moves(token, block, list);
      }

      test('orders by holders, then transfers descending, then address ascending', () =>
        withStore(async (store) => {
          // T2 and T1 tie on both counts; T2 is seen first, yet T1 sorts first by address.
          await store.writer.applyBatch(
            batch({
              from: 1,
              to: 5,
              transfers: [
                ...shaped(T2, 1, 2, 5),
                ...shaped(T1, 2, 2, 5),
                ...shaped(T5, 3, 1, 9),
                ...shaped(T3, 4, 2, 7),
                ...shaped(T4, 5, 3, 3),
              ],
            }),
          );
          const page = await store.reader.listTokens('eth', 0, 50);
          assert.equal(page.total, 5);
          assert.deepEqual(
            page.tokens.map((t) => [t.address, t.holderCount, t.transferCount]),
            [
              [T4, 3, 3],
              [T3, 2, 7],
              [T1, 2, 5],
              [T2, 2, 5],
              [T5, 1, 9],
            ],
          );
          assert.deepEqual(page.tokens[2], await store.reader.getToken('eth', T1));
          const second = await store.reader.listTokens('eth', 2, 2);
          assert.deepEqual(second, { total: 5, tokens: page.tokens.slice(2, 4) });
        }));

      test('order follows later batches', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 1, transfers: [...shaped(T1, 1, 2, 2), ...shaped(T2, 1, 1, 1)] }),
          );
          assert.deepEqual(
            (await store.reader.listTokens('eth', 0, 10)).tokens.map((t) => t.address),
            [T1, T2],
          );
          await store.writer.applyBatch(
            batch({
              from: 2,
              to: 2,
              transfers: moves(T2, 2, [
                [ZERO_ADDRESS, H3, 1n],
                [ZERO_ADDRESS, H2, 1n],
              ]),
            }),
          );
          await store.writer.applyBatch(batch({ from: 3, to: 3, transfers: moves(T1, 3, [[H1, H2, 1n]]) }));
          assert.deepEqual(
            (await store.reader.listTokens('eth', 0, 10)).tokens.map((t) => [t.address, t.holderCount]),
            [
              [T2, 3],
              [T1, 1],
            ],
          );
        }));

      test('page past the end returns an empty list with the total', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 1, transfers: [...shaped(T1, 1, 1, 1), ...shaped(T2, 1, 1, 1)] }),
          );
          await store.writer.applyBatch(
            batch({ chain: 'bsc', from: 1, to: 1, transfers: shaped(T3, 1, 1, 1) }),
          );
          assert.deepEqual(await store.reader.listTokens('eth', 2, 10), { total: 2, tokens: [] });
          assert.deepEqual(await store.reader.listTokens('eth', 50, 50), { total: 2, tokens: [] });
          assert.equal((await store.reader.listTokens('bsc', 0, 10)).total, 1);
        }));
    });

    describe('rollback', () => {
      const ranges: [number, number][] = [
        [1, 10],
        [11, 25],
        [26, 40],
      ];
      const history = randomHistory(20240611, 40, 5, 8);
      const clip = (to: number): [number, number][] =>
        ranges.filter(([from]) => from <= to).map(([from, end]) => [from, Math.min(end, to)]);

      for (const [label, window] of [
        ['inside the unfinalized window', undefined],
        ['below the pruned window', 5],
      ] as const) {
        for (const toBlock of [10, 18, 33, 37, 0]) {
          test(`undoing blocks above ${toBlock} ${label} equals never applying them`, () =>
            withStore(async (store) => {
              await applyAll(store, batchesOf(history, ranges, window));
              const result = await store.writer.rollback('eth', toBlock, blockHash(toBlock));
              const removed = history.transfers.filter((t) => t.blockNumber > toBlock);
              assert.equal(result.removedTransfers, removed.length);

              const reference = await open();
              try {
                await applyAll(reference.store, batchesOf(history, clip(toBlock), window));
                const expected = await snapshot(reference.store, 'eth', history.tokens, history.parties);
                if (toBlock === 0) expected.checkpoint = { block: 0, hash: blockHash(0) };
                assert.deepEqual(await snapshot(store, 'eth', history.tokens, history.parties), expected);
                if (window === undefined) {
                  assert.deepEqual(
                    await store.writer.getBlockRefs('eth', 0, 100),
                    await reference.store.writer.getBlockRefs('eth', 0, 100),
                  );
                }
              } finally {
                await reference.cleanup();
              }
            }));
        }
      }

      test('undoes a token touched only below the pruned window', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          await store.writer.applyBatch(
            batch({
              from: 6,
              to: 20,
              transfers: [...moves(T1, 7, [[H1, H2, 2n]]), ...moves(T2, 19, [[ZERO_ADDRESS, H1, 1n]])],
              prune: 15,
            }),
          );
          const result = await store.writer.rollback('eth', 5, blockHash(5));
          assert.deepEqual(result, { affectedTokens: [T1, T2], removedTransfers: 2 });
          assert.equal(await store.reader.getBalance('eth', T1, H1), 5n);
          assert.equal(await store.reader.getBalance('eth', T1, H2), 0n);
          const token = await store.reader.getToken('eth', T1);
          assert.equal(token?.transferCount, 1);
          assert.equal(token?.holderCount, 1);
          assert.equal(await store.reader.getToken('eth', T2), null);
        }));

      test('a token first seen in a rolled-back block disappears', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          await store.writer.applyBatch(
            batch({
              from: 6,
              to: 9,
              transfers: [...moves(T2, 7, [[ZERO_ADDRESS, H2, 8n]]), ...moves(T1, 8, [[H1, H2, 1n]])],
            }),
          );
          assert.equal((await store.reader.listTokens('eth', 0, 10)).total, 2);
          await store.writer.rollback('eth', 5, blockHash(5));
          assert.equal(await store.reader.getToken('eth', T2), null);
          assert.deepEqual(await store.reader.listTransfers('eth', T2, 0, 10), []);
          assert.equal(await store.reader.getBalance('eth', T2, H2), 0n);
          const page = await store.reader.listTokens('eth', 0, 10);
          assert.deepEqual(
            page.tokens.map((t) => t.address),
            [T1],
          );
          assert.equal(page.total, 1);
          // Seen again later, it is a new token with the metadata of that batch.
          await store.writer.applyBatch(
            batch({
              from: 6,
              to: 6,
              transfers: moves(T2, 6, [[ZERO_ADDRESS, H3, 1n]]),
              tokens: [{ address: T2, name: 'Again', symbol: 'AGN', decimals: 3 }],
            }),
          );
          const again = await store.reader.getToken('eth', T2);
          assert.equal(again?.name, 'Again');
          assert.equal(again?.firstBlock, 6);
          assert.equal(again?.holderCount, 1);
          assert.equal(again?.transferCount, 1);
        }));

      test('reports every token that lost transfers and marks survivors for a supply read', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({
              from: 1,
              to: 5,
              transfers: [
                ...moves(T1, 2, [[ZERO_ADDRESS, H1, 5n]]),
                ...moves(T3, 3, [[ZERO_ADDRESS, H1, 5n]]),
              ],
            }),
          );
          await store.writer.updateSupplies(
            'eth',
            [T1, T3].map((address) => ({
              address,
              totalSupply: 5n,
              cap: null,
              burnedBalance: 0n,
              atBlock: 5,
            })),
          );
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
          await store.writer.applyBatch(
            batch({
              from: 6,
              to: 9,
              transfers: [
                ...moves(T1, 6, [
                  [H1, H2, 1n],
                  [H2, H3, 1n],
                ]),
                ...moves(T2, 7, [[ZERO_ADDRESS, H2, 8n]]),
              ],
            }),
          );
          const result = await store.writer.rollback('eth', 5, blockHash(5));
          assert.deepEqual(result, { affectedTokens: [T1, T2], removedTransfers: 3 });
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), [T1]);
          // A read at the new checkpoint is recent enough.
          await store.writer.updateSupplies('eth', [
            { address: T1, totalSupply: 5n, cap: null, burnedBalance: 0n, atBlock: 5 },
          ]);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
        }));

      test('sets the checkpoint, drops block refs above it, and indexing continues from there', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          await store.writer.applyBatch(batch({ from: 6, to: 9, transfers: moves(T1, 8, [[H1, H2, 1n]]) }));
          await store.writer.rollback('eth', 6, hash(0xf0f0));
          assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 6, hash: hash(0xf0f0) });
          assert.equal((await store.reader.getChainStatus('eth'))?.indexed, 6);
          assert.deepEqual(
            (await store.writer.getBlockRefs('eth', 0, 100)).map((r) => r.number),
            [1, 2, 3, 4, 5, 6],
          );
          await assert.rejects(store.writer.applyBatch(batch({ from: 10, to: 10 })));
          await store.writer.applyBatch(batch({ from: 7, to: 7, transfers: moves(T1, 7, [[H1, H3, 2n]]) }));
          assert.equal(await store.reader.getBalance('eth', T1, H3), 2n);
          assert.equal(await store.reader.getBalance('eth', T1, H2), 0n);
          assert.equal((await store.reader.getToken('eth', T1))?.transferCount, 2);
        }));

      test('a rollback above the checkpoint is rejected and changes nothing', () =>
        withStore(async (store) => {
          await assert.rejects(store.writer.rollback('eth', 3, null));
          await store.writer.applyBatch(
            batch({ from: 1, to: 5, transfers: moves(T1, 3, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          await assert.rejects(store.writer.rollback('eth', 6, null));
          assert.deepEqual(await store.writer.getCheckpoint('eth'), { block: 5, hash: blockHash(5) });
          await store.writer.rollback('eth', 5, blockHash(5));
          assert.equal((await store.reader.getToken('eth', T1))?.transferCount, 1);
        }));
    });

    describe('starting balances of a late start', () => {
      /** A batch of `spec` whose transfers are seeded at block `seedBlock` with `balances`. */
      const seeded = (
        spec: BatchSpec,
        seedBlock: number,
        balances: [token: string, holder: string, amount: bigint][],
        partial = false,
      ): IndexBatch => ({
        ...batch(spec),
        seeds: {
          block: seedBlock,
          balances: balances.map(([token, holder, amount]) => ({ token, holder, amount })),
          partial,
        },
      });

      test("a seed is the holder's balance before the batch's transfers, and counts as a holder", () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            seeded({ from: 10, to: 12, transfers: moves(T1, 11, [[H1, H2, 30n]]) }, 9, [
              [T1, H1, 100n],
              [T1, H2, 0n],
            ]),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H1), 70n);
          assert.equal(await store.reader.getBalance('eth', T1, H2), 30n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
          const status = await store.reader.getChainStatus('eth');
          assert.equal(status?.seedBlock, 9);
          assert.equal(status?.holdersPartial, undefined);
          assert.deepEqual(
            await store.writer.seededHolders('eth', [
              { token: T1, holder: H1 },
              { token: T1, holder: H3 },
              { token: T2, holder: H1 },
              { token: T1, holder: H2 },
            ]),
            [true, false, false, true],
          );
          // Zero seeds are recorded too: they say the holder was seen.
          assert.deepEqual(await store.scans.scanSeedBalances('eth', T1, null, 10), [
            { token: T1, holder: H1, amount: 100n },
            { token: T1, holder: H2, amount: 0n },
          ]);
        }));

      test('a holder is seeded once, also after its balance went to zero and back', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            seeded({ from: 10, to: 10, transfers: moves(T1, 10, [[H1, H2, 100n]]) }, 9, [
              [T1, H1, 100n],
              [T1, H2, 0n],
            ]),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H1), 0n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 1);
          // The indexer may read a seed again (a range fetched while the first was committing).
          await store.writer.applyBatch(
            seeded({ from: 11, to: 11, transfers: moves(T1, 11, [[H2, H1, 40n]]) }, 9, [
              [T1, H2, 0n],
              [T1, H1, 100n],
              [T1, H1, 100n],
            ]),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H1), 40n);
          assert.equal(await store.reader.getBalance('eth', T1, H2), 60n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 2);
          // Twice in one batch counts once too.
          await store.writer.applyBatch(
            seeded({ from: 12, to: 12, transfers: moves(T1, 12, [[H2, H3, 1n]]) }, 9, [
              [T1, H3, 5n],
              [T1, H3, 5n],
            ]),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H3), 6n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 3);
        }));

      test('seeds of several tokens, uint256-sized, in batches larger than one statement', () =>
        withStore(async (store) => {
          const holders = Array.from({ length: 250 }, (_, i) => holder(100 + i));
          const transfers = [
            ...holders.map((h, i) => transfer({ token: T1, block: 21, log: i, from: h, to: H1, value: 1n })),
            ...moves(T2, 22, [[ZERO_ADDRESS, H1, 1n]]),
          ];
          await store.writer.applyBatch(
            seeded({ from: 21, to: 22, transfers }, 20, [
              ...holders.map((h, i): [string, string, bigint] => [T1, h, BigInt(i + 1)]),
              [T1, H1, MAX_UINT256],
              [T2, H1, 0n],
            ]),
          );
          assert.equal(await store.reader.getBalance('eth', T1, holder(100)), 0n);
          assert.equal(await store.reader.getBalance('eth', T1, holder(349)), 249n);
          assert.equal(await store.reader.getBalance('eth', T1, H1), MAX_UINT256 + 250n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 250);
          assert.equal(await store.reader.getBalance('eth', T2, H1), 1n);
          const page = await store.scans.scanSeedBalances('eth', T1, null, 200);
          const rest = await store.scans.scanSeedBalances('eth', T1, page[page.length - 1]!.holder, 200);
          assert.equal(page.length + rest.length, 251);
          assert.equal(new Set([...page, ...rest].map((s) => s.holder)).size, 251);
          assert.deepEqual(
            (
              await store.writer.seededHolders(
                'eth',
                holders.map((h) => ({ token: T1, holder: h })),
              )
            ).every(Boolean),
            true,
          );
        }));

      test('a rollback keeps starting balances; a token that disappears takes its seeds along', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            seeded({ from: 10, to: 11, transfers: moves(T1, 11, [[H1, H2, 10n]]) }, 9, [
              [T1, H1, 50n],
              [T1, H2, 0n],
            ]),
          );
          await store.writer.applyBatch(
            seeded(
              {
                from: 12,
                to: 14,
                transfers: [...moves(T1, 12, [[H3, H1, 5n]]), ...moves(T2, 13, [[H3, H2, 7n]])],
              },
              9,
              [
                [T1, H3, 20n],
                [T2, H3, 9n],
                [T2, H2, 0n],
              ],
            ),
          );
          assert.equal(await store.reader.getBalance('eth', T1, H3), 15n);
          await store.writer.rollback('eth', 11, blockHash(11));
          // H3 held 20 before the start, whatever the dropped blocks did.
          assert.equal(await store.reader.getBalance('eth', T1, H3), 20n);
          assert.equal(await store.reader.getBalance('eth', T1, H1), 40n);
          assert.equal((await store.reader.getToken('eth', T1))?.holderCount, 3);
          assert.equal(await store.reader.getToken('eth', T2), null);
          assert.deepEqual(
            await store.writer.seededHolders('eth', [
              { token: T1, holder: H3 },
              { token: T2, holder: H3 },
            ]),
            [true, false],
          );
          // Seen again, T2's holders are seeded again; T1's seeded holder is not.
          await store.writer.applyBatch(
            seeded(
              {
                from: 12,
                to: 12,
                transfers: [...moves(T2, 12, [[H3, H1, 1n]]), ...moves(T1, 12, [[H3, H1, 1n]], 1)],
              },
              9,
              [
                [T2, H3, 9n],
                [T2, H1, 0n],
                [T1, H3, 20n],
              ],
            ),
          );
          assert.equal(await store.reader.getBalance('eth', T2, H3), 8n);
          assert.equal((await store.reader.getToken('eth', T2))?.holderCount, 2);
          assert.equal(await store.reader.getBalance('eth', T1, H3), 19n);
        }));

      test("the node without the seed block's state marks the chain partial for good", () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            seeded({ from: 10, to: 10, transfers: moves(T1, 10, [[H1, H2, 1n]]) }, 9, [[T1, H1, 5n]]),
          );
          await store.writer.applyBatch(
            seeded({ from: 11, to: 11, transfers: moves(T1, 11, [[H3, H2, 1n]]) }, 9, [], true),
          );
          await store.writer.applyBatch(seeded({ from: 12, to: 12 }, 9, []));
          const status = await store.reader.getChainStatus('eth');
          assert.equal(status?.holdersPartial, true);
          assert.equal(status?.seedBlock, 9);
          assert.deepEqual((await store.reader.listChainStatuses())[0], status);
          assert.equal(await store.reader.getBalance('eth', T1, H3), -1n);
          // Partial from the first batch on: the seed block is recorded all the same.
          await store.writer.applyBatch(seeded({ chain: 'bsc', from: 5, to: 6 }, 4, [], true));
          assert.deepEqual(
            [
              (await store.reader.getChainStatus('bsc'))?.seedBlock,
              (await store.reader.getChainStatus('bsc'))?.holdersPartial,
            ],
            [4, true],
          );
        }));

      test('seeds that do not fit the chain are rejected and change nothing', () =>
        withStore(async (store) => {
          const one = moves(T1, 10, [[H1, H2, 1n]]);
          // The first batch seeds at the block before it.
          await assert.rejects(store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 8, [])));
          // Only tokens the batch moves, and only holders.
          await assert.rejects(
            store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 9, [[T2, H1, 1n]])),
          );
          await assert.rejects(
            store.writer.applyBatch(
              seeded({ from: 10, to: 10, transfers: one }, 9, [[T1, ZERO_ADDRESS, 1n]]),
            ),
          );
          await assert.rejects(
            store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 9, [[T1, H1, -1n]])),
          );
          assert.equal(await store.writer.getCheckpoint('eth'), null);
          assert.equal(await store.reader.getChainStatus('eth'), null);
          assert.equal(await store.reader.getToken('eth', T1), null);
          await store.writer.applyBatch(seeded({ from: 10, to: 10, transfers: one }, 9, [[T1, H1, 3n]]));
          // Later batches seed at the same block.
          await assert.rejects(
            store.writer.applyBatch(
              seeded({ from: 11, to: 11, transfers: moves(T1, 11, [[H3, H2, 1n]]) }, 10, [[T1, H3, 1n]]),
            ),
          );
          assert.deepEqual(await store.writer.seededHolders('eth', [{ token: T1, holder: H3 }]), [false]);
          assert.equal(await store.reader.getBalance('eth', T1, H3), 0n);
          assert.equal((await store.writer.getCheckpoint('eth'))?.block, 10);
          // A chain indexed without seeds cannot start seeding.
          await store.writer.applyBatch(batch({ chain: 'bsc', from: 10, to: 10, transfers: one }));
          await assert.rejects(
            store.writer.applyBatch(
              seeded({ chain: 'bsc', from: 11, to: 11, transfers: moves(T1, 11, [[H3, H2, 1n]]) }, 10, []),
            ),
          );
          assert.equal((await store.reader.getChainStatus('bsc'))?.seedBlock, undefined);
        }));

      test('seeds survive close and reopen', () =>
        withStore(async (store, context) => {
          if (context.reopen === undefined) return;
          await store.writer.applyBatch(
            seeded({ from: 10, to: 10, transfers: moves(T1, 10, [[H1, H2, 1n]]) }, 9, [[T1, H1, 5n]], true),
          );
          await store.close();
          const reopened = await context.reopen();
          assert.deepEqual(await reopened.writer.seededHolders('eth', [{ token: T1, holder: H1 }]), [true]);
          assert.equal((await reopened.reader.getChainStatus('eth'))?.holdersPartial, true);
          assert.equal(await reopened.reader.getBalance('eth', T1, H1), 4n);
        }));
    });

    describe('block refs', () => {
      test('come back in a range, ascending, and are pruned below the window', () =>
        withStore(async (store) => {
          await store.writer.applyBatch({
            ...batch({ from: 1, to: 10 }),
            blocks: [...refs(1, 10)].reverse(),
          });
          assert.deepEqual(await store.writer.getBlockRefs('eth', 3, 5), refs(3, 5));
          assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 1000), refs(1, 10));
          await store.writer.applyBatch(batch({ from: 11, to: 12, prune: 8 }));
          assert.deepEqual(await store.writer.getBlockRefs('eth', 0, 1000), refs(8, 12));
          assert.deepEqual(await store.writer.getBlockRefs('bsc', 0, 1000), []);
        }));
    });

    describe('supplies', () => {
      test('new tokens need their supply read, up to the limit', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({
              from: 1,
              to: 3,
              transfers: [
                ...moves(T1, 1, [[H1, H2, 1n]]),
                ...moves(T2, 2, [[H1, H2, 1n]]),
                ...moves(T3, 3, [[H1, H2, 1n]]),
              ],
            }),
          );
          assert.deepEqual((await store.writer.tokensNeedingSupply('eth', 0, 10)).sort(), [T1, T2, T3]);
          assert.equal((await store.writer.tokensNeedingSupply('eth', 0, 2)).length, 2);
          assert.deepEqual(await store.writer.tokensNeedingSupply('bsc', 0, 10), []);
        }));

      test('an update records the values and clears the mark', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 3, transfers: moves(T1, 2, [[ZERO_ADDRESS, H1, 10n]]) }),
          );
          await store.writer.updateSupplies('eth', [
            { address: T1, totalSupply: 10n, cap: null, burnedBalance: 3n, atBlock: 3 },
            { address: T5, totalSupply: 1n, cap: 1n, burnedBalance: 1n, atBlock: 3 },
          ]);
          const token = await store.reader.getToken('eth', T1);
          assert.equal(token?.totalSupply, 10n);
          assert.equal(token?.cap, null);
          assert.equal(token?.burnedBalance, 3n);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
          assert.equal(await store.reader.getToken('eth', T5), null);
          // A supply that cannot be read is recorded as null and still clears the mark.
          await store.writer.applyBatch(
            batch({ from: 4, to: 4, transfers: moves(T1, 4, [[ZERO_ADDRESS, H1, 1n]]) }),
          );
          await store.writer.updateSupplies('eth', [
            { address: T1, totalSupply: null, cap: null, burnedBalance: null, atBlock: 4 },
          ]);
          assert.equal((await store.reader.getToken('eth', T1))?.totalSupply, null);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
        }));

      test('a mint, a burn or a transfer to 0x…dead marks the token again; other transfers do not', () =>
        withStore(async (store) => {
          const tokens = [T1, T2, T3, T4];
          await store.writer.applyBatch(
            batch({ from: 1, to: 1, transfers: tokens.flatMap((t, i) => moves(t, 1, [[H1, H2, 5n]], i)) }),
          );
          await store.writer.updateSupplies(
            'eth',
            tokens.map((address) => ({ address, totalSupply: 1n, cap: null, burnedBalance: 0n, atBlock: 1 })),
          );
          await store.writer.applyBatch(
            batch({
              from: 2,
              to: 2,
              transfers: [
                ...moves(T1, 2, [[H2, H1, 1n]], 0),
                ...moves(T2, 2, [[ZERO_ADDRESS, H1, 1n]], 1),
                ...moves(T3, 2, [[H2, ZERO_ADDRESS, 1n]], 2),
                ...moves(T4, 2, [[H2, DEAD_ADDRESS, 1n]], 3),
              ],
            }),
          );
          assert.deepEqual((await store.writer.tokensNeedingSupply('eth', 0, 10)).sort(), [T2, T3, T4]);
        }));

      test('a read older than the marking transfer records its values but leaves the mark', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({ from: 1, to: 1, transfers: moves(T1, 1, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          await store.writer.applyBatch(
            batch({ from: 2, to: 20, transfers: moves(T1, 20, [[ZERO_ADDRESS, H1, 5n]]) }),
          );
          await store.writer.updateSupplies('eth', [
            { address: T1, totalSupply: 5n, cap: null, burnedBalance: 0n, atBlock: 19 },
          ]);
          assert.equal((await store.reader.getToken('eth', T1))?.totalSupply, 5n);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), [T1]);
          await store.writer.updateSupplies('eth', [
            { address: T1, totalSupply: 10n, cap: null, burnedBalance: 0n, atBlock: 20 },
          ]);
          assert.equal((await store.reader.getToken('eth', T1))?.totalSupply, 10n);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 0, 10), []);
        }));

      test('tokens read before staleBefore follow the marked ones, oldest read first', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(
            batch({
              from: 1,
              to: 30,
              transfers: [
                ...moves(T1, 1, [[H1, H2, 1n]]),
                ...moves(T2, 2, [[H1, H2, 1n]]),
                ...moves(T3, 3, [[H1, H2, 1n]]),
              ],
            }),
          );
          await store.writer.updateSupplies('eth', [
            { address: T2, totalSupply: 1n, cap: null, burnedBalance: 0n, atBlock: 20 },
            { address: T1, totalSupply: 1n, cap: null, burnedBalance: 0n, atBlock: 10 },
          ]);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 5, 10), [T3]);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 15, 10), [T3, T1]);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 25, 10), [T3, T1, T2]);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 25, 2), [T3, T1]);
          assert.deepEqual(await store.writer.tokensNeedingSupply('eth', 25, 1), [T3]);
        }));
    });

    describe('chain status', () => {
      test('head and error are recorded outside batches', () =>
        withStore(async (store) => {
          const before = Date.now();
          await store.writer.setChainStatus('eth', { head: 100 });
          const first = await store.reader.getChainStatus('eth');
          assert.deepEqual(
            { ...first, updatedAt: 0 },
            {
              chain: 'eth',
              head: 100,
              indexed: null,
              lastError: null,
              updatedAt: 0,
            },
          );
          assert.ok(first !== null && first.updatedAt >= before && first.updatedAt <= Date.now());
          await store.writer.setChainStatus('eth', { lastError: 'node unreachable' });
          assert.equal((await store.reader.getChainStatus('eth'))?.head, 100);
          assert.equal((await store.reader.getChainStatus('eth'))?.lastError, 'node unreachable');
          await store.writer.setChainStatus('eth', { head: 101 });
          assert.equal((await store.reader.getChainStatus('eth'))?.lastError, 'node unreachable');
          assert.equal((await store.reader.getChainStatus('eth'))?.head, 101);
          await store.writer.setChainStatus('eth', { lastError: null });
          assert.equal((await store.reader.getChainStatus('eth'))?.lastError, null);
          assert.equal(await store.writer.getCheckpoint('eth'), null);
          await store.writer.setChainStatus('bsc', { lastError: 'boom' });
          assert.deepEqual(
            { ...(await store.reader.getChainStatus('bsc')), updatedAt: 0 },
            {
              chain: 'bsc',
              head: 0,
              indexed: null,
              lastError: 'boom',
              updatedAt: 0,
            },
          );
        }));

      test('a batch sets the indexed block and the head; the head then moves by the given value', () =>
        withStore(async (store) => {
          await store.writer.setChainStatus('eth', { head: 5, lastError: 'x' });
          await store.writer.applyBatch(batch({ from: 1, to: 10, head: 50 }));
          const status = await store.reader.getChainStatus('eth');
          assert.equal(status?.indexed, 10);
          assert.equal(status?.head, 50);
          assert.equal(status?.lastError, 'x');
          await store.writer.setChainStatus('eth', { head: 60 });
          assert.equal((await store.reader.getChainStatus('eth'))?.head, 60);
          assert.equal((await store.reader.getChainStatus('eth'))?.indexed, 10);
        }));

      test('every chain is listed, by name', () =>
        withStore(async (store) => {
          await store.writer.applyBatch(batch({ chain: 'eth', from: 1, to: 3 }));
          await store.writer.setChainStatus('bsc', { head: 9 });
          const statuses = await store.reader.listChainStatuses();
          assert.deepEqual(
            statuses.map((s) => [s.chain, s.head, s.indexed]),
            [
              ['bsc', 9, null],
              ['eth', 8, 3],
            ],
          );
          assert.deepEqual(statuses[1], await store.reader.getChainStatus('eth'));
        }));
    });

    describe('chain activity', () => {
      /** `n` transfers of T1 in `block`, H1 → H2, log indexes 0..n-1. */
      const burst = (block: number, n: number) =>
        moves(
          T1,
          block,
          Array.from({ length: n }, (_, i): [string, string, bigint] => [H1, H2, BigInt(i + 1)]),
        );

      test('counts every transfer of every batch and keeps the newest 16 of the chain', () =>
        withStore(async (store) => {
          assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
          assert.equal(await store.reader.getChainActivity('eth'), null);
          const first = [...burst(2, 3), ...moves(T2, 3, [[H2, H3, 5n]])];
          await store.writer.applyBatch(batch({ from: 1, to: 3, transfers: first }));
          const afterFirst = await store.reader.getChainActivity('eth');
          assert.equal(afterFirst?.chain, 'eth');
          assert.equal(afterFirst?.transfers, 4);
          assert.deepEqual(afterFirst?.recent, [...first].reverse());

          // More than are kept: the newest 16, newest first (block, then log index, descending).
          const second = [...burst(4, 10), ...burst(5, 12)];
          await store.writer.applyBatch(batch({ from: 4, to: 5, transfers: second }));
          const afterSecond = await store.reader.getChainActivity('eth');
          assert.equal(afterSecond?.transfers, 26);
          assert.deepEqual(afterSecond?.recent, second.slice(-16).reverse());

          // A batch without transfers keeps the list; other chains are separate.
          await store.writer.applyBatch(batch({ from: 6, to: 8 }));
          await store.writer.applyBatch(batch({ chain: 'bsc', from: 1, to: 1, transfers: burst(1, 2) }));
          assert.deepEqual(await store.reader.getChainActivity('eth'), afterSecond);
          assert.equal((await store.reader.getChainActivity('bsc'))?.transfers, 2);

          // Fewer than 16: the batch's own, then the newest from before it.
          const third = moves(T2, 9, [
            [H1, H3, 1n],
            [H3, H1, 1n],
          ]);
          await store.writer.applyBatch(batch({ from: 9, to: 9, transfers: third }));
          const afterThird = await store.reader.getChainActivity('eth');
          assert.equal(afterThird?.transfers, 28);
          assert.deepEqual(afterThird?.recent, [...second.slice(-14), ...third].reverse());
        }));

      test('a rollback takes its removed transfers off the count and empties the newest', () =>
        withStore(async (store) => {
          assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
          await store.writer.applyBatch(
            batch({ from: 1, to: 3, transfers: [...burst(2, 3), ...burst(3, 4)] }),
          );
          const result = await store.writer.rollback('eth', 2, blockHash(2));
          assert.equal(result.removedTransfers, 4);
          assert.deepEqual(await store.reader.getChainActivity('eth'), {
            chain: 'eth',
            transfers: 3,
            recent: [],
          });
          await store.writer.applyBatch(batch({ from: 3, to: 3, transfers: burst(3, 1) }));
          assert.deepEqual(await store.reader.getChainActivity('eth'), {
            chain: 'eth',
            transfers: 4,
            recent: burst(3, 1),
          });
        }));

      test('NEO asset transfers count and show like any other', () =>
        withStore(async (store) => {
          assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
          const asset = `0x${'ab'.repeat(32)}`;
          const nep5 = transfer({
            token: T1,
            block: 2,
            log: 0,
            from: 'AHolderOne',
            to: 'AHolderTwo',
            value: 7n,
          });
          const assetMove = { ...nep5, token: asset, logIndex: 1, value: 3n };
          await store.writer.applyBatch({
            ...batch({ chain: 'neo', from: 1, to: 2, transfers: [nep5] }),
            tokens: [metadata(T1), { address: asset, name: 'NEO', symbol: 'NEO', decimals: 0 }],
            neo: {
              assetTransfers: [assetMove],
              outputsCreated: [],
              outputsSpent: [],
              deployments: [],
              assets: [],
            },
          });
          assert.deepEqual(await store.reader.getChainActivity('neo'), {
            chain: 'neo',
            transfers: 2,
            recent: [assetMove, nep5],
          });
        }));

      test('a chain known only by its status has no transfers yet', () =>
        withStore(async (store) => {
          assert.ok(store.reader.getChainActivity, 'every backend keeps the chain activity');
          await store.writer.setChainStatus('eth', { head: 7 });
          assert.deepEqual(await store.reader.getChainActivity('eth'), {
            chain: 'eth',
            transfers: 0,
            recent: [],
          });
        }));

      test('the storage size is a positive whole number of bytes', () =>
        withStore(async (store) => {
          assert.ok(store.reader.storageBytes, 'every backend tells its storage size');
          await store.writer.applyBatch(batch({ from: 1, to: 2, transfers: burst(2, 50) }));
          const bytes = await store.reader.storageBytes();
          assert.ok(Number.isSafeInteger(bytes) && bytes > 0, `storageBytes() = ${bytes}`);
        }));
    });

    describe('api keys', () => {
      const first = {
        id: 'k1abc',
        hash: 'a'.repeat(64),
        label: 'first',
        createdAt: 1_700_000_000_000,
        revokedAt: null,
      };
      const second = {
        id: 'k2def',
        hash: 'b'.repeat(64),
        label: '',
        createdAt: 1_700_000_000_500,
        revokedAt: null,
      };

      test('create, list, find and revoke by id or hash', () =>
        withStore(async (store) => {
          await store.keys.createApiKey(second);
          await store.keys.createApiKey(first);
          assert.deepEqual(await store.keys.listApiKeys(), [first, second]);
          assert.deepEqual(await store.keys.findApiKeyByHash(first.hash), first);
          assert.equal(await store.keys.findApiKeyByHash('c'.repeat(64)), null);

          assert.equal(await store.keys.revokeApiKey(first.id, 1_700_000_001_000), true);
          assert.deepEqual(await store.keys.findApiKeyByHash(first.hash), {
            ...first,
            revokedAt: 1_700_000_001_000,
          });
          assert.equal(await store.keys.revokeApiKey(first.id, 1_700_000_002_000), false);
          assert.equal(await store.keys.revokeApiKey(first.hash, 1_700_000_002_000), false);
          assert.equal((await store.keys.findApiKeyByHash(first.hash))?.revokedAt, 1_700_000_001_000);

          assert.equal(await store.keys.revokeApiKey(second.hash, 1_700_000_003_000), true);
          assert.equal(await store.keys.revokeApiKey('nope', 1_700_000_003_000), false);
          assert.deepEqual(await store.keys.listApiKeys(), [
            { ...first, revokedAt: 1_700_000_001_000 },
            { ...second, revokedAt: 1_700_000_003_000 },
          ]);
        }));

      test('a duplicate id or hash is refused', () =>
        withStore(async (store) => {
          await store.keys.createApiKey(first);
          await assert.rejects(store.keys.createApiKey({ ...second, id: first.id }));
          await assert.rejects(store.keys.createApiKey({ ...second, hash: first.hash }));
          assert.deepEqual(await store.keys.listApiKeys(), [first]);
        }));

      test('rate limits and allow-lists round-trip exactly, and absent fields stay absent', () =>
        withStore(async (store) => {
          const limited: ApiKeyRecord = {
            ...first,
            // 1/min: a rate that is no short decimal must come back bit for bit.
            rateLimit: { perSecond: 1 / 60, burst: 7 },
            allowIps: ['203.0.113.0/24', '2001:db8::/32', '192.0.2.7/32'],
          };
          const unlimited: ApiKeyRecord = { ...second, rateLimit: 'unlimited' };
          await store.keys.createApiKey(limited);
          await store.keys.createApiKey(unlimited);
          assert.deepEqual(await store.keys.listApiKeys(), [limited, unlimited]);
          assert.deepEqual(await store.keys.findApiKeyByHash(limited.hash), limited);
          assert.deepEqual(await store.keys.findApiKeyByHash(unlimited.hash), unlimited);

          // Set by id, then by hash; each call replaces both fields.
          assert.equal(
            await store.keys.setApiKeyLimits(limited.id, { rateLimit: { perSecond: 2.5, burst: 1 } }),
            true,
          );
          assert.deepEqual(await store.keys.findApiKeyByHash(limited.hash), {
            ...first,
            rateLimit: { perSecond: 2.5, burst: 1 },
          });
          assert.equal(await store.keys.setApiKeyLimits(unlimited.hash, { allowIps: ['::1/128'] }), true);
          assert.deepEqual(await store.keys.findApiKeyByHash(unlimited.hash), {
            ...second,
            allowIps: ['::1/128'],
          });
          // An empty list is "any address", given back absent.
          assert.equal(await store.keys.setApiKeyLimits(unlimited.id, { allowIps: [] }), true);
          assert.deepEqual(await store.keys.findApiKeyByHash(unlimited.hash), second);

          // Unknown and revoked keys are not changed.
          assert.equal(await store.keys.setApiKeyLimits('nope', { rateLimit: 'unlimited' }), false);
          assert.equal(await store.keys.revokeApiKey(limited.id, 1_700_000_001_000), true);
          assert.equal(await store.keys.setApiKeyLimits(limited.id, { rateLimit: 'unlimited' }), false);
          assert.deepEqual((await store.keys.findApiKeyByHash(limited.hash))?.rateLimit, {
            perSecond: 2.5,
            burst: 1,
          });
        }));

      test('limits no parser produces are refused before they are stored', () =>
        withStore(async (store) => {
          await store.keys.createApiKey(first);
          for (const rateLimit of [
            { perSecond: 0, burst: 1 },
            { perSecond: Number.NaN, burst: 1 },
            { perSecond: 1, burst: 0 },
            { perSecond: 1, burst: 1.5 },
          ]) {
            await assert.rejects(store.keys.setApiKeyLimits(first.id, { rateLimit }));
          }
          for (const allowIps of [
            ['10.0.0.1/8'],
            ['10.0.0.0/8,11.0.0.0/8'],
            ['not an ip'],
            ['2001:DB8::/32'],
          ]) {
            await assert.rejects(store.keys.setApiKeyLimits(first.id, { allowIps }));
            await assert.rejects(store.keys.createApiKey({ ...second, allowIps }));
          }
          assert.deepEqual(await store.keys.listApiKeys(), [first]);
        }));
    });

    describe('persistence', () => {
      test('data survives close and reopen', () =>
        withStore(async (store, context) => {
          if (context.reopen === undefined) return;
          const history = randomHistory(7, 12, 3, 4);
          await applyAll(
            store,
            batchesOf(history, [
              [1, 6],
              [7, 12],
            ]),
          );
          await store.writer.updateSupplies('eth', [
            {
              address: history.tokens[0]!,
              totalSupply: MAX_UINT256,
              cap: 1n,
              burnedBalance: 2n,
              atBlock: 12,
            },
          ]);
          await store.writer.setChainStatus('eth', { head: 99, lastError: 'slow node' });
          await store.keys.createApiKey({
            id: 'k',
            hash: 'f'.repeat(64),
            label: 'ci',
            createdAt: 1,
            revokedAt: null,
          });
          const before = await snapshot(store, 'eth', history.tokens, history.parties);
          const statusBefore = await store.reader.getChainStatus('eth');
          await store.close();

          const reopened = await context.reopen();
          assert.deepEqual(await snapshot(reopened, 'eth', history.tokens, history.parties), before);
          assert.deepEqual(await reopened.reader.getChainStatus('eth'), statusBefore);
          assert.deepEqual(await reopened.writer.getBlockRefs('eth', 0, 100), refs(1, 12));
          assert.equal((await reopened.keys.listApiKeys()).length, 1);
          await reopened.writer.applyBatch(batch({ from: 13, to: 13 }));
          assert.equal((await reopened.writer.getCheckpoint('eth'))?.block, 13);
        }));
    });

    if (options.neo !== false) runNeoContractCases({ withStore });
  });
}
