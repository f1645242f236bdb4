/**
 * Compares everything a `Store` tells about a chain's addresses and holders with an
 * {@link AddressModel} fed the same batches: the address balances (with their token labels),
 * holdings, address transfer pages, holder pages and the `verify` scans. For the contract suite
 * and any test that drives a real store (indexer, importer, anvil tests).
 */
import assert from 'node:assert/strict';
import type { HolderEntry, IndexBatch, Store, TokenLabel, TokenRecord, TransferRecord } from '../types.js';
import { type AddressModel, compareStrings } from './address-model.js';

/** What a balance entry carries of a token's record (`listAddressBalances`). */
export const labelOf = ({ chain, address, name, symbol, decimals }: TokenRecord): TokenLabel => ({
  chain,
  address,
  name,
  symbol,
  decimals,
});

export interface AddressViewCheck {
  /**
   * Page sizes the paged reads are walked with (offset/limit), smallest first; default `[5, 50]`.
   * One token's address transfers and `scanHoldings` are walked with the first only.
   */
  pageSizes?: readonly number[];
  /** Addresses besides those the model knows (never seen ones answer `[]` and `{0n, 0}`). */
  extraAddresses?: readonly string[];
  /** Tokens besides those the model knows (unknown ones answer `{0n, 0}`, `[]`). */
  extraTokens?: readonly string[];
  /** Check `listNeoAddressBalances` too (NEO chains). */
  neo?: boolean;
  /** Added to every assertion message (say which step of a test this is). */
  label?: string;
}

/** Walks a paged read from offset 0 until a short page; checks a page past the end is empty. */
async function allPages<T>(
  read: (offset: number, limit: number) => Promise<T[]>,
  size: number,
): Promise<T[]> {
  const out: T[] = [];
  for (let offset = 0; ; offset += size) {
    const page = await read(offset, size);
    assert.ok(page.length <= size, `a page of ${size} held ${page.length}`);
    out.push(...page);
    if (page.length < size) {
      assert.deepEqual(await read(out.length + size, size), [], 'a page past the end is empty');
      return out;
    }
  }
}

/** Asserts that `store` answers every address and holder read of `chain` as `model` does. */
export async function assertAddressViews(
  store: Store,
  model: AddressModel,
  chain: string,
  check: AddressViewCheck = {},
): Promise<void> {
  const sizes = check.pageSizes ?? [5, 50];
  const at = (what: string): string => (check.label === undefined ? what : `${check.label}: ${what}`);
  const status = await store.reader.getChainStatus(chain);
  const asOf = status?.balancesBlock;
  const tokens = model.tokens(chain);
  const allTokens = [...tokens, ...(check.extraTokens ?? [])];
  const addresses = [...model.addresses(chain), ...(check.extraAddresses ?? [])];

  // Token counts first: the address balances are ordered by them.
  const records = new Map<string, Awaited<ReturnType<Store['reader']['getToken']>>>();
  for (const token of allTokens) {
    const record = await store.reader.getToken(chain, token);
    const counts = model.tokenCounts(chain, token);
    assert.deepEqual(
      record === null ? null : { holderCount: record.holderCount, transferCount: record.transferCount },
      counts,
      at(`counts of token ${token}`),
    );
    records.set(token, record);
    // The running sum of its stored balances, as of `balancesBlock` like them.
    assert.equal(
      await store.reader.getBalanceSum(chain, token),
      record === null ? null : model.balanceSum(chain, token, asOf),
      at(`balance sum of token ${token}`),
    );
  }

  for (const address of addresses) {
    const expected = model.addressBalances(chain, address, asOf);
    const listed = await store.reader.listAddressBalances(chain, address);
    assert.deepEqual(
      listed.map((b) => ({ token: b.token.address, balance: b.balance, transferCount: b.transferCount })),
      expected,
      at(`listAddressBalances of ${address}`),
    );
    for (const entry of listed) {
      const record = records.get(entry.token.address);
      assert.deepEqual(entry.token, record && labelOf(record), at(`token label of ${address}'s balance`));
    }
    if (check.neo === true) {
      const neo = await store.neo.listNeoAddressBalances(chain, address);
      assert.deepEqual(
        neo.map((b) => ({ token: b.token.address, balance: b.balance, transferCount: b.transferCount })),
        expected,
        at(`listNeoAddressBalances of ${address}`),
      );
      for (const entry of neo) {
        assert.deepEqual(
          entry.token,
          await store.neo.getNeoToken(chain, entry.token.address),
          at(`NEO token record of ${address}'s balance`),
        );
      }
    }
    for (const token of allTokens) {
      assert.equal(
        await store.reader.getBalance(chain, token, address),
        model.balance(chain, token, address, asOf),
        at(`getBalance of ${address} for ${token}`),
      );
      assert.deepEqual(
        await store.reader.getAddressHolding(chain, address, token),
        model.holding(chain, address, token, asOf),
        at(`getAddressHolding of ${address} for ${token}`),
      );
    }
    for (const token of [null, ...allTokens]) {
      const expectedTransfers = model.addressTransfers(chain, address, token, asOf);
      // Every page size for the list of all tokens; the first (the smallest) for each token's.
      for (const size of token === null ? sizes : sizes.slice(0, 1)) {
        const pages = await allPages<TransferRecord>(
          (offset, limit) => store.reader.listAddressTransfers(chain, address, token, offset, limit),
          size,
        );
        assert.deepEqual(
          pages,
          expectedTransfers,
          at(`listAddressTransfers of ${address} for ${token} by ${size}`),
        );
      }
    }
  }

  for (const token of allTokens) {
    const holders = model.holders(chain, token, asOf);
    for (const size of sizes) {
      const pages = await allPages<HolderEntry>(
        (offset, limit) => store.reader.listHolders(chain, token, offset, limit),
        size,
      );
      assert.deepEqual(pages, holders, at(`listHolders of ${token} by ${size}`));
    }
    for (const size of sizes) {
      const walked: HolderEntry[] = [];
      for (let after: HolderEntry | null = null; ; ) {
        const page = await store.scans.scanHolders(chain, token, after, size);
        walked.push(...page);
        if (page.length < size) break;
        after = page[page.length - 1]!;
      }
      assert.deepEqual(walked, holders, at(`scanHolders of ${token} by ${size}`));
    }
    const rows: ({ holder: string } & Awaited<ReturnType<Store['reader']['getAddressHolding']>>)[] = [];
    for (let after: string | null = null; ; ) {
      const page = await store.scans.scanHoldings(chain, token, after, sizes[0]!);
      rows.push(...page);
      if (page.length < sizes[0]!) break;
      after = page[page.length - 1]!.holder;
    }
    assert.equal(
      new Set(rows.map((r) => r.holder)).size,
      rows.length,
      at(`scanHoldings of ${token} repeats no holder`),
    );
    assert.deepEqual(
      rows
        .filter((r) => r.balance !== 0n || r.transferCount !== 0)
        .sort((a, b) => compareStrings(a.holder, b.holder)),
      model.holdings(chain, token, asOf),
      at(`scanHoldings of ${token}`),
    );
  }
}
/** Applies `batches` to the store and the model, in order. */
export async function applyToBoth(
  store: Store,
  model: AddressModel,
  batches: Iterable<IndexBatch>,
): Promise<void> {
  for (const b of batches) {
    await store.writer.applyBatch(b);
    model.apply(b);
  }
}
