/**
 * The EVM node's own truth for the reliability scenarios: its Transfer logs, decoded here
 * independently of the indexer, and its `balanceOf` / `totalSupply` state; and the differences
 * between a store and it.
 */

import { createEvmSource } from '../../chains/evm/source.js';
import { createRpcClient } from '../../chains/jsonrpc/rpc-client.js';
import { encodeCall } from '../../devchain/abi.js';
import { callBatch, getBlockNumber } from '../../devchain/chain.js';
import { selector, totalSupply } from '../../devchain/deploy.js';
import { rpc, toQuantity } from '../../devchain/rpc.js';
import { ZERO_ADDRESS } from '../../internal/chains.js';
import { silentLogger } from '../../internal/logger.js';
import { waitFor } from '../../internal/testing/wait.js';
import type { Store } from '../../store/types.js';
import { type AddressViewOptions, diffAddressViews } from './address-views.js';
import { snapshotStore } from './store-snapshots.js';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  logIndex: string;
  transactionHash: string;
}

/** A fungible transfer as the node's logs show it, decoded here (not by the indexer's decoder). */
export interface NodeTransfer {
  token: string;
  blockNumber: number;
  logIndex: number;
  txHash: string;
  from: string;
  to: string;
  value: bigint;
}

/** Every ERC-20 Transfer log of blocks `0..head`, fetched in spans of `span` blocks. */
export async function nodeTransfers(url: string, head: number, span = 200): Promise<NodeTransfer[]> {
  const out: NodeTransfer[] = [];
  for (let from = 0; from <= head; from += span) {
    const to = Math.min(head, from + span - 1);
    const logs = await rpc<RawLog[]>(url, 'eth_getLogs', [
      { fromBlock: toQuantity(from), toBlock: toQuantity(to), topics: [TRANSFER_TOPIC] },
    ]);
    for (const log of logs) {
      if (log.topics.length !== 3) continue; // ERC-721: the token id is a fourth topic
      out.push({
        token: log.address.toLowerCase(),
        blockNumber: Number.parseInt(log.blockNumber, 16),
        logIndex: Number.parseInt(log.logIndex, 16),
        txHash: log.transactionHash.toLowerCase(),
        from: `0x${log.topics[1]!.slice(-40).toLowerCase()}`,
        to: `0x${log.topics[2]!.slice(-40).toLowerCase()}`,
        value: BigInt(log.data),
      });
    }
  }
  return out;
}

/** `balanceOf` of many holders at `block`, in batches. */
export async function nodeBalances(url: string, token: string, holders: readonly string[], block: number) {
  const out = new Map<string, bigint>();
  for (let i = 0; i < holders.length; i += 500) {
    const part = holders.slice(i, i + 500);
    const results = await callBatch(
      url,
      part.map((h) => ({
        to: token,
        data: encodeCall(selector('balanceOf(address)'), [{ type: 'address', value: h }]),
      })),
      block,
    );
    part.forEach((h, k) => {
      out.set(h, BigInt(results[k]!));
    });
  }
  return out;
}

/** The node's truth per token at `block`: transfers, balances of every address they name, supply. */
export interface NodeTruth {
  head: number;
  tokens: Map<string, { transfers: NodeTransfer[]; balances: Map<string, bigint>; supply: bigint }>;
}

/**
 * The node's truth at `block` (default: the head). With `fromBlock`, as an index starting there
 * sees it (a late start): the transfers from that block on, and the balances of the addresses they
 * name.
 */
export async function readNodeTruth(url: string, block?: number, fromBlock = 0): Promise<NodeTruth> {
  const head = block ?? (await getBlockNumber(url));
  const byToken = new Map<string, NodeTransfer[]>();
  for (const t of await nodeTransfers(url, head)) {
    if (t.blockNumber < fromBlock) continue;
    const list = byToken.get(t.token) ?? [];
    list.push(t);
    byToken.set(t.token, list);
  }
  const tokens: NodeTruth['tokens'] = new Map();
  for (const [token, transfers] of byToken) {
    const holders = [...new Set(transfers.flatMap((t) => [t.from, t.to]))]
      .filter((a) => a !== ZERO_ADDRESS)
      .sort();
    tokens.set(token, {
      transfers,
      balances: await nodeBalances(url, token, holders, head),
      supply: await totalSupply(url, token, head),
    });
  }
  return { head, tokens };
}

/**
 * Differences between a store and the node (empty when equal): the token set, each token's
 * transfers (no phantom, none missing), transfer count, every holder's balance against
 * `balanceOf`, the holder count, and the total supply (unless `supply: false`). With `views`, also
 * the address and holder views (`diffAddressViews`): every token's holder list, every address's
 * holdings (balance and transfer count) and balance entries, and the transfer lists of
 * `views.transferSample` addresses (default every one).
 */
export async function diffStoreAgainstNode(
  store: Store,
  chain: string,
  truth: NodeTruth,
  options: { supply?: boolean; max?: number; views?: boolean | Omit<AddressViewOptions, 'max'> } = {},
): Promise<string[]> {
  const out: string[] = [];
  const max = options.max ?? 20;
  const push = (line: string) => {
    if (out.length < max) out.push(line);
  };
  const stored = await snapshotStore(store, chain);
  const storedTokens = new Map(stored.tokens.map((t) => [t.address, t]));
  for (const address of storedTokens.keys())
    if (!truth.tokens.has(address)) push(`token ${address} is stored but has no transfer on the node`);
  for (const [address, expected] of truth.tokens) {
    const token = storedTokens.get(address);
    if (token === undefined) {
      push(`token ${address} (${expected.transfers.length} transfers on the node) is missing`);
      continue;
    }
    if (token.transferCount !== expected.transfers.length)
      push(`token ${address}: transferCount ${token.transferCount}, node ${expected.transfers.length}`);
    const key = (t: {
      blockNumber: number;
      logIndex: number;
      txHash: string;
      from: string;
      to: string;
      value: bigint;
    }) => `${t.blockNumber}/${t.logIndex}/${t.txHash}/${t.from}/${t.to}/${t.value}`;
    const storedKeys = new Set((stored.transfers.get(address) ?? []).map(key));
    const nodeKeys = new Set(expected.transfers.map(key));
    for (const k of storedKeys) if (!nodeKeys.has(k)) push(`token ${address}: phantom transfer ${k}`);
    for (const k of nodeKeys) if (!storedKeys.has(k)) push(`token ${address}: missing transfer ${k}`);
    let holders = 0;
    for (const [holder, balance] of expected.balances) {
      const mine = await store.reader.getBalance(chain, address, holder);
      if (mine !== balance) push(`token ${address}: balance of ${holder} ${mine}, balanceOf ${balance}`);
      if (balance > 0n) holders++;
    }
    if (token.holderCount !== holders)
      push(`token ${address}: holderCount ${token.holderCount}, node ${holders}`);
    if ((options.supply ?? true) && token.totalSupply !== expected.supply)
      push(`token ${address}: totalSupply ${token.totalSupply}, node ${expected.supply}`);
  }
  if (options.views && out.length < max) {
    const viewOptions = options.views === true ? {} : options.views;
    for (const line of await diffAddressViews(store.reader, chain, truth.tokens, {
      ...viewOptions,
      max: max - out.length,
    }))
      push(line);
  }
  return out;
}

/**
 * Waits until `store` has the node's head block at `url` (its hash too, so a reorg has been
 * followed) and every supply read; returns that head.
 */
export async function followedHead(store: Pick<Store, 'writer'>, url: string): Promise<number> {
  const logger = silentLogger();
  const source = createEvmSource({ rpc: createRpcClient({ url, logger }), logger });
  let head = 0;
  await waitFor('the indexer to reach the head', async () => {
    head = await getBlockNumber(url);
    const [stored] = await store.writer.getBlockRefs('eth', head, head);
    const [node] = await source.getHeaders([head]);
    return (
      (await store.writer.getCheckpoint('eth'))?.block === head &&
      stored?.hash === node?.hash &&
      (await store.writer.tokensNeedingSupply('eth', -1, 1)).length === 0
    );
  });
  return head;
}
