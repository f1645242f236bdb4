/**
 * Micro-benchmark of NEO decoding: what the chain layer spends per block once the node has
 * answered. Each round takes the JSON text of recorded mainnet answers and does all the
 * source and indexer-side decoding: `JSON.parse`, validation, NEP-5 transfers, deployments,
 * and UTXO transfer derivation (inputs resolved from an in-memory output table).
 *
 * Corpus: mainnet block 1444843 (38 transactions: 1 invocation with 3 NEP-5 mints, 13
 * claims, 22 sends; 21 asset transfers) with its application log, and the four recorded
 * application logs alone (5 NEP-5 transfers in HALT runs, 1 in the FAULT copy).
 * For `npm run bench`: `runNeoDecodeBench()` returns the figures; nothing is printed.
 */
import { performance } from 'node:perf_hooks';
import { decodeBlock, parseBlock } from '../src/chains/neo/block.js';
import { decodeNep5Transfers, parseApplicationLog } from '../src/chains/neo/nep5.js';
import { loadNeoscanRecordings } from '../src/chains/neo/testing/recordings.js';
import { RPX_DEPLOY_BLOCK, synthesizePrevouts } from '../src/chains/neo/testing/synthetic.js';
import type { NeoCreatedOutput } from '../src/chains/neo/types.js';
import { deriveAssetTransfers, outputKey } from '../src/chains/neo/utxo.js';

export interface NeoDecodeBenchOptions {
  /** Measure each part for at least this long. Default 2 s. */
  minSeconds?: number;
  /** Untimed rounds first, for the JIT. Default 200. */
  warmupRounds?: number;
}

/** One measured part. */
export interface DecodeRate {
  rounds: number;
  seconds: number;
  /** Blocks (or logs) per second. */
  perSecond: number;
  transactionsPerSecond: number;
  /** NEP-5 plus asset transfers decoded per second. */
  transfersPerSecond: number;
}

export interface NeoDecodeReport {
  /** Full block decoding of block 1444843 (see the module comment). */
  block: DecodeRate & { transactions: number; nep5Transfers: number; assetTransfers: number };
  /** Application logs alone: parse, validate, decode NEP-5 transfers. */
  logs: DecodeRate & { logs: number; transfers: number };
}

/** Runs both parts and returns their rates. */
export function runNeoDecodeBench(options: NeoDecodeBenchOptions = {}): NeoDecodeReport {
  const minSeconds = options.minSeconds ?? 2;
  const warmupRounds = options.warmupRounds ?? 200;
  const recordings = loadNeoscanRecordings();
  const rawBlock = recordings.blocks.find((b) => b.index === RPX_DEPLOY_BLOCK)!;
  const blockText = JSON.stringify(rawBlock);
  const logTexts = recordings.applicationLogs.map((log) => ({
    txid: (log.result as { txid: string }).txid,
    text: JSON.stringify(log.result),
  }));
  const rpxLog = logTexts.find((log) => blockText.includes(log.txid))!;
  // The outputs the block spends are not recorded; the synthetic ones stand in for the
  // indexer's output table (only their owners and assets matter to the derivation).
  const table = new Map<string, NeoCreatedOutput>();
  for (const tx of synthesizePrevouts([rawBlock])) {
    for (const o of tx.vout as { n: number; asset: string; value: string; address: string }[]) {
      table.set(outputKey({ txid: tx.txid as string, n: o.n }), {
        txid: tx.txid as string,
        n: o.n,
        asset: o.asset,
        address: o.address,
        value: 0n,
      });
    }
  }

  const decodeOneBlock = () => {
    const parsed = parseBlock(JSON.parse(blockText), RPX_DEPLOY_BLOCK);
    const log = parseApplicationLog(JSON.parse(rpxLog.text), rpxLog.txid);
    const { block } = decodeBlock(parsed, new Map([[rpxLog.txid, log]]));
    const assets = deriveAssetTransfers(
      block,
      (ref) => table.get(outputKey(ref)),
      () => 8,
    );
    return {
      transactions: block.transactions.length,
      nep5: block.nep5Transfers.length,
      assets: assets.length,
    };
  };
  const decodeLogs = () => {
    let transfers = 0;
    for (const { txid, text } of logTexts) {
      const log = parseApplicationLog(JSON.parse(text), txid);
      transfers += decodeNep5Transfers(log, {
        blockNumber: 0,
        time: 0,
        txIndex: 0,
        txHash: txid,
        firstLogIndex: 0,
      }).length;
    }
    return transfers;
  };

  const shape = decodeOneBlock();
  const logTransfers = decodeLogs();
  const blockRate = measure(minSeconds, warmupRounds, decodeOneBlock);
  const logRate = measure(minSeconds, warmupRounds, decodeLogs);
  const blockTransfers = shape.nep5 + shape.assets;
  return {
    block: {
      ...blockRate,
      perSecond: blockRate.rounds / blockRate.seconds,
      transactionsPerSecond: (blockRate.rounds * shape.transactions) / blockRate.seconds,
      transfersPerSecond: (blockRate.rounds * blockTransfers) / blockRate.seconds,
      transactions: shape.transactions,
      nep5Transfers: shape.nep5,
      assetTransfers: shape.assets,
    },
    logs: {
      ...logRate,
      perSecond: (logRate.rounds * logTexts.length) / logRate.seconds,
      transactionsPerSecond: (logRate.rounds * logTexts.length) / logRate.seconds,
      transfersPerSecond: (logRate.rounds * logTransfers) / logRate.seconds,
      logs: logTexts.length,
      transfers: logTransfers,
    },
  };
}

function measure(
  minSeconds: number,
  warmupRounds: number,
  run: () => unknown,
): { rounds: number; seconds: number } {
  for (let i = 0; i < warmupRounds; i++) run();
  const start = performance.now();
  let rounds = 0;
  let elapsed = 0;
  while (elapsed < minSeconds * 1000) {
    for (let i = 0; i < 10; i++) run();
    rounds += 10;
    elapsed = performance.now() - start;
  }
  return { rounds, seconds: elapsed / 1000 };
}
