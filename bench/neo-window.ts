// A busy SYNTHETIC NEO window for the indexing benchmark: `copies` consecutive blocks, each a copy
// of real mainnet block 1444843 (38 transactions: the RPX `deploy` invocation with its 3 NEP-5
// mints, 13 claims, 22 sends; 21 asset transfers). Copy 0 is the real block; later copies rename
// every transaction id, and their inputs that spend outside the block spend, in order, the
// outputs the previous copy created: as in a full-history index, inputs resolve from the
// indexer's own output table (only copy 0's come from the node, as SYNTHETIC prevouts). Each
// copy has the real application log under its renamed invocation id; block hashes chain.
// Nothing checks value conservation, so the renamed chain needs none.
import type { FakeNeoNodeOptions } from '../src/chains/neo/testing/fake-neo-node.js';
import { loadNeoscanRecordings } from '../src/chains/neo/testing/recordings.js';
import {
  RPX_DEPLOY_BLOCK,
  synthesizeAssetState,
  synthesizePrevouts,
  syntheticHash,
} from '../src/chains/neo/testing/synthetic.js';
import { GAS_ASSET_ID } from '../src/chains/neo/utxo.js';

type Json = Record<string, unknown>;

export interface BusyWindow {
  options: FakeNeoNodeOptions;
  from: number;
  to: number;
  transactions: number;
}

export function busyNeoWindow(copies: number): BusyWindow {
  const recordings = loadNeoscanRecordings();
  const real = recordings.blocks.find((b) => b.index === RPX_DEPLOY_BLOCK);
  if (real === undefined) throw new Error('block 1444843 is not recorded');
  const realTxs = real.tx as Json[];
  const ownIds = new Set(realTxs.map((tx) => tx.txid as string));
  const logs = new Map(recordings.applicationLogs.map((log) => [log.txid, log.result as Json]));

  const blocks: Json[] = [];
  const applicationLogs: { txid: string; result: unknown }[] = [];
  const hashes: string[] = [];
  /** Outputs of the previous copy, in creation order: what the next copy's outer inputs spend. */
  let previousOutputs: { txid: string; vout: number }[] = [];
  for (let k = 0; k < copies; k++) {
    const height = RPX_DEPLOY_BLOCK + k;
    const rename = (txid: string): string => (k === 0 ? txid : syntheticHash(`${txid} copy ${k}`));
    let spent = 0;
    const tx = realTxs.map((t) => ({
      ...t,
      txid: rename(t.txid as string),
      vin: (t.vin as { txid: string; vout: number }[]).map((input) => {
        if (k === 0) return input;
        if (ownIds.has(input.txid)) return { ...input, txid: rename(input.txid) };
        const output = previousOutputs[spent++];
        if (output === undefined) throw new Error('the previous copy has too few outputs');
        return output;
      }),
    }));
    const spentInside = new Set(tx.flatMap((t) => t.vin.map((input) => `${input.txid}:${input.vout}`)));
    previousOutputs = tx
      .flatMap((t) => ((t as Json).vout as unknown[]).map((_, n) => ({ txid: t.txid, vout: n })))
      .filter((output) => !spentInside.has(`${output.txid}:${output.vout}`));
    for (const t of realTxs) {
      const log = logs.get(t.txid as string);
      if (log !== undefined) {
        const txid = rename(t.txid as string);
        applicationLogs.push({ txid, result: { ...log, txid } });
      }
    }
    const hash = k === 0 ? (real.hash as string) : syntheticHash(`busy block ${height}`);
    hashes.push(hash);
    blocks.push({
      ...real,
      index: height,
      hash,
      previousblockhash: k === 0 ? real.previousblockhash : hashes[k - 1],
      time: (real.time as number) + 15 * k,
      tx,
      ...(k === 0 ? {} : { synthetic: true }),
    });
  }
  for (let k = 0; k < copies - 1; k++) blocks[k]!.nextblockhash = hashes[k + 1];
  const genesis = recordings.blocks.find((b) => b.index === 0)!;
  const gasRegistration = (genesis.tx as Json[]).find((t) => t.txid === GAS_ASSET_ID)!;
  return {
    options: {
      blocks,
      applicationLogs,
      transactions: synthesizePrevouts(blocks),
      contracts: recordings.contracts,
      assets: [...recordings.assets, synthesizeAssetState(gasRegistration, '100000000')],
      invocations: recordings.invocations,
      head: RPX_DEPLOY_BLOCK + copies - 1,
    },
    from: RPX_DEPLOY_BLOCK,
    to: RPX_DEPLOY_BLOCK + copies - 1,
    transactions: copies * realTxs.length,
  };
}
