/**
 * What the API can read of an imported chain, as comparable JSON lines (one per token), and their
 * comparison: how the import tests tell that two stores, filled in different ways or on different
 * backends, are the same.
 */
import assert from 'node:assert/strict';
import type { Store } from '../../store/types.js';

/** Everything the API can read of `eth`: every token, with its transfers, as comparable JSON. */
export async function digest(
  store: Store,
  options: { supplies?: boolean; except?: readonly string[] } = {},
): Promise<string[]> {
  const { total } = await store.reader.listTokens('eth', 0, 1);
  const { tokens } = await store.reader.listTokens('eth', 0, Math.max(total, 1));
  const out: unknown[] = [];
  for (const t of [...tokens].sort((a, b) => (a.address < b.address ? -1 : 1))) {
    if (options.except?.includes(t.address)) continue;
    const { totalSupply, cap, burnedBalance, ...rest } = t;
    const transfers = await store.reader.listTransfers('eth', t.address, 0, t.transferCount);
    out.push({
      ...rest,
      ...(options.supplies === false ? {} : { totalSupply, cap, burnedBalance }),
      transfers,
    });
  }
  return out.map((token) => JSON.stringify(token, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

/** Two digests are equal; on a difference, names the first token that differs (not 5 MB of JSON). */
export function assertSameStore(actual: string[], expected: string[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: number of tokens`);
  const i = actual.findIndex((token, k) => token !== expected[k]);
  if (i !== -1) assert.equal(actual[i]!.slice(0, 2000), expected[i]!.slice(0, 2000), `${what}: token #${i}`);
}
