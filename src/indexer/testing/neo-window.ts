/**
 * Fake-node windows for the NEO indexer's tests, built on `rpxDeployWindow` (real mainnet block
 * 1444843 with SYNTHETIC empty neighbours). What this adds is SYNTHETIC scaffolding too, marked
 * `"synthetic": true`, so that a short window exercises every path of the indexer:
 *
 * - the real PublishTransaction of the recordings (AgencyContract, `fd161cc…`), moved into
 *   the filler block after 1444843, so that a contract deployment lies inside the window;
 * - a ContractTransaction in that block that spends an output block 1444843 created (244 NEO
 *   of `afef3f…`), 200 to another address and 44 back as change: an input the indexer must
 *   resolve from its own output table (or the commit in flight), not from the node.
 *
 * Tests draw their expected values from the recordings and from these objects, never from
 * the indexer.
 */

import type { FakeNeoNodeOptions } from '../../chains/neo/testing/fake-neo-node.js';
import { loadNeoscanRecordings } from '../../chains/neo/testing/recordings.js';
import {
  RPX_DEPLOY_BLOCK,
  rpxDeployWindow,
  synthesizePrevouts,
  syntheticHash,
} from '../../chains/neo/testing/synthetic.js';
import { NEO_ASSET_ID } from '../../chains/neo/utxo.js';

type Json = Record<string, unknown>;

/** The ContractTransaction of block 1444843 whose first output (244 NEO) the synthetic transaction spends. */
export const SPENT_TX = '0xafef3f6d901bfab3a70e4a1a05bb403a2e067d543fc05717fcb1827db25b17bc';
/** Owner of that output (from the recorded block). */
export const SPENT_OWNER = 'AWrAn2pkW4LPj8qvduJsBxxhWmHEPNrYTB';
/** Recipient of the synthetic 200 NEO (an address of the recorded block: the miner's). */
export const SPEND_RECIPIENT = 'ARtmDzcTZxHCYydqFxFw31d21CpSArZwi4';
/** Id of the synthetic spending transaction. */
export const SPEND_TXID = syntheticHash('spend afef3f:0 in the block after 1444843');
/** The recorded PublishTransaction (AgencyContract). */
export const PUBLISH_TXID = '0xfd161ccd87deab812daa433cbc0f8f6468de24f1d708187beef5ab9ada7050f3';

/** Height of the filler block that receives the PublishTransaction and the synthetic spend. */
export const EXTRAS_BLOCK = RPX_DEPLOY_BLOCK + 1;

/**
 * `rpxDeployWindow(from, to)` plus the deployment and the in-window spend described above.
 * `from` must be at most 1444843 and `to` at least 1444844.
 */
export function neoIndexerWindow(from: number, to: number): FakeNeoNodeOptions {
  if (to < EXTRAS_BLOCK) throw new RangeError(`the window must reach block ${EXTRAS_BLOCK}`);
  const base = rpxDeployWindow(from, to);
  const recordings = loadNeoscanRecordings();
  const publish = recordings.transactions.find((tx) => tx.txid === PUBLISH_TXID);
  if (publish === undefined) throw new Error('the recordings lost the PublishTransaction');
  // A block's transactions carry no inclusion fields.
  const { blockhash: _h, blocktime: _t, confirmations: _c, ...publishInBlock } = publish;
  const spend: Json = {
    txid: SPEND_TXID,
    size: 0,
    type: 'ContractTransaction',
    version: 0,
    attributes: [],
    vin: [{ txid: SPENT_TX, vout: 0 }],
    vout: [
      { n: 0, asset: NEO_ASSET_ID, value: '200', address: SPEND_RECIPIENT },
      { n: 1, asset: NEO_ASSET_ID, value: '44', address: SPENT_OWNER },
    ],
    sys_fee: '0',
    net_fee: '0',
    scripts: [],
    synthetic: true,
  };
  const blocks = (base.blocks ?? []).map((block) =>
    block.index === EXTRAS_BLOCK
      ? { ...block, tx: [...(block.tx as Json[]), publishInBlock, spend], synthetic: true }
      : block,
  );
  const known = recordings.transactions.filter((tx) => tx.txid !== PUBLISH_TXID);
  return {
    ...base,
    blocks,
    // Prevouts again: the PublishTransaction's input now needs one too.
    transactions: [...known, ...synthesizePrevouts(blocks, known)],
  };
}
