/**
 * SYNTHETIC test scaffolding around the real recordings, for end-to-end tests that need more
 * than the recorded blocks hold. Nothing here is chain data: every object it makes carries
 * `"synthetic": true`, and tests must draw their expected values from the real recordings.
 *
 * - `fillWindow`: the recordings hold single blocks (1444843, 2120069); an indexer walks
 *   consecutive heights. Missing heights of a window become empty blocks (one MinerTransaction
 *   without outputs, like the real blocks 1, 2, 123 and 199), chained to the real neighbours
 *   through their recorded `previousblockhash` / `nextblockhash`.
 * - `synthesizePrevouts`: the recorded blocks spend outputs of transactions nobody recorded.
 *   A prevout is rebuilt from the spending transaction: its owner is the spender's witness
 *   address (real: a standard witness is the owner's verification script), its asset is the
 *   asset the transaction moves, and the values balance the transaction's outputs and fees
 *   (exact for one input; with several inputs the split among them is invented).
 * - `synthesizeAssetState`: an asset state rebuilt from the genesis RegisterTransaction (real
 *   fields) with an `available` amount the caller chooses.
 */
import { createHash } from 'node:crypto';
import { verificationScriptToAddress } from '../address.js';
import { FIXED8_ONE, parseFixed8 } from '../fixed8.js';
import { GAS_ASSET_ID, NEO_ASSET_ID } from '../utxo.js';
import type { FakeNeoNodeOptions } from './fake-neo-node.js';
import { loadNeoscanRecordings } from './recordings.js';

type Json = Record<string, unknown>;

/** Height of mainnet block 1444843: RPX's `deploy` call, minting 3 balances. */
export const RPX_DEPLOY_BLOCK = 1444843;
/** The RPX token (NEP-5) contract hash. */
export const RPX_HASH = '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9';

/** A deterministic fake 32-byte hash for `label`. */
export function syntheticHash(label: string): string {
  return `0x${createHash('sha256').update(`tokenquery synthetic ${label}`).digest('hex')}`;
}

/**
 * `blocks` plus SYNTHETIC empty blocks at every missing height of `from..to`. Hashes link:
 * a filler next to a real block takes the hash that block names for it; times step by 15 s
 * from the nearest real block.
 */
export function fillWindow(blocks: readonly Json[], from: number, to: number): Json[] {
  const real = new Map(blocks.map((b) => [b.index as number, b]));
  const nearest = (h: number): Json => {
    let best: Json | undefined;
    for (const block of blocks) {
      if (
        best === undefined ||
        Math.abs((block.index as number) - h) < Math.abs((best.index as number) - h)
      ) {
        best = block;
      }
    }
    if (best === undefined) throw new Error('fillWindow needs at least one real block');
    return best;
  };
  const hashAt = (h: number): string => {
    const block = real.get(h);
    if (block !== undefined) return block.hash as string;
    const next = real.get(h + 1);
    if (next !== undefined) return next.previousblockhash as string;
    const previous = real.get(h - 1);
    if (previous?.nextblockhash !== undefined) return previous.nextblockhash as string;
    return syntheticHash(`block ${h}`);
  };
  const out: Json[] = [...blocks];
  for (let h = from; h <= to; h++) {
    if (real.has(h)) continue;
    const anchor = nearest(h);
    const txid = syntheticHash(`miner ${h}`);
    out.push({
      hash: hashAt(h),
      size: 0,
      version: 0,
      previousblockhash: h === 0 ? `0x${'0'.repeat(64)}` : hashAt(h - 1),
      merkleroot: txid,
      time: (anchor.time as number) + 15 * (h - (anchor.index as number)),
      index: h,
      nonce: '0000000000000000',
      nextconsensus: anchor.nextconsensus,
      script: { invocation: '', verification: '' },
      tx: [
        {
          txid,
          size: 10,
          type: 'MinerTransaction',
          version: 0,
          attributes: [],
          vin: [],
          vout: [],
          sys_fee: '0',
          net_fee: '0',
          scripts: [],
          nonce: h,
        },
      ],
      nextblockhash: hashAt(h + 1),
      synthetic: true,
    });
  }
  return out.sort((a, b) => (a.index as number) - (b.index as number));
}

/**
 * SYNTHETIC verbose transactions for every output that `blocks` spend and that is neither
 * created by `blocks` nor among `known` transactions (see the module comment). Throws when a
 * transaction's inputs cannot be given owners (several witnesses, not one per input).
 */
export function synthesizePrevouts(blocks: readonly Json[], known: readonly Json[] = []): Json[] {
  const have = new Set<string>([...known.map((tx) => tx.txid as string)]);
  for (const block of blocks) for (const tx of block.tx as Json[]) have.add(tx.txid as string);
  /** txid → outputs by index. */
  const made = new Map<
    string,
    Map<number, { asset: string; value: bigint; address: string; spentIn: Json }>
  >();
  for (const block of blocks) {
    for (const tx of block.tx as Json[]) {
      const inputs = (tx.vin as { txid: string; vout: number }[]).filter((input) => !have.has(input.txid));
      if (inputs.length === 0) continue;
      const owners = ownersOf(tx, inputs.length);
      const values = inputValues(tx, inputs.length);
      inputs.forEach((input, i) => {
        let outputs = made.get(input.txid);
        if (outputs === undefined) {
          outputs = new Map();
          made.set(input.txid, outputs);
        }
        outputs.set(input.vout, { ...values[i]!, address: owners[i]!, spentIn: block });
      });
    }
  }
  return [...made].map(([txid, outputs]) => {
    const width = Math.max(...outputs.keys()) + 1;
    const first = [...outputs.values()][0]!;
    const vout = Array.from({ length: width }, (_, n) => {
      // Unspent-by-the-window positions must exist; they get the smallest amount.
      const output = outputs.get(n) ?? { ...first, value: smallestUnit(first.asset) };
      return { n, asset: output.asset, value: formatFixed8(output.value), address: output.address };
    });
    return {
      txid,
      size: 0,
      type: 'ContractTransaction',
      version: 0,
      attributes: [],
      vin: [],
      vout,
      sys_fee: '0',
      net_fee: '0',
      scripts: [],
      blockhash: syntheticHash(`block of ${txid}`),
      blocktime: (first.spentIn.time as number) - 3600,
      confirmations: 0,
      synthetic: true,
    };
  });
}

/**
 * A SYNTHETIC `getassetstate` answer built from a registering transaction of a recorded block
 * (its `asset` field) and an `available` amount chosen by the caller.
 */
export function synthesizeAssetState(registerTx: Json, available: string): Json {
  const asset = registerTx.asset as Json;
  return {
    version: 0,
    id: registerTx.txid,
    type: asset.type,
    name: asset.name,
    amount: asset.amount,
    available,
    precision: asset.precision,
    owner: asset.owner,
    admin: asset.admin,
    // NEO records the admin as the issuer of a registered asset.
    issuer: asset.admin,
    expiration: 4000000,
    frozen: false,
    synthetic: true,
  };
}

/**
 * Options for `startFakeNeoNode` that serve heights `from..to` around mainnet block 1444843
 * (RPX's `deploy` call, minting 3 balances): the real block, its real application log, the
 * real RPX contract state and NEO asset state, every other neo-scan recording, and the
 * SYNTHETIC fillers, prevouts and GAS asset state described above. The head is `to`.
 */
export function rpxDeployWindow(from = RPX_DEPLOY_BLOCK - 2, to = RPX_DEPLOY_BLOCK + 2): FakeNeoNodeOptions {
  if (from > RPX_DEPLOY_BLOCK || to < RPX_DEPLOY_BLOCK)
    throw new RangeError('the window must hold block 1444843');
  const recordings = loadNeoscanRecordings();
  const deploy = recordings.blocks.filter((b) => b.index === RPX_DEPLOY_BLOCK);
  const blocks = fillWindow(deploy, from, to);
  const genesis = recordings.blocks.find((b) => b.index === 0)!;
  const gasRegistration = (genesis.tx as Json[]).find((tx) => tx.txid === GAS_ASSET_ID)!;
  return {
    blocks,
    applicationLogs: recordings.applicationLogs,
    transactions: [...recordings.transactions, ...synthesizePrevouts(blocks, recordings.transactions)],
    contracts: recordings.contracts,
    // GAS issued by block 1444843 is not recorded; 100M is its cap (the real figure was lower).
    assets: [...recordings.assets, synthesizeAssetState(gasRegistration, '100000000')],
    invocations: recordings.invocations,
    head: to,
  };
}

/** Owners of the `count` unresolved inputs of `tx`, from its witnesses. */
function ownersOf(tx: Json, count: number): string[] {
  const witnesses = (tx.scripts as { verification: string }[]).map((w) =>
    verificationScriptToAddress(w.verification),
  );
  if (witnesses.length === 1 && witnesses[0] !== null)
    return Array.from({ length: count }, () => witnesses[0]!);
  if (witnesses.length === count && witnesses.every((w) => w !== null)) return witnesses as string[];
  throw new Error(`cannot give owners to the inputs of ${String(tx.txid)}: ${witnesses.length} witnesses`);
}

/** Asset and Fixed8 value of each of `count` inputs, balancing outputs plus fees. */
function inputValues(tx: Json, count: number): { asset: string; value: bigint }[] {
  const needed = new Map<string, bigint>();
  for (const output of tx.vout as { asset: string; value: string }[]) {
    needed.set(output.asset, (needed.get(output.asset) ?? 0n) + parseFixed8(output.value)!);
  }
  const fees = parseFixed8(tx.sys_fee)! + parseFixed8(tx.net_fee)!;
  if (fees > 0n) needed.set(GAS_ASSET_ID, (needed.get(GAS_ASSET_ID) ?? 0n) + fees);
  const assets = [...needed];
  if (assets.length === 1) {
    const [asset, total] = assets[0]!;
    const unit = smallestUnit(asset);
    return Array.from({ length: count }, (_, i) => ({
      asset,
      value: i === 0 ? total - unit * BigInt(count - 1) : unit,
    }));
  }
  if (assets.length === count) return assets.map(([asset, value]) => ({ asset, value }));
  throw new Error(
    `cannot balance the inputs of ${String(tx.txid)}: ${assets.length} assets, ${count} inputs`,
  );
}

function smallestUnit(asset: string): bigint {
  return asset === NEO_ASSET_ID ? FIXED8_ONE : 1n;
}

function formatFixed8(units: bigint): string {
  const whole = units / FIXED8_ONE;
  const fraction = (units % FIXED8_ONE).toString().padStart(8, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}
