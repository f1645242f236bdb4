/**
 * Comparing stores for the reliability scenarios: a chain's whole index read through the `Store`
 * interface only (so the same comparison works for every backend), and the differences between
 * two such snapshots, token by token, transfer by transfer, balance by balance and holder by
 * holder.
 */
import type { Checkpoint, HolderEntry, Store, TokenRecord, TransferRecord } from '../../store/types.js';

/** Everything a chain's data is, as the `Store` interface shows it. */
export interface StoreSnapshot {
  checkpoint: Checkpoint | null;
  /** Every token, in `listTokens` order. */
  tokens: TokenRecord[];
  /** Per token: every transfer, newest first. */
  transfers: Map<string, TransferRecord[]>;
  /** Per token: the balance of every address that appears in its transfers. */
  balances: Map<string, Map<string, bigint>>;
  /** Per token: every holder, in `listHolders` order. */
  holders: Map<string, HolderEntry[]>;
}

/** Reads a chain's whole index through the `Store` interface. */
export async function snapshotStore(store: Store, chain: string): Promise<StoreSnapshot> {
  const tokens: TokenRecord[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await store.reader.listTokens(chain, offset, 500);
    tokens.push(...page.tokens);
    if (page.tokens.length < 500) break;
  }
  const transfers = new Map<string, TransferRecord[]>();
  const balances = new Map<string, Map<string, bigint>>();
  const holders = new Map<string, HolderEntry[]>();
  for (const token of tokens) {
    const list: HolderEntry[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await store.reader.listHolders(chain, token.address, offset, 1000);
      list.push(...page);
      if (page.length < 1000) break;
    }
    holders.set(token.address, list);
    const stored = await store.reader.listTransfers(chain, token.address, 0, token.transferCount + 1000);
    transfers.set(token.address, stored);
    const named = new Set<string>();
    for (const t of stored) named.add(t.from).add(t.to);
    const perHolder = new Map<string, bigint>();
    for (const holder of [...named].sort())
      perHolder.set(holder, await store.reader.getBalance(chain, token.address, holder));
    balances.set(token.address, perHolder);
  }
  return { checkpoint: await store.writer.getCheckpoint(chain), tokens, transfers, balances, holders };
}

const show = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
const transferKey = (t: TransferRecord) =>
  `${t.blockNumber}/${t.logIndex}/${t.txIndex}/${t.txHash}/${t.from}/${t.to}/${t.value}/${t.time}`;

/**
 * Differences between two snapshots (empty when equal), at most `max` of them. `ignore` leaves
 * fields out of the token comparison (for example `totalSupply` when the two runs read it at
 * different heights of a live chain).
 */
export function diffSnapshots(
  actual: StoreSnapshot,
  expected: StoreSnapshot,
  options: { ignore?: readonly (keyof TokenRecord)[]; checkpoint?: boolean; max?: number } = {},
): string[] {
  const out: string[] = [];
  const max = options.max ?? 20;
  const push = (line: string) => {
    if (out.length < max) out.push(line);
  };
  if ((options.checkpoint ?? true) && show(actual.checkpoint) !== show(expected.checkpoint))
    push(`checkpoint ${show(actual.checkpoint)} != ${show(expected.checkpoint)}`);
  const strip = (token: TokenRecord) => {
    const copy: Record<string, unknown> = { ...token };
    for (const field of options.ignore ?? []) delete copy[field];
    return show(copy);
  };
  const expectedTokens = new Map(expected.tokens.map((t) => [t.address, t]));
  const actualTokens = new Map(actual.tokens.map((t) => [t.address, t]));
  for (const address of new Set([...expectedTokens.keys(), ...actualTokens.keys()])) {
    const a = actualTokens.get(address);
    const e = expectedTokens.get(address);
    if (a === undefined || e === undefined) {
      push(`token ${address}: ${a === undefined ? 'missing' : 'not in the expected store'}`);
      continue;
    }
    if (strip(a) !== strip(e)) push(`token ${address}: ${strip(a)} != ${strip(e)}`);
    const at = actual.transfers.get(address) ?? [];
    const et = expected.transfers.get(address) ?? [];
    if (at.length !== et.length) push(`token ${address}: ${at.length} transfers != ${et.length}`);
    for (let i = 0; i < Math.min(at.length, et.length); i++) {
      if (transferKey(at[i]!) !== transferKey(et[i]!)) {
        push(`token ${address}: transfer #${i} ${transferKey(at[i]!)} != ${transferKey(et[i]!)}`);
        break;
      }
    }
    const ab = actual.balances.get(address) ?? new Map<string, bigint>();
    const eb = expected.balances.get(address) ?? new Map<string, bigint>();
    for (const holder of new Set([...ab.keys(), ...eb.keys()])) {
      if ((ab.get(holder) ?? 0n) !== (eb.get(holder) ?? 0n))
        push(`token ${address}: balance of ${holder} ${ab.get(holder) ?? 0n} != ${eb.get(holder) ?? 0n}`);
    }
    const ah = actual.holders.get(address) ?? [];
    const eh = expected.holders.get(address) ?? [];
    if (ah.length !== eh.length) push(`token ${address}: ${ah.length} holders != ${eh.length}`);
    const rank = eh.findIndex((e, i) => show(ah[i] ?? null) !== show(e));
    if (rank >= 0)
      push(`token ${address}: holder #${rank + 1} ${show(ah[rank] ?? null)} != ${show(eh[rank])}`);
  }
  // The token list's order (holders, transfers, address) must agree too.
  const order = (s: StoreSnapshot) => s.tokens.map((t) => t.address).join(',');
  if (out.length === 0 && order(actual) !== order(expected)) push('token list order differs');
  return out;
}

/** Transfers in a snapshot, all tokens together. */
export function transferTotal(snapshot: StoreSnapshot): number {
  let n = 0;
  for (const list of snapshot.transfers.values()) n += list.length;
  return n;
}
