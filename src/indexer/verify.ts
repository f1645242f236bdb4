/**
 * `tokenquery verify`: recomputes every token's balances, holder count and transfer count from
 * the stored transfers (on top of the starting balances of a late start), compares them with what
 * the store keeps, and compares a sample of balances with `balanceOf` on the node at the indexed
 * block.
 *
 * The recomputation is independent of the indexer's incremental bookkeeping (balance cache,
 * holder-count deltas, rollbacks): it reads the transfers back oldest first and sums them. The
 * address and holder views (holding rows, holder order, address transfer lists) are checked
 * against the same recomputation in `verify-views.ts`.
 */
import type { EvmSource } from '../chains/evm/types.js';
import { ZERO_ADDRESS } from '../internal/chains.js';
import type { Logger } from '../internal/logger.js';
import { NON_HOLDERS } from '../store/batch-plan.js';
import type { NotExactMark, Store, TokenRecord } from '../store/types.js';
import {
  AddressListCollector,
  chooseAddressSample,
  type ViewDifference,
  verifyTokenViews,
} from './verify-views.js';

/** What `verify` reads: the chain status and tokens, and the whole-history scans. */
export type VerifyStore = Pick<Store, 'reader' | 'scans'>;

export interface VerifyOptions {
  store: VerifyStore;
  chain: string;
  /** Node to sample `balanceOf` from; null checks the store against itself only. */
  source: EvmSource | null;
  /** Holders per token whose balance is compared with the node (largest balances first). Default 20. */
  sample?: number;
  /**
   * Per token, the transfer lists of at most `2 × addressSample + 1` addresses are compared with
   * the recomputation (see `chooseAddressSample`). Default 10; 0 skips them.
   */
  addressSample?: number;
  /** Only these tokens (lower-case `0x` addresses); default every token of the chain. */
  tokens?: readonly string[];
  logger: Logger;
  signal?: AbortSignal;
}

export type VerifyDifference =
  | { token: string; kind: 'transferCount' | 'holderCount'; stored: number; recomputed: number }
  | { token: string; kind: 'balance'; holder: string; stored: bigint; recomputed: bigint }
  | { token: string; kind: 'node'; holder: string; stored: bigint; node: bigint | null; block: number }
  /**
   * The token's running sum (`StoreReader.getBalanceSum`, null: none) differs from what its stored
   * balances sum to (zero address left out): a write of balances that did not keep the sum.
   */
  | { token: string; kind: 'balanceSum'; stored: bigint | null; summed: bigint }
  | ViewDifference;

export interface VerifyReport {
  chain: string;
  /** The checkpoint the comparison is made at (null: nothing indexed). */
  block: number | null;
  /** The block starting balances were read at, when the index starts late and seeds holders. */
  seedBlock: number | null;
  /** True when the node could not answer that block's state: holders are partly unseeded. */
  holdersPartial: boolean;
  /**
   * Set while the stored balances lag the checkpoint (a backfill writes them behind it; see
   * `IndexBatch.deferBalances`): they are compared with the sums of the transfers up to this block.
   */
  balancesBlock: number | null;
  tokens: number;
  transfers: number;
  /** Balance changes without a transfer (`IndexBatch.balanceChanges`) added with the transfers. */
  balanceChanges: number;
  /** Starting balances added before the transfers. */
  seeds: number;
  balances: number;
  /** Holding rows (balance and transfer count per address) compared. */
  holdings: number;
  /**
   * With a node (`source`): the tokens whose summed balances (every address's but the zero
   * address's, as recomputed) differ from `totalSupply()` at the checkpoint, and by how much. Not
   * a difference by itself: WETH9's `totalSupply()` is its ether balance, which ether forced into
   * it raises while its balances stay exact; a token is off when the sampled `balanceOf` differ
   * too (`node` differences). Rebasing, share and fee-taking tokens show up here.
   */
  supplyDrift: { token: string; summed: bigint; totalSupply: bigint; block: number }[];
  /**
   * The tokens verified that carry a not-exact mark (`StoreReader.getNotExact`, set by the
   * exactness check as the head moves), with how far off the check found each. Named, not
   * counted as differences: the mark is the index saying so itself.
   */
  notExact: { token: string; mark: NotExactMark }[];
  /** Holder entries walked in the holder order. */
  holders: number;
  /** Address transfer lists compared (one token each). */
  addressLists: number;
  nodeChecks: number;
  differences: VerifyDifference[];
}

const PAGE = 5_000;

/** Runs the verification of one chain; never writes. */
export async function verifyChain(options: VerifyOptions): Promise<VerifyReport> {
  const { store, chain, source, logger } = options;
  const sample = options.sample ?? 20;
  const status = await store.reader.getChainStatus(chain);
  // The checkpoint: the newest block whose data is fully visible.
  const indexed = status?.indexed ?? null;
  const report: VerifyReport = {
    chain,
    block: indexed,
    seedBlock: status?.seedBlock ?? null,
    holdersPartial: status?.holdersPartial === true,
    balancesBlock: status?.balancesBlock ?? null,
    tokens: 0,
    transfers: 0,
    balanceChanges: 0,
    seeds: 0,
    balances: 0,
    holdings: 0,
    holders: 0,
    addressLists: 0,
    nodeChecks: 0,
    supplyDrift: [],
    notExact: [],
    differences: [],
  };
  if (indexed === null) return report;

  for (const token of await tokensOf(store, chain, options.tokens)) {
    if (options.signal?.aborted) break;
    report.tokens++;
    const mark = await store.reader.getNotExact(chain, token.address);
    if (mark !== null) report.notExact.push({ token: token.address, mark });
    const collector = new AddressListCollector(
      await chooseAddressSample(store, chain, token.address, options.addressSample ?? 10),
    );
    const recomputed = new Map<string, bigint>();
    // A late start's holders begin at their seeded balance, not at zero.
    let afterSeed: string | null = null;
    for (;;) {
      const page = await store.scans.scanSeedBalances(chain, token.address, afterSeed, PAGE);
      if (page.length === 0) break;
      for (const seed of page) {
        report.seeds++;
        if (seed.amount !== 0n) recomputed.set(seed.holder, seed.amount);
      }
      afterSeed = page[page.length - 1]!.holder;
    }
    let transfers = 0;
    // Per address, the transfers naming it (a self-transfer once), and those up to `balancesBlock`.
    const transferCounts = new Map<string, number>();
    const countsAtBalances = report.balancesBlock === null ? null : new Map<string, number>();
    const count = (counts: Map<string, number>, t: { from: string; to: string }) => {
      counts.set(t.from, (counts.get(t.from) ?? 0) + 1);
      if (t.to !== t.from) counts.set(t.to, (counts.get(t.to) ?? 0) + 1);
    };
    // The changes of the transfers above `balancesBlock`, which the stored balances lack as yet.
    const unwritten = new Map<string, bigint>();
    const balancesBlock = report.balancesBlock ?? Number.POSITIVE_INFINITY;
    let after: { blockNumber: number; logIndex: number } | null = null;
    for (;;) {
      const page = await store.scans.scanTransfers(chain, token.address, after, PAGE);
      if (page.length === 0) break;
      for (const t of page) {
        transfers++;
        // An address's transfer list lags with the balances (`StoreReader.listAddressTransfers`).
        if (t.blockNumber <= balancesBlock) collector.add(t);
        count(transferCounts, t);
        if (countsAtBalances !== null && t.blockNumber <= balancesBlock) count(countsAtBalances, t);
        if (t.from === t.to) continue;
        recomputed.set(t.from, (recomputed.get(t.from) ?? 0n) - t.value);
        recomputed.set(t.to, (recomputed.get(t.to) ?? 0n) + t.value);
        if (t.blockNumber > balancesBlock) {
          unwritten.set(t.from, (unwritten.get(t.from) ?? 0n) - t.value);
          unwritten.set(t.to, (unwritten.get(t.to) ?? 0n) + t.value);
        }
      }
      const last = page[page.length - 1]!;
      after = { blockNumber: last.blockNumber, logIndex: last.logIndex };
    }
    report.transfers += transfers;
    // Balance changes without a transfer (deposits, withdrawals, issues...): balances only.
    let afterChange: { blockNumber: number; logIndex: number } | null = null;
    for (;;) {
      const page = await store.scans.scanBalanceChanges(chain, token.address, afterChange, PAGE);
      if (page.length === 0) break;
      for (const c of page) {
        report.balanceChanges++;
        recomputed.set(c.holder, (recomputed.get(c.holder) ?? 0n) + c.amount);
        if (c.blockNumber > balancesBlock)
          unwritten.set(c.holder, (unwritten.get(c.holder) ?? 0n) + c.amount);
      }
      const last = page[page.length - 1]!;
      afterChange = { blockNumber: last.blockNumber, logIndex: last.logIndex };
    }
    if (transfers !== token.transferCount) {
      report.differences.push({
        token: token.address,
        kind: 'transferCount',
        stored: token.transferCount,
        recomputed: transfers,
      });
    }
    let holders = 0;
    for (const [holder, amount] of recomputed) if (amount > 0n && !NON_HOLDERS.has(holder)) holders++;
    if (holders !== token.holderCount) {
      report.differences.push({
        token: token.address,
        kind: 'holderCount',
        stored: token.holderCount,
        recomputed: holders,
      });
    }

    // Every stored balance against the sums, then every non-zero sum the store lacks.
    const expectedStored = (holder: string): bigint =>
      (recomputed.get(holder) ?? 0n) - (unwritten.get(holder) ?? 0n);
    const seen = new Map<string, bigint>();
    let afterHolder: string | null = null;
    for (;;) {
      const page = await store.scans.scanBalances(chain, token.address, afterHolder, PAGE);
      if (page.length === 0) break;
      for (const { holder, amount } of page) {
        report.balances++;
        seen.set(holder, amount);
        const expected = expectedStored(holder);
        if (amount !== expected) {
          report.differences.push({
            token: token.address,
            kind: 'balance',
            holder,
            stored: amount,
            recomputed: expected,
          });
        }
      }
      afterHolder = page[page.length - 1]!.holder;
    }
    // The running sum against the rows it sums (as of `balancesBlock` like them).
    let storedSum = 0n;
    for (const [holder, amount] of seen) if (holder !== ZERO_ADDRESS) storedSum += amount;
    const runningSum = await store.reader.getBalanceSum(chain, token.address);
    if (runningSum !== storedSum) {
      report.differences.push({
        token: token.address,
        kind: 'balanceSum',
        stored: runningSum,
        summed: storedSum,
      });
    }
    // (`unwritten` names only holders `recomputed` names too.)
    for (const holder of recomputed.keys()) {
      const expected = expectedStored(holder);
      if (expected !== 0n && !seen.has(holder)) {
        report.differences.push({
          token: token.address,
          kind: 'balance',
          holder,
          stored: 0n,
          recomputed: expected,
        });
      }
    }

    const views = await verifyTokenViews(
      store,
      chain,
      {
        token: token.address,
        expectedStored,
        addresses: new Set([...recomputed.keys(), ...transferCounts.keys()]),
        transferCounts,
        transferCountsAtBalances: countsAtBalances,
        storedBalances: seen,
        collector,
      },
      report.differences,
    );
    report.holdings += views.holdings;
    report.holders += views.holders;
    report.addressLists += views.addressLists;

    if (source !== null && sample > 0) {
      const largest = [...recomputed.entries()]
        .filter(([holder, amount]) => amount > 0n && !NON_HOLDERS.has(holder))
        .sort((a, b) => (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : a[0] < b[0] ? -1 : 1))
        .slice(0, sample);
      const onNode = await source.readBalances(
        token.address,
        largest.map(([holder]) => holder),
        indexed,
      );
      const [supply] = await source.readSupplies([token.address], indexed);
      let summed = 0n;
      for (const [holder, amount] of recomputed) if (!NON_HOLDERS.has(holder)) summed += amount;
      const totalSupply = supply?.totalSupply ?? null;
      if (totalSupply !== null && totalSupply !== summed) {
        report.supplyDrift.push({ token: token.address, summed, totalSupply, block: indexed });
      }
      largest.forEach(([holder, stored], i) => {
        report.nodeChecks++;
        const node = onNode[i] ?? null;
        if (node !== stored) {
          report.differences.push({
            token: token.address,
            kind: 'node',
            holder,
            stored,
            node,
            block: indexed,
          });
        }
      });
    }
    logger.debug({ chain, token: token.address, transfers }, 'verified token');
  }
  return report;
}

async function tokensOf(
  store: VerifyStore,
  chain: string,
  only: readonly string[] | undefined,
): Promise<TokenRecord[]> {
  if (only !== undefined) {
    const found: TokenRecord[] = [];
    for (const address of only) {
      const token = await store.reader.getToken(chain, address);
      if (token !== null) found.push(token);
    }
    return found;
  }
  const tokens: TokenRecord[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await store.reader.listTokens(chain, offset, 100);
    tokens.push(...page.tokens);
    if (page.tokens.length < 100) break;
  }
  return tokens;
}
