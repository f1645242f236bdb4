/**
 * Shared machinery of the reliability ("chaos") scenarios: how big they are (short in CI, long
 * under `npm run chaos`), seeded randomness, live traffic on an anvil chain, and the two checks
 * every scenario ends with:
 *
 * - `snapshotStore` + `diffSnapshots`: one store equals another (a clean run) token by token,
 *   transfer by transfer and balance by balance, read through the `Store` interface only, so the
 *   same comparison works for every backend;
 * - `diffStoreAgainstNode`: a store equals the node's own truth — its Transfer logs decoded here
 *   independently of the indexer, and its `balanceOf` / `totalSupply` state.
 *
 * Hooks for other backends and chains: `chaosBackends()` names the store backends a scenario runs
 * on (SQLite by default; `TOKENQUERY_CHAOS_BACKENDS=sqlite,postgres` with
 * `TOKENQUERY_CHAOS_POSTGRES_URL` adds PostgreSQL: each run gets a database of its own), and
 * snapshots take the chain name, so a NEO harness can feed the same comparisons.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeCall } from '../../devchain/abi.js';
import {
  callBatch,
  getAccounts,
  getBlock,
  getBlockNumber,
  sendTransaction,
  waitForReceipt,
} from '../../devchain/chain.js';
import { addressOf, type DeployedToken, selector, totalSupply } from '../../devchain/deploy.js';
import { rpc, toQuantity } from '../../devchain/rpc.js';
import { formatUnits } from '../../internal/amount.js';
import { DEAD_ADDRESS, ZERO_ADDRESS } from '../../internal/chains.js';
import type { Logger } from '../../internal/logger.js';
import { seededRandom } from '../../internal/random.js';
import { openStore } from '../../store/open.js';
import type { Checkpoint, Store, TokenRecord, TransferRecord } from '../../store/types.js';

// ---- size and seed ----

/** True under `npm run chaos` (`TOKENQUERY_CHAOS=1`): scenarios run their long versions. */
export const CHAOS = process.env.TOKENQUERY_CHAOS === '1';

/** `ci` in the ordinary test run, `long` under `npm run chaos`. */
export function scaled<T>(ci: T, long: T): T {
  return CHAOS ? long : ci;
}

/**
 * The scenario's seed: `TOKENQUERY_CHAOS_SEED` when set (to replay a run), else a fresh one.
 * Always printed, so that any failure can be replayed.
 */
export function chaosSeed(scenario: string): number {
  const fixed = process.env.TOKENQUERY_CHAOS_SEED;
  const seed = fixed !== undefined && fixed !== '' ? Number(fixed) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  console.log(`# ${scenario}: seed ${seed} (replay with TOKENQUERY_CHAOS_SEED=${seed})`);
  return seed;
}

/**
 * Records a scenario's figures for `npm run chaos`, which writes them into docs/reliability.md
 * (`TOKENQUERY_CHAOS_REPORT` names the directory; without it nothing is written). Also printed.
 */
export function recordResult(scenario: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ scenario, long: CHAOS, ...figures });
  console.log(`# result ${line}`);
  const dir = process.env.TOKENQUERY_CHAOS_REPORT;
  if (dir === undefined || dir === '') return;
  mkdirSync(dir, { recursive: true });
  const suffix = typeof figures.backend === 'string' ? `-${figures.backend}` : '';
  writeFileSync(join(dir, `${scenario}${suffix}.json`), `${line}\n`);
}

// ---- backends ----

/** A store backend the scenarios can run on. */
/** eth's checkpoint is at `head`, on the node's chain (the same block hash), and every supply is read. */
export async function caughtUp(store: Store, nodeUrl: string, head: number): Promise<boolean> {
  const checkpoint = await store.writer.getCheckpoint('eth');
  if (checkpoint?.block !== head) return false;
  const [ref] = await store.writer.getBlockRefs('eth', head, head);
  if (ref?.hash !== (await getBlock(nodeUrl, head))?.hash) return false;
  return (await store.writer.tokensNeedingSupply('eth', -1, 1)).length === 0;
}

export interface ChaosBackend {
  name: string;
  /** A location (`--db` value) no run has used yet. */
  freshLocation(label: string): Promise<string>;
  /** Drops what `freshLocation` created. */
  cleanup(): Promise<void>;
}

/** SQLite files in `dir`. */
export function sqliteBackend(dir: string): ChaosBackend {
  let n = 0;
  return {
    name: 'sqlite',
    freshLocation: async (label) => join(dir, `${label}-${n++}.sqlite`),
    cleanup: async () => {},
  };
}

/**
 * PostgreSQL: one fresh database per location on the server of `TOKENQUERY_CHAOS_POSTGRES_URL`
 * (e.g. `postgres://postgres@127.0.0.1:5432/postgres`), dropped by `cleanup`.
 */
export function postgresBackend(adminUrl: string): ChaosBackend {
  const created: string[] = [];
  const admin = async <T>(work: (client: import('pg').Client) => Promise<T>): Promise<T> => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'postgres',
    async freshLocation(label) {
      const name = `tq_chaos_${label.replace(/\W/g, '_')}_${process.pid}_${created.length}`;
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      created.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async cleanup() {
      for (const name of created.splice(0))
        await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    },
  };
}

/**
 * The backends to run on: `TOKENQUERY_CHAOS_BACKENDS` (comma-separated; default `sqlite`).
 * `postgres` needs `TOKENQUERY_CHAOS_POSTGRES_URL`.
 */
export function chaosBackends(dir: string): ChaosBackend[] {
  const names = (process.env.TOKENQUERY_CHAOS_BACKENDS ?? 'sqlite').split(',').map((s) => s.trim());
  return names.filter(Boolean).map((name) => {
    if (name === 'sqlite') return sqliteBackend(dir);
    if (name === 'postgres') {
      const url = process.env.TOKENQUERY_CHAOS_POSTGRES_URL;
      if (!url)
        throw new Error(
          'TOKENQUERY_CHAOS_BACKENDS names postgres but TOKENQUERY_CHAOS_POSTGRES_URL is unset',
        );
      return postgresBackend(url);
    }
    throw new Error(`unknown chaos backend "${name}"`);
  });
}

/** Opens a store at a backend location (read side: no writer thread). */
export function openAt(location: string, logger: Logger): Promise<Store> {
  return openStore({ location, logger });
}

// ---- comparing stores ----

/** Everything a chain's data is, as the `Store` interface shows it. */
export interface StoreSnapshot {
  checkpoint: Checkpoint | null;
  /** Every token, in `listTokens` order. */
  tokens: TokenRecord[];
  /** Per token: every transfer, newest first. */
  transfers: Map<string, TransferRecord[]>;
  /** Per token: the balance of every address that appears in its transfers. */
  balances: Map<string, Map<string, bigint>>;
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
  for (const token of tokens) {
    const list = await store.reader.listTransfers(chain, token.address, 0, token.transferCount + 1000);
    transfers.set(token.address, list);
    const holders = new Set<string>();
    for (const t of list) holders.add(t.from).add(t.to);
    const perHolder = new Map<string, bigint>();
    for (const holder of [...holders].sort())
      perHolder.set(holder, await store.reader.getBalance(chain, token.address, holder));
    balances.set(token.address, perHolder);
  }
  return { checkpoint: await store.writer.getCheckpoint(chain), tokens, transfers, balances };
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

// ---- the node's truth ----

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

export async function readNodeTruth(url: string, block?: number): Promise<NodeTruth> {
  const head = block ?? (await getBlockNumber(url));
  const byToken = new Map<string, NodeTransfer[]>();
  for (const t of await nodeTransfers(url, head)) {
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
 * `balanceOf`, the holder count, and the total supply (unless `supply: false`).
 */
export async function diffStoreAgainstNode(
  store: Store,
  chain: string,
  truth: NodeTruth,
  options: { supply?: boolean; max?: number } = {},
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
  return out;
}

// ---- live traffic ----

/** Options of {@link startTraffic}. */
export interface TrafficOptions {
  seed: number;
  /** Pause between two transactions. Default 20 ms. */
  intervalMs?: number;
  /** Every n-th transaction is a mint (capped token excluded) or a burn. Default 15. */
  mintBurnEvery?: number;
}

/** Live traffic on an anvil chain; see {@link startTraffic}. */
export interface Traffic {
  /** Transactions sent (transfers, mints, burns). */
  readonly sent: number;
  /** Sends that failed (logged nowhere: a chain mid-reorg may refuse some). */
  readonly failed: number;
  /** Stops sending and waits for the send in progress. */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * Funds the dev accounts with every token, then keeps sending transactions without waiting for
 * them: transfers between the dev accounts and a few fresh addresses (some to 0x…dead), and now
 * and then a mint or a burn, so supplies move too. Senders hold far more than they send, so no
 * transaction reverts for lack of balance.
 */
export async function startTraffic(
  url: string,
  tokens: readonly DeployedToken[],
  options: TrafficOptions,
): Promise<Traffic> {
  const accounts = await getAccounts(url);
  const deployer = accounts[0]!;
  const random = seededRandom(options.seed);
  const intervalMs = options.intervalMs ?? 20;
  const every = options.mintBurnEvery ?? 15;
  const recipients = [...accounts, DEAD_ADDRESS];
  for (let i = 0; i < 12; i++)
    recipients.push(
      `0x${Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0')}${'ab'.repeat(16)}`,
    );
  const transferData = (to: string, amount: bigint) =>
    encodeCall(selector('transfer(address,uint256)'), [
      { type: 'address', value: to },
      { type: 'uint256', value: amount },
    ]);
  // Funding, mined before the traffic starts.
  const funding: string[] = [];
  for (const token of tokens) {
    for (const account of accounts.slice(1)) {
      funding.push(
        await sendTransaction(url, {
          from: deployer,
          to: token.address,
          data: transferData(account, 10n ** 6n * 10n ** BigInt(token.decimals)),
          gas: 100_000,
        }),
      );
    }
  }
  for (const hash of funding) await waitForReceipt(url, hash);

  let sent = 0;
  let failed = 0;
  let running = true;
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  const loop = async () => {
    while (!stopped) {
      if (!running) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      const step = (async () => {
        const token = tokens[Math.floor(random() * tokens.length)]!;
        const unit = 10n ** BigInt(token.decimals);
        const n = sent + failed + 1;
        try {
          if (n % every === 0 && token.kind !== 'capped' && random() < 0.5) {
            const data = encodeCall(selector('mint(address,uint256)'), [
              { type: 'address', value: recipients[Math.floor(random() * recipients.length)]! },
              { type: 'uint256', value: BigInt(1 + Math.floor(random() * 1000)) * unit },
            ]);
            await sendTransaction(url, { from: deployer, to: token.address, data, gas: 150_000 });
          } else if (n % every === 0) {
            const data = encodeCall(selector('burn(uint256)'), [
              { type: 'uint256', value: BigInt(1 + Math.floor(random() * 100)) * unit },
            ]);
            await sendTransaction(url, { from: deployer, to: token.address, data, gas: 150_000 });
          } else {
            const from = accounts[1 + Math.floor(random() * (accounts.length - 1))]!;
            let to = recipients[Math.floor(random() * recipients.length)]!;
            if (to === from) to = deployer;
            const amount = (unit * BigInt(1 + Math.floor(random() * 10_000))) / 100n;
            await sendTransaction(url, {
              from,
              to: token.address,
              data: transferData(to, amount),
              gas: 100_000,
            });
          }
          sent++;
        } catch {
          failed++;
        }
      })();
      current = step;
      await step;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  };
  const done = loop();
  return {
    get sent() {
      return sent;
    },
    get failed() {
      return failed;
    },
    async pause() {
      running = false;
      await current;
    },
    resume() {
      running = true;
    },
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Drops every pending transaction (`anvil_dropAllTransactions`): after a reorg, senders' nonces start again from the chain. */
export async function dropPendingTransactions(url: string): Promise<void> {
  await rpc(url, 'anvil_dropAllTransactions');
}

/** Lower-case addresses of the given tokens. */
export const addressesOf = (tokens: readonly DeployedToken[]) => tokens.map((t) => addressOf(t));

// ---- processes ----

/** Resident set size of a process in bytes (Linux `/proc`); undefined elsewhere or once it is gone. */
export function rssOf(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

// ---- the API's view ----

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

/** Mines an (empty unless transactions wait) block every `everyMs` until `stop()`, which waits for the one in flight. */
export function startMiner(url: string, everyMs: number): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      if (stopped) break;
      await rpc(url, 'anvil_mine', ['0x1']).catch(() => {});
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Once traffic and mining have stopped: the head, after it has stayed put for `quietMs` (a last transaction may still be mined). */
export async function settledHead(url: string, quietMs = 500): Promise<number> {
  let head = await getBlockNumber(url);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = await getBlockNumber(url);
    if (now === head) return head;
    head = now;
  }
}
