/**
 * Token supplies in the PostgreSQL store: which tokens need their supply read from the node
 * (`supply_dirty` marks set by batches and rollbacks, then stale reads), and recording what was
 * read.
 */
import type pg from 'pg';
import { dirtyThenStale } from '../supply-reads.js';
import type { ExactnessUpdate, SupplyUpdate } from '../types.js';
import { byteaArray, int8Array, numericArray } from './binary-arrays.js';
import { decodeHex, encodeHexDigits } from './codec.js';
import { run } from './statements.js';
import type { LockChain } from './transactions.js';

/** Tokens whose supply must be read again: those marked dirty (oldest mark first), then those read before `staleBefore`. */
export function tokensNeedingSupply(
  pool: pg.Pool,
  chain: string,
  staleBefore: number,
  limit: number,
): Promise<string[]> {
  return dirtyThenStale(
    limit,
    async (n) => (await run<{ address: string }>(pool, 'dirtyTokens', [chain, n])).rows,
    async (n) => (await run<{ address: string }>(pool, 'staleTokens', [chain, staleBefore, n])).rows,
    (row) => decodeHex(row.address),
  );
}

/** Records supplies read from the node, in `client`'s transaction, under the chain's write lock. */
export async function updateSuppliesIn(
  client: pg.PoolClient,
  lockChain: LockChain,
  chain: string,
  updates: SupplyUpdate[],
): Promise<void> {
  // Applied one after another, the last update of a token sets its values, and the mark is
  // cleared when any of them was read at or after it: the same as one row per token with the
  // last values and the newest block.
  const merged = new Map<string, { update: SupplyUpdate; newest: number }>();
  for (const update of updates) {
    const seen = merged.get(update.address);
    merged.set(update.address, {
      update,
      newest: Math.max(seen?.newest ?? update.atBlock, update.atBlock),
    });
  }
  const list = [...merged.values()];
  await lockChain(client, chain);
  await run(client, 'updateSupplies', [
    chain,
    byteaArray(list.map((m) => encodeHexDigits(m.update.address))),
    numericArray(list.map((m) => m.update.totalSupply)),
    numericArray(list.map((m) => m.update.cap)),
    numericArray(list.map((m) => m.update.burnedBalance)),
    int8Array(list.map((m) => m.update.atBlock)),
    int8Array(list.map((m) => m.newest)),
  ]);
}

/** Sets or clears not-exact marks, in `client`'s transaction, under the chain's write lock. */
export async function setExactnessIn(
  client: pg.PoolClient,
  lockChain: LockChain,
  chain: string,
  updates: readonly ExactnessUpdate[],
): Promise<void> {
  // One row per token (the last update wins, as when applied one after another): an UPDATE ...
  // FROM that joins a row to two updates applies an arbitrary one.
  const list = [...new Map(updates.map((u) => [u.address, u.mark])).entries()];
  await lockChain(client, chain);
  await run(client, 'setExactness', [
    chain,
    byteaArray(list.map(([address]) => encodeHexDigits(address))),
    int8Array(list.map(([, mark]) => mark?.atBlock ?? null)),
    numericArray(list.map(([, mark]) => mark?.supplyDrift ?? null)),
    int8Array(list.map(([, mark]) => mark?.sampled ?? null)),
    int8Array(list.map(([, mark]) => mark?.differing ?? null)),
  ]);
}
