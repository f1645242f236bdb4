/**
 * The part of `verify` that checks the address and holder views of one token against the
 * recomputation from its stored transfers (see `verify.ts`):
 *
 * - every holding row (`scanHoldings`): its balance and its count of the token's transfers that
 *   name the address (a self-transfer once, zero values too), and no row missing for an address
 *   the transfers name;
 * - the holder order (`scanHolders`, walked by seek): exactly the positive, non-zero-address
 *   balances, by balance descending, then address ascending;
 * - the address transfer lists (`listAddressTransfers`, one token) of a bounded sample of
 *   addresses, page by page down to the API's deepest page, against the newest-first lists the
 *   transfers give (those up to `balancesBlock` while balances lag).
 */
import { NON_HOLDERS } from '../store/batch-plan.js';
import type { AddressHolding, HolderEntry, TransferRecord } from '../store/types.js';
import type { VerifyStore } from './verify.js';

/** What the views check finds, as `VerifyDifference`s (see there). */
export type ViewDifference =
  | {
      token: string;
      kind: 'holding';
      holder: string;
      /** null: the store keeps no row for an address the transfers name. */
      stored: AddressHolding | null;
      recomputed: AddressHolding;
    }
  | { token: string; kind: 'holders'; stored: number; recomputed: number }
  | {
      token: string;
      kind: 'holderOrder';
      /** 1-based rank of the first entry that differs. */
      rank: number;
      stored: HolderEntry | null;
      recomputed: HolderEntry | null;
    }
  | {
      token: string;
      kind: 'addressTransfers';
      holder: string;
      /** 0-based position, newest first, of the first entry that differs. */
      index: number;
      /** `block/logIndex/txHash`, or null where the list ends. */
      stored: string | null;
      recomputed: string | null;
    };

/** The API's page size limit and the start of its deepest page (page 50 of size 50). */
const PAGE_SIZE = 50;
const DEEPEST_OFFSET = 49 * PAGE_SIZE;
/** Entries of an address's list the API can reach. */
export const ADDRESS_LIST_DEPTH = DEEPEST_OFFSET + PAGE_SIZE;
const PAGE = 5_000;

/**
 * The addresses whose transfer lists are checked for one token, at most `2 × size + 1`: the
 * `size` largest holders in the store's own order, the zero address (mints and burns), and up to
 * `size` more from the store's holding rows (its key order: holders, past holders, zero
 * balances alike). Chosen before the transfers are read, so one pass collects their lists; a
 * wrong choice costs nothing (the holder order is checked in full).
 */
export async function chooseAddressSample(
  store: VerifyStore,
  chain: string,
  token: string,
  size: number,
): Promise<Set<string>> {
  const chosen = new Set<string>();
  if (size <= 0) return chosen;
  for (const h of await store.scans.scanHolders(chain, token, null, size)) chosen.add(h.address);
  for (const address of NON_HOLDERS) if (address !== '') chosen.add(address);
  const others = await store.scans.scanHoldings(chain, token, null, size * 4);
  // Spread over the first rows rather than the first few.
  for (let i = 0; i < others.length && chosen.size < 2 * size + 1; i += 4) chosen.add(others[i]!.holder);
  return chosen;
}

/** Collects, while the transfers are read oldest first, the newest transfers of the sampled addresses. */
export class AddressListCollector {
  private readonly lists = new Map<string, TransferRecord[]>();

  constructor(readonly sample: ReadonlySet<string>) {
    for (const address of sample) this.lists.set(address, []);
  }

  add(t: TransferRecord): void {
    this.push(t.from, t);
    if (t.to !== t.from) this.push(t.to, t);
  }

  private push(address: string, t: TransferRecord): void {
    const list = this.lists.get(address);
    if (list === undefined) return;
    list.push(t);
    // Only the newest ADDRESS_LIST_DEPTH can be compared: drop older ones now and then.
    if (list.length >= 2 * ADDRESS_LIST_DEPTH) list.splice(0, list.length - ADDRESS_LIST_DEPTH);
  }

  /** Newest first, at most the API's reach. */
  newestFirst(address: string): TransferRecord[] {
    return (this.lists.get(address) ?? []).slice(-ADDRESS_LIST_DEPTH).reverse();
  }
}

/** Recomputed facts of one token the views are checked against. */
export interface RecomputedToken {
  token: string;
  /** Balances as the stored balances should be (as of `balancesBlock` when it is set). */
  expectedStored: (holder: string) => bigint;
  /** Every address the transfers or seeds name (the keys of the recomputation). */
  addresses: Iterable<string>;
  /** Per address, the token's transfers naming it. */
  transferCounts: ReadonlyMap<string, number>;
  /** The same counted only up to `balancesBlock` (null when the balances do not lag), as holdings count them then. */
  transferCountsAtBalances: ReadonlyMap<string, number> | null;
  /** The stored balances `scanBalances` gave, already compared with the sums. */
  storedBalances: ReadonlyMap<string, bigint>;
  collector: AddressListCollector;
}

export interface ViewCounts {
  holdings: number;
  holders: number;
  addressLists: number;
}

/** Checks one token's holdings, holder order and sampled address lists; pushes what differs. */
export async function verifyTokenViews(
  store: VerifyStore,
  chain: string,
  facts: RecomputedToken,
  differences: { push(difference: ViewDifference): unknown },
): Promise<ViewCounts> {
  const { token } = facts;
  const counts: ViewCounts = { holdings: 0, holders: 0, addressLists: 0 };

  // Holding rows: their counts are as of the block their balances are (see `StoreReader`).
  const counted = facts.transferCountsAtBalances ?? facts.transferCounts;
  const seen = new Set<string>();
  let afterHolder: string | null = null;
  for (;;) {
    const page = await store.scans.scanHoldings(chain, token, afterHolder, PAGE);
    if (page.length === 0) break;
    for (const row of page) {
      counts.holdings++;
      seen.add(row.holder);
      const recomputed = {
        balance: facts.expectedStored(row.holder),
        transferCount: counted.get(row.holder) ?? 0,
      };
      // A wrong stored balance is reported once, as `balance`, when the holding shows the same.
      const balanceOk =
        row.balance === recomputed.balance || row.balance === (facts.storedBalances.get(row.holder) ?? 0n);
      if (!balanceOk || row.transferCount !== recomputed.transferCount) {
        differences.push({
          token,
          kind: 'holding',
          holder: row.holder,
          stored: { balance: row.balance, transferCount: row.transferCount },
          recomputed,
        });
      }
    }
    afterHolder = page[page.length - 1]!.holder;
  }
  for (const holder of facts.addresses) {
    if (seen.has(holder)) continue;
    const recomputed = {
      balance: facts.expectedStored(holder),
      transferCount: counted.get(holder) ?? 0,
    };
    if (recomputed.balance !== 0n || recomputed.transferCount !== 0)
      differences.push({ token, kind: 'holding', holder, stored: null, recomputed });
  }

  // The holder order, walked by seek.
  const expected: HolderEntry[] = [];
  for (const holder of facts.addresses) {
    const balance = facts.expectedStored(holder);
    if (balance > 0n && !NON_HOLDERS.has(holder)) expected.push({ address: holder, balance });
  }
  expected.sort(compareHolders);
  let after: HolderEntry | null = null;
  let firstOrderDifference = true;
  for (;;) {
    const page = await store.scans.scanHolders(chain, token, after, PAGE);
    if (page.length === 0) break;
    for (const entry of page) {
      const want = expected[counts.holders] ?? null;
      counts.holders++;
      if (
        firstOrderDifference &&
        (want === null || want.address !== entry.address || want.balance !== entry.balance)
      ) {
        firstOrderDifference = false;
        differences.push({
          token,
          kind: 'holderOrder',
          rank: counts.holders,
          stored: entry,
          recomputed: want,
        });
      }
    }
    after = page[page.length - 1]!;
    if (counts.holders > expected.length + PAGE) break; // a walk that never ends is reported as it stands
  }
  if (firstOrderDifference && counts.holders < expected.length) {
    differences.push({
      token,
      kind: 'holderOrder',
      rank: counts.holders + 1,
      stored: null,
      recomputed: expected[counts.holders]!,
    });
  }
  if (counts.holders !== expected.length)
    differences.push({ token, kind: 'holders', stored: counts.holders, recomputed: expected.length });

  // The sampled addresses' transfer lists, as the API pages them.
  for (const address of facts.collector.sample) {
    counts.addressLists++;
    const want = facts.collector.newestFirst(address);
    const got: TransferRecord[] = [];
    for (let offset = 0; offset <= DEEPEST_OFFSET; offset += PAGE_SIZE) {
      const page = await store.reader.listAddressTransfers(chain, address, token, offset, PAGE_SIZE);
      got.push(...page);
      if (page.length < PAGE_SIZE) break;
    }
    const length = Math.max(got.length, want.length);
    for (let i = 0; i < length; i++) {
      const a = got[i] === undefined ? null : describeTransfer(got[i]!);
      const b = want[i] === undefined ? null : describeTransfer(want[i]!);
      if (a !== b) {
        differences.push({
          token,
          kind: 'addressTransfers',
          holder: address,
          index: i,
          stored: a,
          recomputed: b,
        });
        break;
      }
    }
  }
  return counts;
}

function compareHolders(a: HolderEntry, b: HolderEntry): number {
  if (a.balance !== b.balance) return a.balance > b.balance ? -1 : 1;
  return a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
}

function describeTransfer(t: TransferRecord): string {
  return `${t.blockNumber}/${t.logIndex}/${t.txHash} ${t.from}->${t.to} ${t.value}`;
}
