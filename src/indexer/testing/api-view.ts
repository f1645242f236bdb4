/**
 * The API's view for the reliability scenarios: what the API answers for a chain compared with
 * the node's truth, and the mix of requests the load scenarios send.
 */
import { formatUnits } from '../../internal/amount.js';
import type { NodeTruth } from './evm-truth.js';

interface ApiTransfer {
  block_no: number;
  txid: string;
  from: string;
  to: string;
  value: string;
}

/** GET a JSON body; any non-200 status or non-JSON body throws (a scenario never expects one). */
export async function getApiJson(url: string): Promise<{ code: number; data: unknown }> {
  const response = await fetch(url);
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`HTTP ${response.status} from ${new URL(url).pathname}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as { code: number; data: unknown };
}

/**
 * Differences between what the API answers for a chain and the node's truth: for every token,
 * Token Info (transfer count, holder count, total supply text) and the newest transfers (up to
 * the API's 50 pages of 50) — no phantom transfer, none missing.
 */
export async function diffApiAgainstNode(
  base: string,
  key: string,
  chain: string,
  truth: NodeTruth,
  decimals: ReadonlyMap<string, number>,
  options: { supply?: boolean; max?: number } = {},
): Promise<string[]> {
  const out: string[] = [];
  const max = options.max ?? 20;
  const push = (line: string) => {
    if (out.length < max) out.push(line);
  };
  for (const [address, expected] of truth.tokens) {
    const info = await getApiJson(`${base}/vipapi/${chain}/token/${address}?apikey=${key}`);
    if (info.code !== 1) {
      push(`token ${address}: Token Info code ${info.code}`);
      continue;
    }
    const data = info.data as { transferCnt: number; holderCnt: number; tokenInfo: { t: string | null } };
    const holders = [...expected.balances.values()].filter((b) => b > 0n).length;
    if (data.transferCnt !== expected.transfers.length)
      push(`token ${address}: API transferCnt ${data.transferCnt}, node ${expected.transfers.length}`);
    if (data.holderCnt !== holders)
      push(`token ${address}: API holderCnt ${data.holderCnt}, node ${holders}`);
    const supply = formatUnits(expected.supply, decimals.get(address) ?? 18);
    if ((options.supply ?? true) && data.tokenInfo.t !== supply)
      push(`token ${address}: API supply ${data.tokenInfo.t}, node ${supply}`);
    // The newest transfers, page by page (50 pages of 50 at most).
    const listed: ApiTransfer[] = [];
    for (let page = 1; page <= 50 && listed.length < expected.transfers.length; page++) {
      const answer = await getApiJson(
        `${base}/vipapi/${chain}/token/tokentrans/${address}/${page}/50?apikey=${key}`,
      );
      const items = answer.data as ApiTransfer[];
      listed.push(...items);
      if (items.length < 50) break;
    }
    const key4 = (t: { block: number; tx: string; from: string; to: string; value: string }) =>
      `${t.block}/${t.tx}/${t.from}/${t.to}/${t.value}`;
    const newest = [...expected.transfers]
      .sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex)
      .slice(0, listed.length);
    const fromNode = newest.map((t) =>
      key4({ block: t.blockNumber, tx: t.txHash, from: t.from, to: t.to, value: t.value.toString() }),
    );
    const fromApi = listed.map((t) =>
      key4({ block: t.block_no, tx: t.txid, from: t.from, to: t.to, value: t.value }),
    );
    const nodeSet = new Set(
      expected.transfers.map((t) =>
        key4({ block: t.blockNumber, tx: t.txHash, from: t.from, to: t.to, value: t.value.toString() }),
      ),
    );
    for (const k of fromApi) if (!nodeSet.has(k)) push(`token ${address}: API lists a phantom transfer ${k}`);
    if (fromApi.length !== Math.min(expected.transfers.length, 2500))
      push(`token ${address}: API lists ${fromApi.length} transfers, node has ${expected.transfers.length}`);
    else if (fromApi.join() !== fromNode.join())
      push(`token ${address}: API transfer list differs from the node's newest transfers`);
  }
  return out;
}

/** A mix of every API operation for `tokens` on `chain`, with the key: what the load scenarios request. */
export function apiPaths(key: string, chain: string, tokens: readonly string[]): string[] {
  const paths = ['/status', '/healthz', `/vipapi/${chain}/tokens/1/50?apikey=${key}`];
  for (const token of tokens) {
    paths.push(`/vipapi/${chain}/token/${token}?apikey=${key}`);
    for (const page of [1, 2, 7])
      paths.push(`/vipapi/${chain}/token/tokentrans/${token}/${page}/50?apikey=${key}`);
    for (const kind of ['totalsupply', 'maxsupply', 'circulatingsupply'])
      paths.push(`/vipapi/token/${kind}/${chain}/${token}?apikey=${key}`);
  }
  return paths;
}
