/**
 * The address operations and Token Holders as the HTTP API answers them, against a chain's truth
 * (see `address-views.ts`): every token's holder pages (rank, address, balance, share of the
 * supply), every address's balance entries, the one-token balance entry of every pair a transfer
 * names, and the transfer lists of a sample of addresses, all walked page by page as a client
 * would, down to the API's deepest page.
 */
import { deriveViews, type ExpectedViews, sampleAddresses, type ViewTransfer } from './address-views.js';
import { getApiJson } from './api-view.js';

interface HolderPage {
  page: number;
  size: number;
  total: number;
  exact: boolean;
  data: { rank: number; address: string; balance: string; percentage: string | null }[];
}

interface BalanceEntry {
  hash: string;
  transferCnt: number;
  balance: string;
}

interface AddressTransfer {
  block_no: number;
  txid: string;
  tokenAddr: string;
  from: string;
  to: string;
  value: string;
}

const SIZE = 50;
const PAGES = 50;

/** `balance` as a percentage of `supply`, truncated to 6 digits after the point, as the contract spells it. */
export function sharePercent(balance: bigint, supply: bigint | null): string | null {
  if (supply === null || supply <= 0n) return null;
  const millionths = (balance * 100_000_000n) / supply;
  const whole = millionths / 1_000_000n;
  const fraction = (millionths % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}

/**
 * Differences between what the API answers and `expected` (empty when equal), at most `max`.
 * `supplies` gives each token's total supply for the holders' `percentage` (absent: not compared).
 */
export async function diffApiAddressViews(
  base: string,
  key: string,
  chain: string,
  expected: ExpectedViews,
  options: { supplies?: ReadonlyMap<string, bigint | null>; transferSample?: number; max?: number } = {},
): Promise<string[]> {
  const out: string[] = [];
  const max = options.max ?? 20;
  const push = (line: string) => {
    if (out.length < max) out.push(line);
  };
  const views = deriveViews(expected);
  const get = (path: string) => getApiJson(`${base}/vipapi/${chain}/${path}?apikey=${key}`);

  for (const token of views.tokenOrder) {
    if (out.length >= max) break;
    const want = views.holdersOf.get(token)!;
    const listed: HolderPage['data'] = [];
    for (let page = 1; page <= PAGES; page++) {
      const answer = (await get(`token/holders/${token}/${page}/${SIZE}`)).data as HolderPage;
      if (answer.total !== want.length)
        push(`token ${token}: holders total ${answer.total}, expected ${want.length}`);
      if (answer.exact !== true) push(`token ${token}: holders exact ${answer.exact}`);
      listed.push(...answer.data);
      if (answer.data.length < SIZE) break;
    }
    const supply = options.supplies?.get(token);
    const expectedRows = want.slice(0, PAGES * SIZE).map((h, i) => ({
      rank: i + 1,
      address: h.address,
      balance: h.balance.toString(),
      ...(supply === undefined ? {} : { percentage: sharePercent(h.balance, supply) }),
    }));
    const rows = listed.map((row) =>
      supply === undefined ? { rank: row.rank, address: row.address, balance: row.balance } : row,
    );
    const i = expectedRows.findIndex((row, k) => JSON.stringify(rows[k]) !== JSON.stringify(row));
    if (rows.length !== expectedRows.length || i >= 0)
      push(
        `token ${token}: holder #${i + 1} is ${JSON.stringify(rows[i] ?? null)}, expected ${JSON.stringify(expectedRows[i] ?? null)} (${rows.length} listed)`,
      );
  }

  for (const address of views.addresses) {
    if (out.length >= max) break;
    if (address === '') continue; // NEO's mint party: not an address the API takes
    const entries = ((await get(`address/tokenbalance/${address}`)).data as BalanceEntry[]).map((e) => [
      e.hash,
      e.balance,
      e.transferCnt,
    ]);
    const want = views
      .entriesOf(address)
      .map(([token, balance, count]) => [token, balance.toString(), count]);
    if (JSON.stringify(entries) !== JSON.stringify(want))
      push(
        `address ${address}: balance entries ${JSON.stringify(entries)}, expected ${JSON.stringify(want)}`,
      );
    for (const token of views.tokensOf.get(address) ?? []) {
      const [entry] = (await get(`address/tokenbalance/${address}/${token}`)).data as BalanceEntry[];
      const balance = views.balanceOf(token, address);
      const one = [entry?.balance, entry?.transferCnt];
      const wantOne = [(balance > 0n ? balance : 0n).toString(), views.countOf(token, address)];
      if (JSON.stringify(one) !== JSON.stringify(wantOne))
        push(
          `address ${address}: balance entry of ${token} ${JSON.stringify(one)}, expected ${JSON.stringify(wantOne)}`,
        );
    }
  }

  const show = (t: { block: number; tx: string; token: string; from: string; to: string; value: string }) =>
    `${t.block}/${t.tx}/${t.token}/${t.from}/${t.to}/${t.value}`;
  const fromTruth = (t: ViewTransfer) =>
    show({
      block: t.blockNumber,
      tx: t.txHash,
      token: t.token,
      from: t.from,
      to: t.to,
      value: t.value.toString(),
    });
  for (const address of sampleAddresses(views, options.transferSample)) {
    if (out.length >= max) break;
    const all = views.byAddress.get(address) ?? [];
    for (const token of [null, ...(views.tokensOf.get(address) ?? [])]) {
      const want = (token === null ? all : all.filter((t) => t.token === token))
        .slice(0, PAGES * SIZE)
        .map(fromTruth);
      const got: string[] = [];
      for (let page = 1; page <= PAGES; page++) {
        const path = `address/tokentrans/${address}/${token === null ? '' : `${token}/`}${page}/${SIZE}`;
        const items = (await get(path)).data as AddressTransfer[];
        got.push(
          ...items.map((t) =>
            show({
              block: t.block_no,
              tx: t.txid,
              token: t.tokenAddr,
              from: t.from,
              to: t.to,
              value: t.value,
            }),
          ),
        );
        if (items.length < SIZE) break;
      }
      const i = want.findIndex((w, k) => got[k] !== w);
      if (got.length !== want.length || i >= 0)
        push(
          `address ${address}: API transfers of ${token ?? 'every token'} #${i + 1} ${got[i] ?? 'missing'}, expected ${want[i] ?? 'none'} (${got.length} listed)`,
        );
    }
  }
  return out;
}
