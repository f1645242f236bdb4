/**
 * Following the head of an EVM chain inside the unfinalized window: block by block (by hash, so
 * a lagging node cannot hide logs), waking on websocket heads when given, detecting reorgs by
 * parent hash and rolling back exactly to the common ancestor. The backfill below the window is
 * evm-backfill.ts's.
 */

import { decodeBalanceEventLog, decodeTransferLog, TRANSFER_TOPIC } from '../chains/evm/abi.js';
import type { HeadNotifier } from '../chains/evm/new-heads.js';
import type { BalanceEvent, EvmLog, EvmSource } from '../chains/evm/types.js';
import { RangeTooLargeError } from '../chains/jsonrpc/rpc-client.js';
import type { ChainConfig } from '../config/types.js';
import { sleep } from '../internal/async.js';
import { FatalIndexerError } from '../internal/errors.js';
import type { Logger } from '../internal/logger.js';
import type { StoreWriter, TransferRecord } from '../store/types.js';
import {
  type EvmCommit,
  type EvmPosition,
  type EvmTokensAndSeeds,
  InconsistentChainError,
  type Refusals,
} from './evm-batch.js';
import type { SupplyRefresh } from './supply-refresh.js';

/** How the head is followed (see EvmIndexerOptions, which extends it). */
export interface EvmRealtimeTuning {
  /** Blocks handled per step while following the head inside the unfinalized window. Default 100. */
  followChunk?: number;
  /**
   * New-head announcements (a websocket subscription): once caught up, the indexer waits for the
   * next block on them, and polls every `chain.pollIntervalMs` all the same in case they stop.
   * Default none: polling only.
   */
  heads?: HeadNotifier;
}

export interface EvmRealtimeOptions extends EvmRealtimeTuning {
  chain: ChainConfig;
  source: EvmSource;
  store: StoreWriter;
  logger: Logger;
  signal: AbortSignal;
  position: EvmPosition;
  commit: EvmCommit;
  tokensAndSeeds: EvmTokensAndSeeds;
  refusals: Refusals;
  /** Held while a rollback runs, kicked after it. */
  supply: SupplyRefresh;
  /** Tokens a rollback removed from the store. */
  forgetTokens(tokens: Iterable<string>): void;
}

export interface EvmRealtime {
  /** The head a step polled. */
  polled(head: number): void;
  /** Indexes from `position.next` toward `head` (at most `followChunk` blocks), or handles the reorg found instead. */
  follow(head: number): Promise<void>;
  /** Caught up: make sure the tip we hold is still on the node's chain (a reorg need not grow the chain). */
  checkTip(head: number): Promise<void>;
  /** Caught up: waits for the next head (announced, or the poll interval). */
  waitForHead(): Promise<void>;
}

export function createEvmRealtime(options: EvmRealtimeOptions): EvmRealtime {
  const {
    chain,
    source,
    store,
    logger,
    signal,
    position,
    commit,
    tokensAndSeeds,
    refusals,
    supply,
    forgetTokens,
  } = options;
  const name = chain.name;
  const followChunk = options.followChunk ?? 100;
  /** Blocks per step while following; halves when the provider refuses a span. */
  let followSpan = followChunk;
  /** The head the last step polled. */
  let headPolled = 0;

  function decode(
    logs: EvmLog[],
    times: Map<number, number>,
  ): { transfers: TransferRecord[]; events: BalanceEvent[] } {
    const transfers: TransferRecord[] = [];
    const events: BalanceEvent[] = [];
    for (const log of logs) {
      if (log.topics[0] !== TRANSFER_TOPIC) {
        const event = decodeBalanceEventLog(log);
        if (event) events.push(event);
        continue;
      }
      const time = log.blockTimestamp ?? times.get(log.blockNumber);
      if (time === undefined) throw new InconsistentChainError(`no timestamp for block ${log.blockNumber}`);
      const transfer = decodeTransferLog(log, time);
      if (transfer) transfers.push(transfer);
    }
    return { transfers, events };
  }

  async function follow(head: number): Promise<void> {
    const to = Math.min(head, position.next + followSpan - 1);
    const numbers: number[] = [];
    for (let n = position.next; n <= to; n++) numbers.push(n);
    const headers = await source.getHeaders(numbers);
    // The first block ever indexed has no known parent. Backfill batches record their last block's
    // hash; a checkpoint written without one (by an older tokenquery) is final, so its hash is read
    // from the node.
    const parentHash = position.tipHash ?? (position.hasCheckpoint ? await hashOf(position.next - 1) : null);
    const first = headers[0];
    if (!first) return;
    if (parentHash !== null && first.parentHash !== parentHash) {
      await handleReorg();
      return;
    }
    for (let i = 1; i < headers.length; i++) {
      if (headers[i]?.parentHash !== headers[i - 1]?.hash) {
        throw new InconsistentChainError(`blocks ${position.next}..${to} changed while being read`);
      }
    }
    const byNumber = new Map(headers.map((h) => [h.number, h]));
    let logs: EvmLog[];
    try {
      // By block hash, not by range: a node behind a load balancer answers a range past its own
      // head with the blocks it has and no error (reth, anvil), and the newest transfers would be
      // lost without a trace (seen under fault injection); asked for a block hash it lacks, it errs.
      logs = await source.getTransferLogsOfBlocks(headers);
    } catch (error) {
      if (!(error instanceof RangeTooLargeError)) throw error;
      const span = to - position.next + 1;
      if (span === 1) throw refusals.refusedAlone(position.next, error);
      followSpan = Math.max(1, Math.floor(span / 2));
      return;
    }
    for (const log of logs) {
      if (byNumber.get(log.blockNumber)?.hash !== log.blockHash) {
        throw new InconsistentChainError(`logs of block ${log.blockNumber} belong to another fork`);
      }
    }
    const times = new Map(headers.map((h) => [h.number, h.timestamp]));
    const { transfers, events } = decode(logs, times);
    const { changes, tokens, seeds } = await tokensAndSeeds(transfers, events);
    const last = headers[headers.length - 1]!;
    // Grow back after a refusal (which halved the span): a refusal may have been transient.
    followSpan = Math.min(followChunk, followSpan * 2);
    await commit(
      {
        from: position.next,
        to,
        transfers,
        changes,
        tokens,
        seeds,
        logCount: logs.length,
        toHash: last.hash,
        fromParentHash: first.parentHash,
      },
      { toBlockHash: last.hash, blocks: headers },
    );
  }

  async function hashOf(block: number): Promise<string | null> {
    const [header] = await source.getHeaders([block]);
    return header?.hash ?? null;
  }

  async function checkTip(head: number): Promise<void> {
    if (position.next === 0 || position.tipHash === null) return;
    const tip = position.next - 1;
    if (head < tip) return; // a lagging node: wait for it rather than trusting its view
    const [header] = await source.getHeaders([tip]);
    if (header && header.hash !== position.tipHash) await handleReorg();
  }

  async function handleReorg(): Promise<void> {
    const top = position.next - 1;
    const bottom = Math.max(top - chain.finalityDepth, 0);
    const refs = await store.getBlockRefs(name, bottom, top);
    const nodeHeaders = await source.getHeaders(refs.map((r) => r.number));
    let ancestor: { number: number; hash: string } | null = null;
    for (let i = refs.length - 1; i >= 0; i--) {
      const ref = refs[i]!;
      if (nodeHeaders[i]?.hash === ref.hash) {
        ancestor = { number: ref.number, hash: ref.hash };
        break;
      }
    }
    if (!ancestor) {
      throw new FatalIndexerError(
        `reorg deeper than the unfinalized window on ${name}: none of the stored blocks ${refs[0]?.number ?? top}..${top} is on the node's chain any more (window ${chain.finalityDepth} blocks); indexing of ${name} stopped to avoid corrupt data — raise the window and re-index from an earlier block`,
      );
    }
    // A supply read taken before the rollback (from the dropped blocks' state) and recorded after
    // it would clear the re-read mark the rollback sets, and its stale value would stay for up to
    // `supplyRefreshBlocks`: let the read in flight finish first, and start none meanwhile.
    const result = await supply.hold(() => store.rollback(name, ancestor.number, ancestor.hash));
    logger.warn(
      { depth: top - ancestor.number, ancestor: ancestor.number, removedTransfers: result.removedTransfers },
      'reorg: rolled back to the common ancestor',
    );
    // Tokens first seen in the dropped blocks are gone from the store; forget them here too.
    forgetTokens(result.affectedTokens);
    position.next = ancestor.number + 1;
    position.tipHash = ancestor.hash;
    supply.kick();
  }

  return {
    polled(head) {
      headPolled = head;
      options.heads?.polled(head);
    },
    follow,
    checkTip,
    async waitForHead() {
      if (options.heads) await options.heads.waitForHead(headPolled, chain.pollIntervalMs, signal);
      else await sleep(chain.pollIntervalMs, signal);
    },
  };
}
