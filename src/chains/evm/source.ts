/**
 * The EVM source: the chain reads the indexer needs (heads, headers, Transfer logs, contract
 * state) over one JSON-RPC endpoint, each answer validated before it is returned. The log and
 * header reads are here; `state-reads.ts` has the contract-state reads, `answer-parsing.ts` the
 * validation of answers.
 */
import type { Logger } from '../../internal/logger.js';
import { classifyRpcError } from '../jsonrpc/error-classification.js';
import { InvalidRpcResponseError, RangeTooLargeError, RpcResponseError } from '../jsonrpc/errors.js';
import { createRetryInvalid } from '../jsonrpc/retry-invalid.js';
import { type RpcClient, ScannedAnswer } from '../jsonrpc/rpc-client.js';
import { INDEXED_TOPICS, toQuantity } from './abi.js';
import {
  assertBlockNumber,
  parseHeader,
  parseLogs,
  parseQuantity,
  transfersOfLogsAnswer,
} from './answer-parsing.js';
import { type ScannedTransfers, scanTransferLogs } from './log-scanner.js';
import { createStateReads } from './state-reads.js';
import type { EvmBlockHeader, EvmLog, EvmSource } from './types.js';

/** Options of {@link createEvmSource}. */
export interface EvmSourceOptions {
  rpc: RpcClient;
  logger: Logger;
  /**
   * Attempts for answers that are malformed or not there yet (a `null` block from a node
   * that is behind) before `InvalidRpcResponseError` reaches the caller. Default 4.
   */
  invalidAttempts?: number;
  /** First backoff ceiling between those attempts (doubles, full jitter). Default 250 ms. */
  invalidRetryBaseMs?: number;
}

/**
 * The EVM source over one JSON-RPC endpoint. Every answer is validated here, at the edge:
 * malformed or inconsistent data never reaches the indexer, it becomes a retryable
 * `InvalidRpcResponseError` instead.
 */
export function createEvmSource(options: EvmSourceOptions): EvmSource {
  const { rpc, logger } = options;
  const retryInvalid = createRetryInvalid({
    logger,
    attempts: options.invalidAttempts ?? 4,
    baseMs: options.invalidRetryBaseMs ?? 250,
  });

  async function chainId(): Promise<number> {
    return retryInvalid('eth_chainId', async () =>
      parseQuantity(await rpc.request<unknown>('eth_chainId', []), 'eth_chainId result'),
    );
  }

  async function blockNumber(): Promise<number> {
    return retryInvalid('eth_blockNumber', async () =>
      parseQuantity(await rpc.request<unknown>('eth_blockNumber', []), 'eth_blockNumber result'),
    );
  }

  async function getTransferLogs(from: number, to: number): Promise<EvmLog[]> {
    assertBlockNumber(from);
    assertBlockNumber(to);
    if (to < from) throw new RangeError(`getTransferLogs: to (${to}) is below from (${from})`);
    return retryInvalid('eth_getLogs', async () => {
      const raw = await rpc.request<unknown>('eth_getLogs', [
        { fromBlock: toQuantity(from), toBlock: toQuantity(to), topics: [INDEXED_TOPICS] },
      ]);
      return parseLogs(raw, from, to);
    });
  }

  async function getTransfers(from: number, to: number): Promise<ScannedTransfers> {
    assertBlockNumber(from);
    assertBlockNumber(to);
    if (to < from) throw new RangeError(`getTransfers: to (${to}) is below from (${from})`);
    return retryInvalid('eth_getLogs', async () => {
      const answer = await rpc.request<unknown>(
        'eth_getLogs',
        [{ fromBlock: toQuantity(from), toBlock: toQuantity(to), topics: [INDEXED_TOPICS] }],
        (bytes, id) => scanTransferLogs(bytes, id, from, to),
      );
      if (answer instanceof ScannedAnswer) return answer.value as ScannedTransfers;
      return transfersOfLogsAnswer(answer, from, to);
    });
  }

  async function getTransferLogsOfBlocks(
    blocks: readonly { number: number; hash: string }[],
  ): Promise<EvmLog[]> {
    for (const block of blocks) assertBlockNumber(block.number);
    if (blocks.length === 0) return [];
    return retryInvalid('eth_getLogs by block hash', async () => {
      const answers = await rpc.batch(
        blocks.map((block) => ({
          method: 'eth_getLogs',
          params: [{ blockHash: block.hash, topics: [INDEXED_TOPICS] }],
        })),
      );
      const logs: EvmLog[] = [];
      blocks.forEach((block, i) => {
        const answer = answers[i]!;
        if ('error' in answer) {
          const kind = classifyRpcError(answer.error);
          if (kind === 'range') throw new RangeTooLargeError('eth_getLogs', answer.error, undefined);
          if (kind === 'other') throw new RpcResponseError('eth_getLogs', answer.error);
          // "unknown block", "header not found": this node (behind a load balancer) has not got it yet.
          throw new InvalidRpcResponseError(
            `eth_getLogs: block ${block.number} not available: ${answer.error.message}`,
          );
        }
        for (const log of parseLogs(answer.result, block.number, block.number)) {
          if (log.blockHash !== block.hash)
            throw new InvalidRpcResponseError(
              `eth_getLogs: a log of block ${block.number} names another block hash`,
            );
          logs.push(log);
        }
      });
      return logs;
    });
  }

  async function getHeaders(numbers: readonly number[]): Promise<EvmBlockHeader[]> {
    numbers.forEach(assertBlockNumber);
    const out = new Array<EvmBlockHeader | undefined>(numbers.length);
    return retryInvalid('eth_getBlockByNumber', async () => {
      // Only the blocks still missing are asked again on a retry.
      const pending = numbers.flatMap((_, i) => (out[i] === undefined ? [i] : []));
      const answers = await rpc.batch(
        pending.map((i) => ({ method: 'eth_getBlockByNumber', params: [toQuantity(numbers[i]!), false] })),
      );
      let missing = 0;
      pending.forEach((i, k) => {
        const answer = answers[k]!;
        const number = numbers[i]!;
        if ('error' in answer) {
          const kind = classifyRpcError(answer.error);
          if (kind === 'other' || kind === 'range')
            throw new RpcResponseError('eth_getBlockByNumber', answer.error);
          missing++;
          return;
        }
        if (answer.result === null) {
          missing++; // the node (or the one behind the load balancer) has not got this block yet
          return;
        }
        out[i] = parseHeader(answer.result, number);
      });
      if (missing > 0) {
        throw new InvalidRpcResponseError(
          `eth_getBlockByNumber: ${missing} of ${pending.length} blocks not available`,
        );
      }
      return out as EvmBlockHeader[];
    });
  }

  return {
    chainId,
    blockNumber,
    getTransferLogs,
    getTransfers,
    getTransferLogsOfBlocks,
    getHeaders,
    ...createStateReads({ rpc, logger, retryInvalid }),
  };
}
