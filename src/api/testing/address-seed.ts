/**
 * Data for the address operations' and Token Holders' tests, beside the EVM data of `fixture.ts`
 * (whose eth seed they also read): a small NEO index with both kinds of token (the NEO and GAS
 * global assets, whose balances the store keeps in Fixed8 units, and the NEP-5 token RPX), and a
 * kcs history that starts late, so one address's computed balance is negative. Seeded only
 * through the `Store` interface; every expected value is documented here, worked out by hand.
 */
import { indexBatch, neoPart, transferRecord, hash32 as txid } from '../../store/testing/batches.js';
import type { NeoOutputRow, Store, TransferRecord } from '../../store/types.js';

export const NEO_ID = '0xc56f33fc6ecfcd0c225c4ab356fee59390af8560be0e930faebe74a6daff7c9b';
export const GAS_ID = '0x602c79718b16e442de58778e148d0b1084e3b2dffd5de6b7b16cee7969282de7';
export const RPX = '0xecc6b20d3ccac1ee9ef109af5a7cdb85706b1df9';

/** Valid NEO 2.x addresses; N4 appears nowhere in the seed. */
export const N1 = 'AQVh2pG732YvtNaxEGkQUei3YA4cvo7d2i';
export const N2 = 'Abf2qMs1pzQb8kYk9RuxtUb9jtRKJVuBJt';
export const N3 = 'AWKECj9RD8rS8RPcpCgYVjk1DeYyHwxZm3';
export const N4 = 'AS23ifAE5YRQ95HweVnzRmjTtDYPSYjoDC';

export const NEO_INDEXED = 20;
export const NEO_HEAD = 25;

/** One whole unit in Fixed8 units, and GAS's (precision 8) smallest unit per GAS. */
const FIXED8 = 100_000_000n;

const time = (block: number): number => 1_500_000_000 + block * 15;

function record(token: string, block: number, logIndex: number, from: string, to: string, value: bigint) {
  return transferRecord({
    token,
    blockNumber: block,
    logIndex,
    txIndex: logIndex,
    txHash: txid(0x1000 + block * 16 + logIndex),
    from,
    to,
    value,
    time: time(block),
  });
}

/**
 * The NEO transfers, chain order. Asset `value`s are in the asset's own unit (NEO: whole NEO).
 * - NEO (precision 0): issued 100 to N1 and 50 to N2 (block 2), N1 sends 30 to N2 (block 3):
 *   N1 holds 70, N2 80; outputs in Fixed8 units (70·10^8 and 80·10^8). Total supply 150.
 * - GAS (precision 8): 5 GAS (5·10^8) to N2 in block 6. Total supply 5 GAS.
 * - RPX (NEP-5, 8 decimals): minted 10·10^8 to N1 (block 5); N1 sends 4·10^8 to N3, and N3
 *   1·10^8 to itself (block 7). N1 holds 6·10^8, N3 4·10^8. Total supply 1000·10^8.
 */
export const NEO_ASSET_TRANSFERS: TransferRecord[] = [
  record(NEO_ID, 2, 0, '', N1, 100n),
  record(NEO_ID, 2, 1, '', N2, 50n),
  record(NEO_ID, 3, 0, N1, N2, 30n),
  record(GAS_ID, 6, 0, '', N2, 5n * FIXED8),
];
export const NEO_NEP5_TRANSFERS: TransferRecord[] = [
  record(RPX, 5, 0, '', N1, 10n * FIXED8),
  record(RPX, 7, 0, N1, N3, 4n * FIXED8),
  record(RPX, 7, 1, N3, N3, 1n * FIXED8),
];

export const NEO_SUPPLY = 150n;
export const GAS_SUPPLY = 5n * FIXED8;
export const RPX_SUPPLY = 1000n * FIXED8;

function output(tx: number, n: number, asset: string, address: string, value: bigint, block: number) {
  return { txid: txid(tx), n, asset, address, value, blockNumber: block };
}

export async function seedNeoAddresses(store: Store): Promise<void> {
  const issueN1 = output(2, 0, NEO_ID, N1, 100n * FIXED8, 2);
  const issueN2 = output(2, 1, NEO_ID, N2, 50n * FIXED8, 2);
  const spent: NeoOutputRow & { blockNumber: number } = { ...issueN1, blockNumber: 3 };
  await store.writer.applyBatch(
    indexBatch({
      chain: 'neo',
      fromBlock: 1,
      toBlock: NEO_INDEXED,
      toBlockHash: txid(0xb10c),
      head: NEO_HEAD,
      transfers: NEO_NEP5_TRANSFERS,
      tokens: [
        { address: NEO_ID, name: 'NEO', symbol: 'NEO', decimals: 0 },
        { address: GAS_ID, name: 'GAS', symbol: 'GAS', decimals: 8 },
        { address: RPX, name: 'Red Pulse Token', symbol: 'RPX', decimals: 8 },
      ],
      pruneBlocksBelow: NEO_INDEXED + 1,
      neo: neoPart({
        assetTransfers: NEO_ASSET_TRANSFERS,
        outputsCreated: [
          issueN1,
          issueN2,
          output(3, 0, NEO_ID, N2, 30n * FIXED8, 3),
          output(3, 1, NEO_ID, N1, 70n * FIXED8, 3),
          output(6, 0, GAS_ID, N2, 5n * FIXED8, 6),
        ],
        outputsSpent: [spent],
        assets: [
          { asset: NEO_ID, type: 'GoverningToken', registration: null },
          { asset: GAS_ID, type: 'UtilityToken', registration: null },
        ],
      }),
    }),
  );
  await store.writer.updateSupplies('neo', [
    { address: NEO_ID, totalSupply: NEO_SUPPLY, cap: NEO_SUPPLY, burnedBalance: null, atBlock: NEO_INDEXED },
    { address: GAS_ID, totalSupply: GAS_SUPPLY, cap: null, burnedBalance: null, atBlock: NEO_INDEXED },
    { address: RPX, totalSupply: RPX_SUPPLY, cap: null, burnedBalance: null, atBlock: NEO_INDEXED },
  ]);
}

/** kcs: a token whose history starts late. LATE_SENDER sends 5 it was never seen receiving (balance −5). */
export const KCS_TOKEN = `0x${'6b'.repeat(20)}`;
export const LATE_SENDER = `0x${'d1'.repeat(20)}`;
export const LATE_RECIPIENT = `0x${'d2'.repeat(20)}`;

export async function seedLateStart(store: Store): Promise<void> {
  await store.writer.applyBatch(
    indexBatch({
      chain: 'kcs',
      fromBlock: 500,
      toBlock: 510,
      transfers: [
        transferRecord({
          token: KCS_TOKEN,
          blockNumber: 505,
          from: LATE_SENDER,
          to: LATE_RECIPIENT,
          value: 5n,
        }),
      ],
      tokens: [{ address: KCS_TOKEN, name: 'Late', symbol: 'LATE', decimals: 0 }],
    }),
  );
  // Unknown supply: percentages are null.
}
