/**
 * What `import` asks the node given with `--rpc`: block times and transaction positions the
 * export lacks, and for every token new to the store its metadata and whether it is fungible.
 * Every answer is checked against the export (same transaction in the block, same log), so a
 * node of another chain, or one that is not synced that far, is an error and never silent.
 */
import { TRANSFER_TOPIC, toQuantity } from '../chains/evm/abi.js';
import type { EvmBlockHeader, EvmSource, TokenSupply } from '../chains/evm/types.js';
import { classifyRpcError } from '../chains/jsonrpc/error-classification.js';
import { InvalidRpcResponseError } from '../chains/jsonrpc/errors.js';
import type { RpcBatchItem, RpcClient } from '../chains/jsonrpc/rpc-client.js';
import { sleep } from '../internal/async.js';
import { TokenqueryError, UserError } from '../internal/errors.js';
import type { TokenMetadata } from '../store/types.js';

/** A block as the import needs it. */
export interface BlockFacts {
  number: number;
  hash: string;
  parentHash: string;
  timestamp: number;
  /** Transaction hash → position in the block; only when asked for. */
  txIndex: Map<string, number> | null;
}

/** One transfer of a token, used to tell from its log whether the token is fungible. */
export interface TokenSample {
  token: string;
  blockNumber: number;
  logIndex: number;
  txHash: string;
  /** `file:line` of the row, for messages. */
  where: string;
}

/** Metadata of a fungible token, or null for a token whose Transfer logs carry no amount (ERC-721). */
export type TokenFacts = TokenMetadata | null;

export interface ImportNode {
  head(): Promise<number>;
  /** Headers of `numbers` (with the transaction list when `withTransactions`), by number. */
  blocks(numbers: readonly number[], withTransactions: boolean): Promise<Map<number, BlockFacts>>;
  /** For each sample: the token's metadata, or null when its Transfer logs are not ERC-20's. */
  tokens(samples: readonly TokenSample[]): Promise<TokenFacts[]>;
  /** Supplies of tokens at `block` (at `latest` where the node keeps no state that old). */
  supplies(addresses: readonly string[], block: number): Promise<TokenSupply[]>;
  /** `balanceOf(holder)` of one token for each holder at `block` (null where the call reverts). */
  balances(token: string, holders: readonly string[], block: number): Promise<(bigint | null)[]>;
}

export interface ImportNodeOptions {
  rpc: RpcClient;
  source: EvmSource;
  /** Attempts for a block the node does not have yet (a load balancer's lagging node). Default 3. */
  attempts?: number;
  /** Pause between those attempts. Default 1000 ms. */
  retryDelayMs?: number;
}

/** Raised when the node contradicts the export or lacks what the export names. */
export class NodeMismatchError extends UserError {
  override name = 'NodeMismatchError';
}

export function createImportNode(options: ImportNodeOptions): ImportNode {
  const { rpc, source } = options;
  const attempts = options.attempts ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 1000;

  async function blocksWithTransactions(numbers: readonly number[]): Promise<Map<number, BlockFacts>> {
    const out = new Map<number, BlockFacts>();
    let pending = [...numbers];
    for (let attempt = 1; pending.length > 0; attempt++) {
      const answers = await rpc.batch(
        pending.map((n) => ({ method: 'eth_getBlockByNumber', params: [toQuantity(n), false] })),
      );
      const missing: number[] = [];
      pending.forEach((n, i) => {
        const answer = answers[i]!;
        if ('error' in answer) {
          if (classifyRpcError(answer.error) === 'other') {
            throw new TokenqueryError(`eth_getBlockByNumber(${n}): ${answer.error.message}`);
          }
          missing.push(n);
          return;
        }
        if (answer.result === null) missing.push(n);
        else out.set(n, parseBlock(answer.result, n));
      });
      if (missing.length > 0 && attempt >= attempts) {
        throw new NodeMismatchError(
          `the node has no block ${missing[0]}${missing.length > 1 ? ` (and ${missing.length - 1} more)` : ''}: is it synced past the export, and on the same chain?`,
        );
      }
      if (missing.length > 0) await sleep(retryDelayMs);
      pending = missing;
    }
    return out;
  }

  async function headers(numbers: readonly number[]): Promise<Map<number, BlockFacts>> {
    const out = new Map<number, BlockFacts>();
    let list: EvmBlockHeader[];
    try {
      list = await source.getHeaders(numbers);
    } catch (error) {
      // The source retries blocks that are missing; past its attempts, they are not there.
      if (error instanceof InvalidRpcResponseError && /not available/.test(error.shortMessage)) {
        throw new NodeMismatchError(
          `the node lacks some of blocks ${Math.min(...numbers)}-${Math.max(...numbers)} (${error.shortMessage}): is it synced past the export, and on the same chain?`,
        );
      }
      throw error;
    }
    for (const h of list) out.set(h.number, { ...h, txIndex: null });
    return out;
  }

  async function tokens(samples: readonly TokenSample[]): Promise<TokenFacts[]> {
    if (samples.length === 0) return [];
    const answers = await rpc.batch(
      samples.map((s) => ({
        method: 'eth_getLogs',
        params: [
          {
            fromBlock: toQuantity(s.blockNumber),
            toBlock: toQuantity(s.blockNumber),
            address: s.token,
            topics: [TRANSFER_TOPIC],
          },
        ],
      })),
    );
    const fungible = samples.map((sample, i) => isFungible(sample, answers[i]!));
    const wanted = samples.filter((_, i) => fungible[i]).map((s) => s.token);
    const metadata = new Map((await source.readTokenMetadata(wanted)).map((m) => [m.address, m]));
    return samples.map((s, i) => (fungible[i] ? (metadata.get(s.token) ?? null) : null));
  }

  return {
    head: () => source.blockNumber(),
    blocks: (numbers, withTransactions) =>
      numbers.length === 0
        ? Promise.resolve(new Map())
        : withTransactions
          ? blocksWithTransactions(numbers)
          : headers(numbers),
    tokens,
    supplies: (addresses, block) => source.readSupplies(addresses, block),
    balances: (token, holders, block) => source.readBalances(token, holders, block),
  };
}

/**
 * Whether the log the sample names is an ERC-20 transfer (three topics, one data word) or not
 * (ERC-721: four topics, no data). ethereum-etl and BigQuery list both kinds as token transfers;
 * the export alone cannot tell them apart.
 */
function isFungible(sample: TokenSample, answer: RpcBatchItem): boolean {
  if ('error' in answer) {
    throw new TokenqueryError(`eth_getLogs for token ${sample.token}: ${answer.error.message}`);
  }
  if (!Array.isArray(answer.result)) throw new TokenqueryError('eth_getLogs: the result is not an array');
  for (const log of answer.result as unknown[]) {
    if (typeof log !== 'object' || log === null) continue;
    const { logIndex, topics, data, transactionHash, address } = log as Record<string, unknown>;
    if (typeof logIndex !== 'string' || Number.parseInt(logIndex, 16) !== sample.logIndex) continue;
    if (typeof address === 'string' && address.toLowerCase() !== sample.token) continue;
    if (typeof transactionHash !== 'string' || transactionHash.toLowerCase() !== sample.txHash) {
      throw new NodeMismatchError(
        `${sample.where}: the node's log ${sample.logIndex} of block ${sample.blockNumber} belongs to another transaction: is the node on the same chain as the export?`,
      );
    }
    if (!Array.isArray(topics) || typeof data !== 'string') {
      throw new TokenqueryError('eth_getLogs: a log without topics or data');
    }
    return topics.length === 3 && data.length === 66;
  }
  throw new NodeMismatchError(
    `${sample.where}: the node has no Transfer log ${sample.logIndex} of token ${sample.token} in block ${sample.blockNumber}: is it on the same chain as the export?`,
  );
}

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;

function parseBlock(raw: unknown, expected: number): BlockFacts {
  const fail = (what: string): never => {
    throw new TokenqueryError(`eth_getBlockByNumber(${expected}): ${what}`);
  };
  if (typeof raw !== 'object' || raw === null) return fail('the block is not an object');
  const { number, hash, parentHash, timestamp, transactions } = raw as Record<string, unknown>;
  if (typeof number !== 'string' || !QUANTITY.test(number) || Number(number) !== expected) {
    fail('the answer is another block');
  }
  if (typeof hash !== 'string' || !HASH.test(hash)) return fail('a malformed hash');
  if (typeof parentHash !== 'string' || !HASH.test(parentHash)) return fail('a malformed parent hash');
  if (typeof timestamp !== 'string' || !QUANTITY.test(timestamp)) return fail('a malformed timestamp');
  if (!Array.isArray(transactions)) return fail('no transaction list');
  const txIndex = new Map<string, number>();
  transactions.forEach((tx, i) => {
    const h = typeof tx === 'string' ? tx : (tx as { hash?: unknown } | null)?.hash;
    if (typeof h !== 'string' || !HASH.test(h)) fail('a malformed transaction hash');
    txIndex.set((h as string).toLowerCase(), i);
  });
  return {
    number: expected,
    hash: hash.toLowerCase(),
    parentHash: parentHash.toLowerCase(),
    timestamp: Number(timestamp),
    txIndex,
  };
}
