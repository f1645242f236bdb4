import type { Logger } from '../../internal/logger.js';
import { cleanTokenText, MAX_TOKEN_NAME_CHARS, MAX_TOKEN_SYMBOL_CHARS } from '../../internal/token-text.js';
import { createRetryInvalid } from '../jsonrpc/retry-invalid.js';
import type { RpcBatchItem, RpcClient } from '../jsonrpc/rpc-client.js';
import { decodeBlock, invocationTxids, type ParsedBlock, parseBlock, parseRawTransaction } from './block.js';
import { invalid, NeoApplicationLogMissingError, NeoMissingOutputError, RpcResponseError } from './errors.js';
import { type NeoApplicationLog, parseApplicationLog } from './nep5.js';
import {
  InvalidStackItemError,
  type NeoInvokeResult,
  parseInvokeResult,
  stackItemToBigInt,
  stackItemToText,
} from './stack.js';
import { parseAssetState, parseContractState } from './states.js';
import type {
  NeoAssetState,
  NeoBlock,
  NeoContractParam,
  NeoContractState,
  NeoCreatedOutput,
  NeoOutputRef,
  NeoRawTransaction,
  NeoSource,
  Nep5Metadata,
} from './types.js';
import { outputKey } from './utxo.js';
import { hash160, hash256, uint } from './validate.js';

/** Options of {@link createNeoSource}. */
export interface NeoSourceOptions {
  rpc: RpcClient;
  logger: Logger;
  /** Blocks asked for in one JSON-RPC batch by `getBlocks`. Default 20 (verbose blocks are large). */
  blocksPerBatch?: number;
  /** Block batches of one `getBlocks` call in flight at once (logs of one overlap blocks of the next). Default 3. */
  concurrency?: number;
  /** Attempts for answers that are malformed or not there yet, before the error reaches the caller. Default 4. */
  invalidAttempts?: number;
  /** First backoff ceiling between those attempts (doubles, full jitter). Default 250 ms. */
  invalidRetryBaseMs?: number;
}

/** neo-cli's code for "unknown block / transaction / contract / asset". */
const UNKNOWN = -100;

/** Creates the source; see {@link NeoSource}. */
export function createNeoSource(options: NeoSourceOptions): NeoSource {
  const { rpc, logger } = options;
  const blocksPerBatch = Math.max(1, options.blocksPerBatch ?? 20);
  const concurrency = Math.max(1, options.concurrency ?? 3);
  const retryInvalid = createRetryInvalid({
    logger,
    attempts: options.invalidAttempts ?? 4,
    baseMs: options.invalidRetryBaseMs ?? 250,
  });

  /** One call whose "unknown …" answer (-100) means "there is none": null instead of an error. */
  async function requestOrNull(method: string, params: unknown[]): Promise<unknown> {
    try {
      return await rpc.request<unknown>(method, params);
    } catch (error) {
      if (error instanceof RpcResponseError && isUnknown(error.code, error.rpcMessage)) return null;
      throw error;
    }
  }

  async function getBlockCount(): Promise<number> {
    return retryInvalid('getblockcount', async () => {
      const count = uint(await rpc.request<unknown>('getblockcount', []), 'getblockcount result');
      if (count < 1) throw invalid('getblockcount result is 0: a chain has at least its genesis block');
      return count;
    });
  }

  /** Verbose blocks `numbers`, validated, in order. */
  async function fetchBlocks(numbers: readonly number[]): Promise<ParsedBlock[]> {
    const answers = await rpc.batch(numbers.map((n) => ({ method: 'getblock', params: [n, 1] })));
    return numbers.map((n, i) => {
      const answer = answers[i]!;
      if ('error' in answer) {
        // "Unknown block": this node (or the one behind a load balancer) is not there yet.
        if (isUnknown(answer.error.code, answer.error.message))
          throw invalid(`getblock ${n}: block not available yet`);
        throw new RpcResponseError('getblock', answer.error);
      }
      if (answer.result === null) throw invalid(`getblock ${n}: block not available yet`);
      return parseBlock(answer.result, n);
    });
  }

  /** Application logs of `txids`, validated, keyed by txid. */
  async function fetchLogs(txids: readonly string[]): Promise<Map<string, NeoApplicationLog>> {
    const logs = new Map<string, NeoApplicationLog>();
    if (txids.length === 0) return logs;
    const answers = await rpc.batch(
      txids.map((txid) => ({ method: 'getapplicationlog', params: [bare(txid)] })),
    );
    txids.forEach((txid, i) => {
      const answer = answers[i]!;
      if ('error' in answer) {
        const { code, message } = answer.error;
        // -100 "Unknown transaction": no log; -32601: the plugin is not installed at all.
        if (isUnknown(code, message) || code === -32601)
          throw new NeoApplicationLogMissingError(txid, message);
        throw new RpcResponseError('getapplicationlog', answer.error);
      }
      if (answer.result === null) throw new NeoApplicationLogMissingError(txid, 'null answer');
      logs.set(txid, parseApplicationLog(answer.result, txid));
    });
    return logs;
  }

  async function fetchDecoded(numbers: readonly number[]): Promise<NeoBlock[]> {
    return retryInvalid(`getblock ${numbers[0]}-${numbers[numbers.length - 1]}`, async () => {
      const parsed = await fetchBlocks(numbers);
      const logs = await fetchLogs(parsed.flatMap(invocationTxids));
      return parsed.map((block) => {
        const { block: decoded, warnings } = decodeBlock(block, logs);
        for (const warning of warnings) logger.warn({ block: block.index }, warning);
        return decoded;
      });
    });
  }

  async function getBlocks(from: number, to: number): Promise<NeoBlock[]> {
    assertHeight(from);
    assertHeight(to);
    if (to < from) throw new RangeError(`getBlocks: to (${to}) is below from (${from})`);
    const chunks: number[][] = [];
    for (let start = from; start <= to; start += blocksPerBatch) {
      const chunk: number[] = [];
      for (let n = start; n <= Math.min(to, start + blocksPerBatch - 1); n++) chunk.push(n);
      chunks.push(chunk);
    }
    const results = new Array<NeoBlock[]>(chunks.length);
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const k = next++;
        results[k] = await fetchDecoded(chunks[k]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, chunks.length) }, worker));
    const blocks = results.flat();
    // dBFT has one-block finality, so a broken link is a wrong answer, not a reorg.
    for (let i = 1; i < blocks.length; i++) {
      if (blocks[i]!.previousHash !== blocks[i - 1]!.hash) {
        throw invalid(
          `getblock ${blocks[i]!.index}: previousblockhash does not match block ${blocks[i - 1]!.index}`,
        );
      }
    }
    return blocks;
  }

  async function getContractState(hash: string): Promise<NeoContractState | null> {
    const id = normalizeHash160(hash);
    return retryInvalid('getcontractstate', async () => {
      const raw = await requestOrNull('getcontractstate', [id]);
      return raw === null ? null : parseContractState(raw, id);
    });
  }

  async function getAssetState(assetId: string): Promise<NeoAssetState | null> {
    const id = normalizeHash256(assetId);
    return retryInvalid('getassetstate', async () => {
      const raw = await requestOrNull('getassetstate', [id]);
      return raw === null ? null : parseAssetState(raw, id);
    });
  }

  async function invokeFunction(
    hash: string,
    method: string,
    params: readonly NeoContractParam[] = [],
  ): Promise<NeoInvokeResult> {
    const id = normalizeHash160(hash);
    return retryInvalid('invokefunction', async () =>
      invokeResult(
        await rpc.request<unknown>('invokefunction', [bare(id), method, params]),
        `invokefunction ${id} ${method}`,
      ),
    );
  }

  async function readNep5Metadata(hashes: readonly string[]): Promise<Nep5Metadata[]> {
    const ids = hashes.map(normalizeHash160);
    if (ids.length === 0) return [];
    const methods = ['name', 'symbol', 'decimals', 'totalSupply'] as const;
    return retryInvalid('nep5 metadata', async () => {
      const answers = await rpc.batch(
        ids.flatMap((id) =>
          methods.map((method) => ({ method: 'invokefunction', params: [bare(id), method, []] })),
        ),
      );
      return ids.map((hash, t) => {
        const top = (k: number) => topOfStack(answers[t * 4 + k]!, `invokefunction ${hash} ${methods[k]}`);
        const name = top(0);
        const symbol = top(1);
        const decimals = top(2);
        const supply = top(3);
        const decimalsValue = decimals === undefined ? undefined : stackItemToBigInt(decimals);
        const supplyValue = supply === undefined ? undefined : stackItemToBigInt(supply);
        return {
          hash,
          // The contract chooses these: capped and cleaned before anything keeps them.
          name: cleanTokenText((name && stackItemToText(name)) ?? '', MAX_TOKEN_NAME_CHARS),
          symbol: cleanTokenText((symbol && stackItemToText(symbol)) ?? '', MAX_TOKEN_SYMBOL_CHARS),
          decimals:
            decimalsValue !== undefined && decimalsValue >= 0n && decimalsValue <= 255n
              ? Number(decimalsValue)
              : 0,
          totalSupply: supplyValue !== undefined && supplyValue >= 0n ? supplyValue : null,
        };
      });
    });
  }

  async function getRawTransaction(txid: string): Promise<NeoRawTransaction | null> {
    const id = normalizeHash256(txid);
    return retryInvalid('getrawtransaction', async () => {
      const raw = await requestOrNull('getrawtransaction', [bare(id), 1]);
      return raw === null ? null : parseRawTransaction(raw, id);
    });
  }

  async function resolveOutputs(refs: readonly NeoOutputRef[]): Promise<Map<string, NeoCreatedOutput>> {
    const txids = [...new Set(refs.map((ref) => normalizeHash256(ref.txid)))];
    const resolved = new Map<string, NeoCreatedOutput>();
    if (txids.length === 0) return resolved;
    const transactions = await retryInvalid('getrawtransaction (inputs)', async () => {
      const answers = await rpc.batch(
        txids.map((txid) => ({ method: 'getrawtransaction', params: [bare(txid), 1] })),
      );
      return new Map(
        txids.map((txid, i) => {
          const answer = answers[i]!;
          if ('error' in answer) {
            if (isUnknown(answer.error.code, answer.error.message)) return [txid, null] as const;
            throw new RpcResponseError('getrawtransaction', answer.error);
          }
          return [txid, answer.result === null ? null : parseRawTransaction(answer.result, txid)] as const;
        }),
      );
    });
    for (const ref of refs) {
      const txid = normalizeHash256(ref.txid);
      const tx = transactions.get(txid);
      if (tx === null || tx === undefined)
        throw new NeoMissingOutputError(ref, 'the node knows no such transaction');
      const output = tx.outputs[ref.n];
      if (output === undefined)
        throw new NeoMissingOutputError(ref, `the transaction has ${tx.outputs.length} outputs`);
      resolved.set(outputKey({ txid, n: ref.n }), { ...output, txid });
    }
    return resolved;
  }

  return {
    getBlockCount,
    getBlocks,
    getContractState,
    getAssetState,
    invokeFunction,
    readNep5Metadata,
    getRawTransaction,
    resolveOutputs,
  };
}

/** An invoke result, or InvalidRpcResponseError. */
function invokeResult(raw: unknown, what: string): NeoInvokeResult {
  try {
    return parseInvokeResult(raw, what);
  } catch (error) {
    if (error instanceof InvalidStackItemError) throw invalid(error.message);
    throw error;
  }
}

/**
 * The top of the stack of a metadata call, or undefined when the token has no such method:
 * the VM FAULTed, the stack is empty, or the node refused the call.
 */
function topOfStack(answer: RpcBatchItem, what: string) {
  if ('error' in answer) return undefined;
  const result = invokeResult(answer.result, what);
  if (result.faulted) return undefined;
  return result.stack[result.stack.length - 1];
}

function isUnknown(code: number, message: string): boolean {
  return code === UNKNOWN || /^unknown (block|transaction|contract|asset)/i.test(message);
}

function bare(hash: string): string {
  return hash.slice(2);
}

/** A contract hash from a caller, with or without `0x`, any case → `0x` lower-case. */
function normalizeHash160(hash: string): string {
  if (!/^(0x)?[0-9a-fA-F]{40}$/.test(hash)) throw new TypeError(`not a NEO contract hash: ${hash}`);
  return hash160(hash, 'hash');
}

/** A transaction or asset id from a caller → `0x` lower-case. */
function normalizeHash256(hash: string): string {
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(hash)) throw new TypeError(`not a NEO transaction or asset id: ${hash}`);
  return hash256(hash, 'hash');
}

function assertHeight(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a block height: ${n}`);
}
