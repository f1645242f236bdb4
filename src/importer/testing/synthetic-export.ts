/**
 * Large, deterministic, SYNTHETIC `token_transfers` exports, for the import and growth
 * benchmarks (and their tests): `transfers` rows among `holders` addresses and `tokens` tokens,
 * all of it a pure function of `seed`, so any size can be made again byte for byte.
 *
 * Each block is generated on its own from (seed, block number), which is what lets a file be
 * written in any block order without holding it in memory: `order: 'shuffled'` writes ranges of
 * blocks in a permuted order and the rows inside each block in reverse, the way an export from
 * parallel workers or a sharded BigQuery job arrives.
 *
 * Shape: `perBlock` transfers per block, `logsPerTx` per transaction; token popularity skewed
 * (token k is picked about 1/(k+1) as often as token 0); 2% of transfers are mints from the zero
 * address; amounts up to 10^21. Balances may go negative (no balance is tracked while
 * generating); the store keeps them exactly and does not count them as holders.
 *
 * `activity: 'chain'` is issue #17's shape of a real chain instead: a few whale tokens with
 * {@link WHALE_SHARE} of all transfers between them, the other tokens and every address picked
 * with Zipf weights (rank k about 1/(k+1) as often as rank 0), the addresses made from their rank
 * as they are picked (never held in memory, so 20 million of them cost nothing).
 *
 * `spotlight` (off by default, and then the output is the same bytes as without the option) weaves
 * in the extremes the address benchmarks need (issue #16): a wallet holding many tokens, a busy
 * address in a large share of all transfers, a token with very many holders.
 */
import { TRANSFER_TOPIC } from '../../chains/evm/abi.js';
import type { FixtureCall, RawBlock, RawLog } from '../../chains/evm/testing/fixture-node.js';
import { mulberry32 } from '../../internal/random.js';

export interface SyntheticExportOptions {
  transfers: number;
  holders: number;
  tokens: number;
  seed: number;
  /** Default 100. */
  perBlock?: number;
  /** Default 2. */
  logsPerTx?: number;
  /** First block. Default 10,000,000. */
  startBlock?: number;
  /** Default 'csv'. */
  format?: 'csv' | 'jsonl';
  /** Write block_timestamp and transaction_index (so that no node is needed for them). Default true. */
  fullColumns?: boolean;
  /** 'sorted' (chain order) or 'shuffled' (permuted block ranges, rows reversed in each block). Default 'sorted'. */
  order?: 'sorted' | 'shuffled';
  /** Extreme addresses and a widely held token for the address benchmarks. Default: none. */
  spotlight?: SyntheticSpotlight;
  /** 'uniform' (holders drawn uniformly) or 'chain' (whales, Zipf tokens and addresses). Default 'uniform'. */
  activity?: 'uniform' | 'chain';
  /** 'chain' only: the whale tokens (the first ones). Default 3. */
  whales?: number;
}

/** 'chain' activity: the whale tokens' share of all transfers. */
export const WHALE_SHARE = 0.1;

/**
 * Transfers rewritten at evenly spread positions of the stream (the rest keep their plain rows, so
 * the same random draws are used and only these rows differ). Counts are exact; together they
 * must not exceed `transfers`.
 */
export interface SyntheticSpotlight {
  /** The wallet address receives one transfer of each of tokens 0..walletTokens-1, so it holds that many (<= tokens). */
  walletTokens?: number;
  /**
   * The busy address is the recipient of two in three of this many transfers and the sender of
   * the third (of a value 2^20 times smaller, so that its balances stay positive where it receives
   * as often); tokens are picked as for any transfer.
   */
  busyTransfers?: number;
  /** Token 0 is minted once to each of this many fresh addresses, so it has at least that many holders. */
  tokenHolders?: number;
}

/** The spotlight's addresses (defined for every export, used only when its counts are non-zero). */
export interface SpotlightAddresses {
  wallet: string;
  busy: string;
  /** Token 0. */
  holderToken: string;
}

/** One generated transfer. */
export interface SyntheticTransfer {
  token: string;
  from: string;
  to: string;
  value: string;
  txHash: string;
  logIndex: number;
  txIndex: number;
  blockNumber: number;
  time: number;
}

const ZERO = '0x0000000000000000000000000000000000000000';

const mix = (a: number, b: number): number =>
  Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b, 0xc2b2ae35);
const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

/** `count` 32-bit words of `next` as hex. */
function hexWords(next: () => number, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += hex8(next());
  return out;
}

/** A generator of one export's rows, block by block. */
export interface SyntheticExport {
  readonly options: Required<SyntheticExportOptions>;
  readonly blocks: number;
  readonly firstBlock: number;
  readonly lastBlock: number;
  /** Holder and token addresses (holders: made on first use; see `holderAddress` for large exports). */
  readonly holderAddresses: readonly string[];
  /** The address of holder rank `index` (0 ≤ index < holders). */
  holderAddress(index: number): string;
  readonly tokenAddresses: readonly string[];
  readonly spotlight: SpotlightAddresses;
  /** The `index`th fresh address of the token-holders spotlight. */
  airdropAddress(index: number): string;
  /** The transfers of block `n`, in log order. */
  block(n: number): SyntheticTransfer[];
  /** The file's text, in chunks of about 1 MiB, header first (CSV). */
  chunks(): Generator<string>;
  /**
   * What a JSON-RPC node needs to answer an import of this export (`startFixtureNode`): the head,
   * each token's first transfer as an ERC-20 log, name/symbol/decimals, and, when `withBlocks`,
   * every block with its transaction list.
   */
  node(options?: { withBlocks?: boolean }): {
    blocks: RawBlock[];
    logs: RawLog[];
    calls: FixtureCall[];
    head: number;
  };
}

export function createSyntheticExport(input: SyntheticExportOptions): SyntheticExport {
  const options: Required<SyntheticExportOptions> = {
    perBlock: 100,
    logsPerTx: 2,
    startBlock: 10_000_000,
    format: 'csv',
    fullColumns: true,
    order: 'sorted',
    spotlight: {},
    activity: 'uniform',
    whales: 3,
    ...input,
  };
  const chain = options.activity === 'chain';
  const { transfers, perBlock, logsPerTx, startBlock, seed } = options;
  if (transfers < 0 || options.holders < 1 || options.tokens < 1 || perBlock < 1 || logsPerTx < 1) {
    throw new RangeError('synthetic export: transfers >= 0, holders, tokens, perBlock and logsPerTx >= 1');
  }
  const blocks = Math.ceil(transfers / perBlock);
  const addresses = (kind: number, count: number) => {
    const next = mulberry32(mix(seed, kind));
    return Array.from({ length: count }, () => `0x${hexWords(next, 5)}`);
  };
  // 'uniform' draws its holders from one list (as it always has: the same bytes); 'chain' makes
  // each from its rank.
  let holderList: string[] | undefined;
  const holderAddress = (index: number): string => {
    if (!chain) {
      holderList ??= addresses(1, options.holders);
      return holderList[index]!;
    }
    return `0x${hexWords(mulberry32(mix(seed ^ 0x4a0d1e55, index)), 5)}`;
  };
  const tokenAddresses = addresses(2, options.tokens);
  const whales = chain ? Math.min(options.whales, options.tokens - 1) : 0;
  if (chain && (!Number.isInteger(options.whales) || options.whales < 0 || options.tokens < 2)) {
    throw new RangeError("synthetic export: 'chain' activity needs whales >= 0 and tokens >= 2");
  }
  /** A Zipf rank below `count` (weight about 1/(k+1)) from a uniform 32-bit draw: log-uniform. */
  const zipfRank = (r: number, count: number): number =>
    Math.min(count - 1, Math.floor((count + 1) ** (r / 2 ** 32)) - 1);
  const spotlight: SpotlightAddresses = {
    wallet: addresses(4, 1)[0]!,
    busy: addresses(5, 1)[0]!,
    holderToken: tokenAddresses[0]!,
  };
  // The index makes every airdrop address distinct; the rest of it is random.
  const airdropAddress = (index: number): string =>
    `0x${hex8(index)}${hexWords(mulberry32(mix(seed ^ 0x0a1d0a1d, index)), 4)}`;
  const special = spotlightSchedule(options);
  // Token k with weight 1/(k+1): cumulative weights for a binary search.
  const cumulative: number[] = [];
  let total = 0;
  for (let k = 0; k < options.tokens; k++) {
    total += 1 / (k + 1);
    cumulative.push(total);
  }
  const pickToken = (r: number): string => {
    if (chain) {
      // The whales first, by the low share of the draw, then Zipf over the other tokens.
      const u = r / 2 ** 32;
      if (u < WHALE_SHARE && whales > 0) return tokenAddresses[Math.floor((u / WHALE_SHARE) * whales)]!;
      const rest = options.tokens - whales;
      return tokenAddresses[whales + zipfRank(((u - WHALE_SHARE) / (1 - WHALE_SHARE)) * 2 ** 32, rest)]!;
    }
    const x = (r / 2 ** 32) * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return tokenAddresses[lo]!;
  };

  function block(n: number): SyntheticTransfer[] {
    const i = n - startBlock;
    if (i < 0 || i >= blocks) return [];
    const count = Math.min(perBlock, transfers - i * perBlock);
    const next = mulberry32(mix(seed, n));
    const time = 1_600_000_000 + i * 12;
    const out: SyntheticTransfer[] = [];
    let txHash = '';
    for (let log = 0; log < count; log++) {
      if (log % logsPerTx === 0) txHash = `0x${hexWords(next, 8)}`;
      const mint = next() % 50 === 0;
      const pickHolder = (r: number) =>
        holderAddress(chain ? zipfRank(r, options.holders) : r % options.holders);
      const from = mint ? ZERO : pickHolder(next());
      const to = pickHolder(next());
      // Up to ~10^21: three words of 2^32, truncated.
      const value = ((BigInt(next()) << 38n) + (BigInt(next()) << 6n) + BigInt(next() % 64)).toString();
      const row = { token: pickToken(next()), from, to, value };
      const s = special?.(i * perBlock + log);
      if (s?.kind === 'holder') {
        row.token = spotlight.holderToken;
        row.from = ZERO;
        row.to = airdropAddress(s.index);
      } else if (s?.kind === 'wallet') {
        row.token = tokenAddresses[s.index % options.spotlight.walletTokens!]!;
        row.to = spotlight.wallet;
      } else if (s?.kind === 'busy' && s.index % 3 === 2) {
        row.from = spotlight.busy;
        row.value = (BigInt(value) >> 20n).toString();
      } else if (s?.kind === 'busy') {
        row.to = spotlight.busy;
      }
      out.push({
        ...row,
        txHash,
        logIndex: log,
        txIndex: Math.floor(log / logsPerTx),
        blockNumber: n,
        time,
      });
    }
    return out;
  }

  /** Block numbers in file order. */
  function* blockOrder(): Generator<number> {
    if (options.order === 'sorted') {
      for (let i = 0; i < blocks; i++) yield startBlock + i;
      return;
    }
    const range = 50;
    const ranges = Math.ceil(blocks / range);
    const order = Array.from({ length: ranges }, (_, r) => r);
    const next = mulberry32(mix(seed, 3));
    for (let r = order.length - 1; r > 0; r--) {
      const j = next() % (r + 1);
      [order[r], order[j]] = [order[j]!, order[r]!];
    }
    for (const r of order) {
      for (let i = r * range; i < Math.min(blocks, (r + 1) * range); i++) yield startBlock + i;
    }
  }

  const baseColumns = 'token_address,from_address,to_address,value,transaction_hash,log_index,block_number';
  function line(t: SyntheticTransfer): string {
    if (options.format === 'csv') {
      const base = `${t.token},${t.from},${t.to},${t.value},${t.txHash},${t.logIndex},${t.blockNumber}`;
      return options.fullColumns ? `${base},${t.time},${t.txIndex}\n` : `${base}\n`;
    }
    // ethereum-etl's JSON shape: bare numbers, value included.
    const extra = options.fullColumns
      ? `, "block_timestamp": ${t.time}, "transaction_index": ${t.txIndex}`
      : '';
    return `{"type": "token_transfer", "token_address": "${t.token}", "from_address": "${t.from}", "to_address": "${t.to}", "value": ${t.value}, "transaction_hash": "${t.txHash}", "log_index": ${t.logIndex}, "block_number": ${t.blockNumber}${extra}}\n`;
  }

  return {
    options,
    blocks,
    firstBlock: startBlock,
    lastBlock: startBlock + blocks - 1,
    get holderAddresses() {
      return Array.from({ length: options.holders }, (_, i) => holderAddress(i));
    },
    holderAddress,
    tokenAddresses,
    spotlight,
    airdropAddress,
    block,
    *chunks() {
      let text = '';
      if (options.format === 'csv') {
        text = options.fullColumns
          ? `${baseColumns},block_timestamp,transaction_index\n`
          : `${baseColumns}\n`;
      }
      for (const n of blockOrder()) {
        const rows = block(n);
        if (options.order === 'shuffled') rows.reverse();
        for (const t of rows) text += line(t);
        if (text.length >= 1 << 20) {
          yield text;
          text = '';
        }
      }
      if (text.length > 0) yield text;
    },
    node(nodeOptions = {}) {
      const hex = (n: number) => `0x${n.toString(16)}`;
      const hashOf = (n: number) => `0x${hexWords(mulberry32(mix(seed ^ 0x5a5a5a5a, n)), 8)}`;
      const logs: RawLog[] = [];
      const seen = new Set<string>();
      const blockList: RawBlock[] = [];
      for (let n = startBlock; n < startBlock + blocks; n++) {
        const rows = block(n);
        if (nodeOptions.withBlocks === true) {
          blockList.push({
            number: hex(n),
            hash: hashOf(n),
            parentHash: hashOf(n - 1),
            timestamp: hex(rows[0]?.time ?? 0),
            transactions: [...new Set(rows.map((r) => r.txHash))],
          });
        }
        for (const t of rows) {
          if (seen.has(t.token)) continue;
          seen.add(t.token);
          const pad = (a: string) => `0x${a.slice(2).padStart(64, '0')}`;
          logs.push({
            address: t.token,
            topics: [TRANSFER_TOPIC, pad(t.from), pad(t.to)],
            data: `0x${BigInt(t.value).toString(16).padStart(64, '0')}`,
            blockNumber: hex(n),
            blockHash: hashOf(n),
            transactionHash: t.txHash,
            transactionIndex: hex(t.txIndex),
            logIndex: hex(t.logIndex),
            removed: false,
          });
        }
        if (seen.size === tokenAddresses.length && nodeOptions.withBlocks !== true) break;
      }
      const word = (v: bigint) => v.toString(16).padStart(64, '0');
      const abiString = (s: string) =>
        `0x${word(32n)}${word(BigInt(s.length))}${Buffer.from(s).toString('hex').padEnd(64, '0')}`;
      const calls: FixtureCall[] = tokenAddresses.flatMap((to, k) => [
        { to, data: '0x06fdde03', result: abiString(`Synthetic ${k}`) },
        { to, data: '0x95d89b41', result: abiString(`SYN${k}`) },
        { to, data: '0x313ce567', result: `0x${word(18n)}` },
      ]);
      return { blocks: blockList, logs, calls, head: startBlock + Math.max(blocks - 1, 0) };
    },
  };
}

type Special = { kind: 'holder' | 'busy' | 'wallet'; index: number };

/**
 * Which transfers (by position in the stream, 0-based) the spotlight rewrites, and which of its
 * rows each is: Bresenham's line over the stream picks the special positions evenly, then again
 * over those to share them among the three kinds, so that every count is exact and each kind is
 * spread over the whole history. Null when the spotlight is off.
 */
function spotlightSchedule(
  options: Required<SyntheticExportOptions>,
): ((position: number) => Special | null) | null {
  const { walletTokens = 0, busyTransfers = 0, tokenHolders = 0 } = options.spotlight;
  const total = options.transfers;
  const all = walletTokens + busyTransfers + tokenHolders;
  if (all === 0) return null;
  if (
    [walletTokens, busyTransfers, tokenHolders].some((n) => !Number.isInteger(n) || n < 0) ||
    all > total ||
    walletTokens > options.tokens
  ) {
    throw new RangeError(
      'synthetic export: spotlight counts >= 0, together <= transfers, walletTokens <= tokens',
    );
  }
  // Position k of n is the floor(k·count/n)-th of `count` evenly spread picks when this fires.
  const fires = (k: number, count: number, n: number): boolean =>
    Math.floor(((k + 1) * count) / n) > Math.floor((k * count) / n);
  const rest = all - tokenHolders;
  return (position) => {
    if (!fires(position, all, total)) return null;
    const s = Math.floor((position * all) / total);
    if (fires(s, tokenHolders, all)) return { kind: 'holder', index: Math.floor((s * tokenHolders) / all) };
    const r = s - Math.floor(((s + 1) * tokenHolders) / all);
    if (fires(r, busyTransfers, rest)) return { kind: 'busy', index: Math.floor((r * busyTransfers) / rest) };
    return { kind: 'wallet', index: r - Math.floor(((r + 1) * busyTransfers) / rest) };
  };
}
