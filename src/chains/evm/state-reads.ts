/**
 * The EVM source's reads of contract state: token metadata, supplies, balances (one by one or
 * through Multicall3's `aggregate3`) and code, at `latest` or at a block, with what the errors of
 * a node that lacks the block or its state mean for each.
 */
import type { Logger } from '../../internal/logger.js';
import type { TokenMetadata } from '../../internal/records.js';
import { cleanTokenMetadata } from '../../internal/token-text.js';
import { classifyRpcError } from '../jsonrpc/error-classification.js';
import { InvalidRpcResponseError, RpcResponseError, StateUnavailableError } from '../jsonrpc/errors.js';
import type { createRetryInvalid } from '../jsonrpc/retry-invalid.js';
import type { RpcBatchCall, RpcBatchItem, RpcClient } from '../jsonrpc/rpc-client.js';
import {
  calldata,
  decodeAbiStringOrBytes32,
  decodeAddressWord,
  decodeAggregate3,
  decodeDecimals,
  decodeUint,
  encodeAggregate3,
  MULTICALL3_ADDRESS,
  toQuantity,
} from './abi.js';
import { assertBlockNumber, normalizeAddress } from './answer-parsing.js';
import type { BlockTag, EvmSource, HolderRef, TokenSupply } from './types.js';

const ZERO = '0x0000000000000000000000000000000000000000';
const DEAD = '0x000000000000000000000000000000000000dead';

/** The state-reading part of an {@link EvmSource}. */
export type EvmStateReads = Pick<
  EvmSource,
  | 'readTokenMetadata'
  | 'readSupplies'
  | 'readBalances'
  | 'hasCode'
  | 'readBalancesAt'
  | 'readOwners'
  | 'looksLikeTokens'
>;

/** The state reads over `rpc`, each attempt run by `retryInvalid` (the source's). */
export function createStateReads(deps: {
  rpc: RpcClient;
  logger: Logger;
  retryInvalid: ReturnType<typeof createRetryInvalid>;
}): EvmStateReads {
  const { rpc, logger, retryInvalid } = deps;

  async function readTokenMetadata(
    addresses: readonly string[],
    blockTag: BlockTag = 'latest',
  ): Promise<TokenMetadata[]> {
    const tokens = addresses.map(normalizeAddress);
    if (tokens.length === 0) return [];
    if (blockTag !== 'latest') assertBlockNumber(blockTag);
    const metadataCalls = (to: string, tag: BlockTag): RpcBatchCall[] => [
      ethCall(to, calldata.name(), tag),
      ethCall(to, calldata.symbol(), tag),
      ethCall(to, calldata.decimals(), tag),
    ];
    return retryInvalid('token metadata', async () => {
      const answers = await rpc.batch(tokens.flatMap((to) => metadataCalls(to, blockTag)));
      // As for supplies: a node that lacks the block (behind a load balancer) would read a token
      // created in the newest blocks as having no code, and its empty metadata would stay.
      if (blockTag !== 'latest' && answers.some(lacksBlock)) {
        throw new InvalidRpcResponseError(`eth_call at ${blockTag}: the node has not got this block yet`);
      }
      const perToken = tokens.map((_, t) => answers.slice(t * 3, t * 3 + 3));
      if (blockTag !== 'latest') {
        // A node without state at that height (pruned) is read at `latest`, where the token exists too.
        const stale = tokens.flatMap((_, t) => (perToken[t]!.some(isMissingState) ? [t] : []));
        if (stale.length > 0) {
          const retried = await rpc.batch(stale.flatMap((t) => metadataCalls(tokens[t]!, 'latest')));
          stale.forEach((t, k) => {
            perToken[t] = retried.slice(k * 3, k * 3 + 3);
          });
        }
      }
      return tokens.map((address, t) => {
        const result = (k: number) => callResult(perToken[t]![k]!, blockTag);
        // The contract chooses these: capped and cleaned before anything keeps them.
        return cleanTokenMetadata({
          address,
          name: decodeAbiStringOrBytes32(result(0) ?? '0x'),
          symbol: decodeAbiStringOrBytes32(result(1) ?? '0x'),
          decimals: decodeDecimals(result(2)),
        });
      });
    });
  }

  async function readSupplies(addresses: readonly string[], blockTag: BlockTag): Promise<TokenSupply[]> {
    const tokens = addresses.map(normalizeAddress);
    if (tokens.length === 0) return [];
    if (blockTag !== 'latest') assertBlockNumber(blockTag);
    const supplyCalls = (to: string, tag: BlockTag): RpcBatchCall[] => [
      ethCall(to, calldata.totalSupply(), tag),
      ethCall(to, calldata.cap(), tag),
      ethCall(to, calldata.balanceOf(ZERO), tag),
      ethCall(to, calldata.balanceOf(DEAD), tag),
    ];
    return retryInvalid('token supplies', async () => {
      const answers = await rpc.batch(tokens.flatMap((to) => supplyCalls(to, blockTag)));
      const perToken = tokens.map((_, t) => answers.slice(t * 4, t * 4 + 4));
      if (blockTag !== 'latest' && answers.some(lacksBlock)) {
        // This node has not got the block yet (it lags behind a load balancer): its `latest` is
        // older than the block, and recorded as read at the block it would hide the newest mints
        // and burns (seen under fault injection). Ask again, as for any answer not there yet.
        throw new InvalidRpcResponseError(`eth_call at ${blockTag}: the node has not got this block yet`);
      }
      if (blockTag !== 'latest') {
        // A node without state at that height (pruned, or behind) answers "missing trie node",
        // "header not found"...: read those tokens at `latest`, all four values together so
        // that supply and burned balance come from one block.
        const stale = tokens.flatMap((_, t) => (perToken[t]!.some(isMissingState) ? [t] : []));
        if (stale.length > 0) {
          logger.debug({ blockTag, tokens: stale.length }, 'no state at block, reading supplies at latest');
          const retried = await rpc.batch(stale.flatMap((t) => supplyCalls(tokens[t]!, 'latest')));
          stale.forEach((t, k) => {
            perToken[t] = retried.slice(k * 4, k * 4 + 4);
          });
        }
      }
      return tokens.map((address, t) => {
        const [total, cap, zero, dead] = perToken[t]!.map((answer) => {
          const hex = callResult(answer, blockTag);
          return hex === null ? null : decodeUint(hex);
        });
        return {
          address,
          totalSupply: total ?? null,
          cap: cap ?? null,
          burnedBalance: (zero ?? 0n) + (dead ?? 0n),
        };
      });
    });
  }

  async function readBalances(
    token: string,
    holders: readonly string[],
    blockTag: BlockTag,
  ): Promise<(bigint | null)[]> {
    if (holders.length === 0) return [];
    const to = normalizeAddress(token);
    return retryInvalid('balanceOf', async () => {
      const answers = await rpc.batch(
        holders.map((holder) => ethCall(to, calldata.balanceOf(normalizeAddress(holder)), blockTag)),
      );
      return answers.map((answer) => {
        const hex = callResult(answer, blockTag);
        return hex === null ? null : decodeUint(hex);
      });
    });
  }

  async function hasCode(addresses: readonly string[], block: number): Promise<boolean[]> {
    assertBlockNumber(block);
    const targets = addresses.map(normalizeAddress);
    if (targets.length === 0) return [];
    return retryInvalid('eth_getCode', async () => {
      const answers = await rpc.batch(
        targets.map((address) => ({ method: 'eth_getCode', params: [address, toQuantity(block)] })),
      );
      return answers.map((answer) => {
        if ('error' in answer) {
          const error = atBlockError('eth_getCode', answer.error, block);
          throw error ?? new RpcResponseError('eth_getCode', answer.error);
        }
        if (typeof answer.result !== 'string' || !/^0x(?:[0-9a-fA-F]{2})*$/.test(answer.result)) {
          throw new InvalidRpcResponseError('eth_getCode result is not hex');
        }
        return answer.result.length > 2;
      });
    });
  }

  async function readBalancesAt(
    pairs: readonly HolderRef[],
    block: number,
    options: { multicall: boolean },
  ): Promise<(bigint | null)[]> {
    assertBlockNumber(block);
    const calls = pairs.map((pair) => ({
      target: normalizeAddress(pair.token),
      data: calldata.balanceOf(normalizeAddress(pair.holder)),
    }));
    if (calls.length === 0) return [];
    return retryInvalid('balanceOf at block', async () => {
      const out = new Array<bigint | null>(calls.length).fill(null);
      let single: number[] = [];
      if (options.multicall) {
        const chunks: number[][] = [];
        for (let start = 0; start < calls.length; start += MULTICALL_CHUNK) {
          chunks.push(calls.slice(start, start + MULTICALL_CHUNK).map((_, k) => start + k));
        }
        // One aggregate3 per request: each carries ~100 kB of calldata, and nodes cap request
        // bodies (anvil refuses a batch of ten of them, about 2 MB).
        const answers = new Array<RpcBatchItem>(chunks.length);
        let nextChunk = 0;
        const worker = async (): Promise<void> => {
          while (nextChunk < chunks.length) {
            const c = nextChunk++;
            const data = encodeAggregate3(chunks[c]!.map((i) => calls[i]!));
            [answers[c]] = (await rpc.batch([ethCall(MULTICALL3_ADDRESS, data, block)])) as [RpcBatchItem];
          }
        };
        await Promise.all(Array.from({ length: Math.min(MULTICALL_CONCURRENCY, chunks.length) }, worker));
        chunks.forEach((chunk, c) => {
          const answer = answers[c]!;
          if ('error' in answer) {
            const error = atBlockError('eth_call', answer.error, block);
            if (error !== null) throw error;
          }
          const results =
            'error' in answer || typeof answer.result !== 'string'
              ? null
              : decodeAggregate3(answer.result, chunk.length);
          if (results === null) {
            // The whole call failed (out of gas under a low gas cap, say): ask these one by one.
            logger.debug({ block, calls: chunk.length }, 'aggregate3 failed; reading balances one by one');
            single.push(...chunk);
            return;
          }
          results.forEach((result, k) => {
            out[chunk[k]!] = result.success ? decodeUint(result.data) : null;
          });
        });
      } else {
        single = calls.map((_, i) => i);
      }
      if (single.length > 0) {
        const answers = await rpc.batch(single.map((i) => ethCall(calls[i]!.target, calls[i]!.data, block)));
        single.forEach((i, k) => {
          const answer = answers[k]!;
          if ('error' in answer) {
            const error = atBlockError('eth_call', answer.error, block);
            if (error !== null) throw error;
            return; // reverts: no balance to read
          }
          if (typeof answer.result !== 'string')
            throw new InvalidRpcResponseError('eth_call result is not a string');
          out[i] = decodeUint(answer.result);
        });
      }
      return out;
    });
  }

  /**
   * One `eth_call` per entry of `calls` at its block, in one batch; where the node has no state at
   * a block, those calls again at `latest`. The hex results (null: the call failed, a revert).
   */
  async function callsAtBlocks(
    what: string,
    calls: readonly { to: string; data: string; block: number }[],
  ): Promise<(string | null)[]> {
    if (calls.length === 0) return [];
    for (const call of calls) assertBlockNumber(call.block);
    return retryInvalid(what, async () => {
      const answers = await rpc.batch(calls.map((c) => ethCall(normalizeAddress(c.to), c.data, c.block)));
      // As for supplies: a node behind a load balancer lacks the block; ask again.
      if (answers.some(lacksBlock))
        throw new InvalidRpcResponseError(`${what}: the node has not got the block yet`);
      const stale = calls.flatMap((_, i) => (isMissingState(answers[i]!) ? [i] : []));
      if (stale.length > 0) {
        logger.debug({ calls: stale.length }, `no state at block, reading ${what} at latest`);
        const retried = await rpc.batch(
          stale.map((i) => ethCall(normalizeAddress(calls[i]!.to), calls[i]!.data, 'latest')),
        );
        stale.forEach((i, k) => {
          answers[i] = retried[k]!;
        });
      }
      return answers.map((answer, i) => callResult(answer, calls[i]!.block));
    });
  }

  async function readOwners(
    contracts: readonly { contract: string; block: number }[],
  ): Promise<(string | null)[]> {
    const results = await callsAtBlocks(
      'owner()',
      contracts.map(({ contract, block }) => ({ to: contract, data: calldata.owner(), block })),
    );
    return results.map((hex) => (hex === null ? null : decodeAddressWord(hex)));
  }

  async function looksLikeTokens(contracts: readonly string[], block: number): Promise<boolean[]> {
    const probes = [calldata.totalSupply(), calldata.decimals(), calldata.balanceOf(ZERO)];
    const results = await callsAtBlocks(
      'token probe',
      contracts.flatMap((to) => probes.map((data) => ({ to, data, block }))),
    );
    return contracts.map((_, c) =>
      results
        .slice(c * probes.length, (c + 1) * probes.length)
        .every((hex) => hex !== null && decodeUint(hex) !== null),
    );
  }

  return {
    readTokenMetadata,
    readSupplies,
    readBalances,
    hasCode,
    readBalancesAt,
    readOwners,
    looksLikeTokens,
  };
}

/** Calls per `aggregate3`: 500 `balanceOf` take about 3.5M gas, far below the usual `eth_call` gas caps. */
export const MULTICALL_CHUNK = 500;
/** `aggregate3` requests in flight at once. */
const MULTICALL_CONCURRENCY = 4;

/**
 * What an error answered for a read at an old `block` means: the node has not got the block yet
 * (retry), has no state there any more (StateUnavailableError), a transient fault (retry); null
 * for anything else (a revert, for example), which the caller decides about.
 */
function atBlockError(
  method: string,
  error: { code: number; message: string },
  block: number,
): InvalidRpcResponseError | null {
  const kind = classifyRpcError(error);
  if (kind === 'transient') return new InvalidRpcResponseError(`${method} at ${block}: ${error.message}`);
  if (kind !== 'missing-state') return null;
  const range = BLOCK_OUT_OF_RANGE.exec(error.message);
  if (
    (range !== null && Number(range[2]) > Number(range[1])) ||
    /beyond (the )?current head/i.test(error.message)
  ) {
    return new InvalidRpcResponseError(`${method} at ${block}: the node has not got this block yet`);
  }
  return new StateUnavailableError(`${method} at ${block}: the node has no state there (${error.message})`);
}

function ethCall(to: string, data: string, tag: BlockTag): RpcBatchCall {
  return { method: 'eth_call', params: [{ to, data }, tag === 'latest' ? 'latest' : toQuantity(tag)] };
}

/** The node does not know the block at all (as opposed to knowing it but having pruned its state). */
const LACKS_BLOCK =
  /header not found|unknown block|block not found|BlockOutOfRange|beyond (the )?current head/i;

/** anvil, both when it has not got block R yet and when it keeps no state for R (`--prune-history`). */
const BLOCK_OUT_OF_RANGE = /block height is (\d+) but requested was (\d+)/i;

function lacksBlock(answer: RpcBatchItem): boolean {
  if (!('error' in answer)) return false;
  const range = BLOCK_OUT_OF_RANGE.exec(answer.error.message);
  if (range !== null) return Number(range[2]) > Number(range[1]);
  return LACKS_BLOCK.test(answer.error.message);
}

function isMissingState(answer: RpcBatchItem): boolean {
  return 'error' in answer && classifyRpcError(answer.error) === 'missing-state';
}

/**
 * The hex result of an `eth_call`, or null when the call failed in a way that means "this
 * token has no such function" (revert, invalid opcode, any other error). A node that has no
 * state, or a result that is not a string, is an invalid answer worth another attempt.
 */
function callResult(answer: RpcBatchItem, tag: BlockTag): string | null {
  if ('error' in answer) {
    const kind = classifyRpcError(answer.error);
    if (kind === 'missing-state' || kind === 'transient') {
      throw new InvalidRpcResponseError(`eth_call at ${String(tag)}: ${answer.error.message}`);
    }
    return null;
  }
  if (typeof answer.result !== 'string') throw new InvalidRpcResponseError('eth_call result is not a string');
  return answer.result;
}
