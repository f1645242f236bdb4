/**
 * The address and holder views of a store (`listHolders`, `getAddressHolding`,
 * `listAddressBalances`, `listAddressTransfers`) against a chain's state worked out without the
 * store: each token's balances (the node's `balanceOf`, a NEO window's unspent outputs, ...) and
 * its transfers (the node's logs). What the views must answer follows from those two alone:
 *
 * - a token's holders: the addresses with a positive balance, never the zero address or `""`,
 *   by balance descending, then address ascending, exactly `holderCount` of them;
 * - an address's holding of a token: its balance and the number of the token's transfers naming
 *   it as sender or recipient (a self-transfer once, zero values too);
 * - an address's balance entries: the tokens it holds, ordered like the token list (holders desc,
 *   transfers desc, address asc), never any for the zero address;
 * - an address's transfer lists, per token and of all tokens: newest first (block, log index,
 *   token address, descending), walked page by page as the API does, down to its deepest page.
 *
 * Used by the real-node tests (anvil, the crash scenario, the NEO fixtures, late starts and
 * imports), so each compares every view with its own truth through one piece of code.
 */
import { NON_HOLDERS } from '../../store/batch-plan.js';
import { compareHolders, compareStrings } from '../../store/testing/address-model.js';
import type { HolderEntry, NeoReader, StoreReader, TransferRecord } from '../../store/types.js';

/** The fields of a transfer the views are compared on. */
export type ViewTransfer = Pick<
  TransferRecord,
  'token' | 'blockNumber' | 'logIndex' | 'txHash' | 'from' | 'to' | 'value'
>;

/** One token's truth. */
export interface ExpectedToken {
  /**
   * Balances of (at least) every address the transfers name; an address left out holds 0. The
   * zero address's and `""`'s entries are never compared (the store keeps whatever it computed).
   */
  balances: ReadonlyMap<string, bigint>;
  /** Every transfer of the token, any order. */
  transfers: readonly ViewTransfer[];
}

/** Token address → its truth: every token of the chain. */
export type ExpectedViews = ReadonlyMap<string, ExpectedToken>;

export interface AddressViewOptions {
  /** Also compares `listNeoAddressBalances` (NEO). */
  neo?: Pick<NeoReader, 'listNeoAddressBalances' | 'getNeoToken'>;
  /**
   * How many addresses get their transfer lists walked (every token's list and the all-token
   * list): the largest holders of each token first, then the zero address, then others spread
   * over the address order. Default: every address.
   */
  transferSample?: number;
  /** At most this many differences are reported. Default 20. */
  max?: number;
}

/** The API's page size limit and deepest page start (page 50 of size 50). */
const PAGE_SIZE = 50;
const DEEPEST_OFFSET = 49 * PAGE_SIZE;
const HOLDER_PAGE = 500;

/** A token's holders as `listHolders` must answer them. */
export function expectedHolders(balances: ReadonlyMap<string, bigint>): HolderEntry[] {
  return [...balances]
    .filter(([address, balance]) => balance > 0n && !NON_HOLDERS.has(address))
    .map(([address, balance]) => ({ address, balance }))
    .sort(compareHolders);
}

/** `compareNewestFirst` of the address model, for transfers without their `txIndex` and `time`. */
const newestFirst = (a: ViewTransfer, b: ViewTransfer): number =>
  b.blockNumber - a.blockNumber || b.logIndex - a.logIndex || compareStrings(b.token, a.token);

const transferKey = (t: ViewTransfer) =>
  `${t.token}/${t.blockNumber}/${t.logIndex}/${t.txHash}/${t.from}/${t.to}/${t.value}`;
const show = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));

/** What the views must answer, worked out from the truth once (see the module comment). */
export interface DerivedViews {
  /** Token → its holders in `listHolders` order. */
  holdersOf: Map<string, HolderEntry[]>;
  /** Address → its transfers of every token, newest first. */
  byAddress: Map<string, ViewTransfer[]>;
  /** Every address named, zero address included. */
  addresses: string[];
  /** Token → address → the token's transfers naming it (every address the token names, 0 included). */
  counts: Map<string, Map<string, number>>;
  /** Address → the tokens naming it. */
  tokensOf: Map<string, Set<string>>;
  /** The token list's order: holders desc, transfers desc, address asc. */
  tokenOrder: string[];
  balanceOf(token: string, address: string): bigint;
  countOf(token: string, address: string): number;
  /** The balance entries of an address: [token, balance, transfer count], in the token list's order. */
  entriesOf(address: string): [string, bigint, number][];
}

export function deriveViews(expected: ExpectedViews): DerivedViews {
  const holdersOf = new Map<string, HolderEntry[]>();
  const byAddress = new Map<string, ViewTransfer[]>();
  const addresses = new Set<string>();
  const counts = new Map<string, Map<string, number>>();
  for (const [token, truth] of expected) {
    holdersOf.set(token, expectedHolders(truth.balances));
    const named = new Map<string, number>();
    counts.set(token, named);
    for (const address of truth.balances.keys()) {
      addresses.add(address);
      named.set(address, 0);
    }
    for (const t of truth.transfers) {
      for (const address of t.from === t.to ? [t.from] : [t.from, t.to]) {
        addresses.add(address);
        named.set(address, (named.get(address) ?? 0) + 1);
        const list = byAddress.get(address) ?? [];
        list.push(t);
        byAddress.set(address, list);
      }
    }
  }
  for (const list of byAddress.values()) list.sort(newestFirst);
  const balanceOf = (token: string, address: string) => expected.get(token)?.balances.get(address) ?? 0n;
  const countOf = (token: string, address: string) => counts.get(token)?.get(address) ?? 0;
  const tokensOf = new Map<string, Set<string>>();
  for (const [token, named] of counts) {
    for (const address of named.keys()) {
      const set = tokensOf.get(address) ?? new Set<string>();
      set.add(token);
      tokensOf.set(address, set);
    }
  }
  const tokenOrder = [...expected.keys()].sort(
    (a, b) =>
      holdersOf.get(b)!.length - holdersOf.get(a)!.length ||
      expected.get(b)!.transfers.length - expected.get(a)!.transfers.length ||
      compareStrings(a, b),
  );
  const entriesOf = (address: string): [string, bigint, number][] =>
    NON_HOLDERS.has(address)
      ? []
      : tokenOrder
          .filter((token) => tokensOf.get(address)?.has(token) === true && balanceOf(token, address) > 0n)
          .map((token) => [token, balanceOf(token, address), countOf(token, address)]);
  return {
    holdersOf,
    byAddress,
    addresses: [...addresses].sort(compareStrings),
    counts,
    tokensOf,
    tokenOrder,
    balanceOf,
    countOf,
    entriesOf,
  };
}

/**
 * Differences between the store's address and holder views and `expected` (empty when equal),
 * at most `options.max` of them.
 */
export async function diffAddressViews(
  reader: StoreReader,
  chain: string,
  expected: ExpectedViews,
  options: AddressViewOptions = {},
): Promise<string[]> {
  const out: string[] = [];
  const max = options.max ?? 20;
  const push = (line: string) => {
    if (out.length < max) out.push(line);
  };
  const views = deriveViews(expected);
  const { holdersOf, byAddress, addresses, counts, tokenOrder, balanceOf, countOf } = views;

  for (const token of tokenOrder) {
    if (out.length >= max) break;
    const want = holdersOf.get(token)!;
    const got: HolderEntry[] = [];
    for (let offset = 0; ; offset += HOLDER_PAGE) {
      const page = await reader.listHolders(chain, token, offset, HOLDER_PAGE);
      got.push(...page);
      if (page.length < HOLDER_PAGE) break;
    }
    if (got.length !== want.length)
      push(`token ${token}: ${got.length} holders listed, expected ${want.length}`);
    const firstDiff = want.findIndex(
      (w, i) => got[i] === undefined || got[i]!.address !== w.address || got[i]!.balance !== w.balance,
    );
    if (firstDiff >= 0) {
      push(
        `token ${token}: holder #${firstDiff + 1} is ${show(got[firstDiff] ?? null)}, expected ${show(want[firstDiff])}`,
      );
    }
    const record = (await reader.getToken(chain, token)) ?? (await options.neo?.getNeoToken(chain, token));
    if (record === null || record === undefined) push(`token ${token}: unknown to the store`);
    else if (record.holderCount !== got.length)
      push(`token ${token}: holderCount ${record.holderCount}, ${got.length} holders listed`);

    // Every address the token names: its holding.
    for (const address of [...counts.get(token)!.keys()].sort(compareStrings)) {
      const named = countOf(token, address);
      const balance = balanceOf(token, address);
      if (named === 0 && balance === 0n) continue;
      const holding = await reader.getAddressHolding(chain, address, token);
      if (holding.transferCount !== named)
        push(`token ${token}: transferCount of ${address} ${holding.transferCount}, expected ${named}`);
      if (!NON_HOLDERS.has(address) && holding.balance !== balance)
        push(`token ${token}: holding of ${address} ${holding.balance}, expected ${balance}`);
    }
  }

  // Every address: the tokens it holds, in the token list's order.
  for (const address of addresses) {
    if (out.length >= max) break;
    const want = views.entriesOf(address);
    const got = (await reader.listAddressBalances(chain, address)).map((entry) => [
      entry.token.address,
      entry.balance,
      entry.transferCount,
    ]);
    if (show(got) !== show(want))
      push(`address ${address}: balance entries ${show(got)}, expected ${show(want)}`);
    if (options.neo) {
      const neo = (await options.neo.listNeoAddressBalances(chain, address)).map((entry) => [
        entry.token.address,
        entry.balance,
        entry.transferCount,
      ]);
      if (show(neo) !== show(want))
        push(`address ${address}: NEO balance entries ${show(neo)}, expected ${show(want)}`);
    }
  }

  // A sample of addresses: their transfer lists, page by page.
  for (const address of sampleAddresses(views, options.transferSample)) {
    if (out.length >= max) break;
    const all = byAddress.get(address) ?? [];
    for (const token of [null, ...tokenOrder]) {
      const want = token === null ? all : all.filter((t) => t.token === token);
      if (token !== null && want.length === 0) continue;
      const got: ViewTransfer[] = [];
      for (let offset = 0; offset <= DEEPEST_OFFSET; offset += PAGE_SIZE) {
        const page = await reader.listAddressTransfers(chain, address, token, offset, PAGE_SIZE);
        got.push(...page);
        if (page.length < PAGE_SIZE) break;
      }
      const walked = want.slice(0, DEEPEST_OFFSET + PAGE_SIZE);
      const what = `address ${address}: transfers of ${token ?? 'every token'}`;
      if (got.length !== walked.length) push(`${what}: ${got.length} listed, expected ${walked.length}`);
      const i = walked.findIndex((w, k) => got[k] === undefined || transferKey(got[k]!) !== transferKey(w));
      if (i >= 0)
        push(
          `${what}: #${i} is ${got[i] ? transferKey(got[i]!) : 'missing'}, expected ${transferKey(walked[i]!)}`,
        );
    }
  }
  return out;
}

/** The addresses whose transfer lists are walked (see `AddressViewOptions.transferSample`). */
export function sampleAddresses(views: DerivedViews, size: number | undefined): string[] {
  const { addresses: sorted, holdersOf } = views;
  if (size === undefined || size >= sorted.length) return sorted;
  const chosen = new Set<string>();
  const top = Math.max(1, Math.floor(size / 2 / Math.max(1, holdersOf.size)));
  for (const holders of holdersOf.values()) for (const h of holders.slice(0, top)) chosen.add(h.address);
  for (const address of NON_HOLDERS)
    if (views.counts.size > 0 && views.tokensOf.has(address)) chosen.add(address);
  const step = sorted.length / Math.max(1, size - chosen.size);
  for (let i = 0; chosen.size < size && i < sorted.length; i++)
    chosen.add(sorted[Math.floor(i * step) % sorted.length]!);
  return [...chosen].slice(0, Math.max(size, chosen.size));
}
