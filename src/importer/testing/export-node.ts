/**
 * Test helpers around the real ethereum-etl export in `fixtures/evm/crosscheck/`: reading it
 * independently of the importer, and a SYNTHETIC JSON-RPC node for its blocks.
 *
 * Blocks 15,320,500–15,320,599 are not recorded anywhere in the fixtures, so the node answers
 * from what the export implies, and says so: block hashes and times are made up (12 s apart),
 * each block lists only the export's transactions (in the order of their first log), every
 * row is a log with the ERC-20 shape, and token
 * metadata comes from the Uniswap token list (other tokens revert, as tokens without metadata do).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { SELECTORS, TRANSFER_TOPIC } from '../../chains/evm/abi.js';
import type {
  FixtureCall,
  FixtureNodeOptions,
  RawBlock,
  RawLog,
} from '../../chains/evm/testing/fixture-node.js';
import { evmFixturePath, parseCsv } from '../../chains/evm/testing/fixture-sets.js';

/** The real 14,323-row export. */
export const CROSSCHECK_EXPORT = evmFixturePath(
  'crosscheck',
  'ethereum-etl-export_blocks_15320500-15320599_token_transfers.csv.gz',
);

/** A row of the export as text, keyed by column name. */
export type ExportRow = Record<string, string>;

/** The export's rows, parsed by the fixture loader's own CSV reader (not the importer's). */
export function readCrosscheckExport(): ExportRow[] {
  return parseCsv(gunzipSync(readFileSync(CROSSCHECK_EXPORT)).toString('utf8'));
}

/** Name, symbol and decimals of mainnet tokens from the Uniswap list, by lower-case address. */
export function uniswapTokens(): Map<string, { name: string; symbol: string; decimals: number }> {
  const list = JSON.parse(
    readFileSync(evmFixturePath('crosscheck', 'uniswap_default_tokenlist_mainnet.json'), 'utf8'),
  ) as { tokens: { address: string; name: string; symbol: string; decimals: number }[] };
  return new Map(list.tokens.map((t) => [t.address.toLowerCase(), t]));
}

/** The SYNTHETIC time the node gives block `n`. */
export const syntheticTime = (n: number): number => 1_660_000_000 + (n - 15_320_500) * 12;

const hashOf = (n: number): string =>
  `0x${createHash('sha256').update(`synthetic block ${n}`).digest('hex')}`;
const hex = (n: number): string => `0x${n.toString(16)}`;
const word = (value: bigint): string => value.toString(16).padStart(64, '0');

function abiString(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const body = bytes.toString('hex').padEnd(Math.ceil(bytes.length / 32) * 64, '0');
  return `0x${word(32n)}${word(BigInt(bytes.length))}${body}`;
}

export interface SyntheticNodeOptions {
  /** The node's head; default the last block of the rows. */
  head?: number;
}

/**
 * What `startFixtureNode` needs to answer an import of `rows`, and the transaction positions it
 * implies (`txIndex`, keyed `block:txHash`), for the tests' own expectations.
 */
export function syntheticNodeFor(
  rows: readonly ExportRow[],
  options: SyntheticNodeOptions = {},
): { node: FixtureNodeOptions; txIndex: Map<string, number> } {
  const byBlock = new Map<number, ExportRow[]>();
  for (const row of rows) {
    const n = Number(row.block_number);
    const list = byBlock.get(n);
    if (list === undefined) byBlock.set(n, [row]);
    else list.push(row);
  }
  const numbers = [...byBlock.keys()].sort((a, b) => a - b);
  const first = numbers[0] ?? 0;
  const last = numbers[numbers.length - 1] ?? 0;
  const head = options.head ?? last;
  const blocks: RawBlock[] = [];
  const logs: RawLog[] = [];
  const txIndex = new Map<string, number>();
  for (let n = first; n <= head; n++) {
    const inBlock = [...(byBlock.get(n) ?? [])].sort((a, b) => Number(a.log_index) - Number(b.log_index));
    const txs: string[] = [];
    for (const row of inBlock) {
      const tx = row.transaction_hash!.toLowerCase();
      if (!txs.includes(tx)) {
        txIndex.set(`${n}:${tx}`, txs.length);
        txs.push(tx);
      }
    }
    blocks.push({
      number: hex(n),
      hash: hashOf(n),
      parentHash: hashOf(n - 1),
      timestamp: hex(syntheticTime(n)),
      transactions: txs,
    });
    for (const row of inBlock) {
      const tx = row.transaction_hash!.toLowerCase();
      const pad = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;
      logs.push({
        address: row.token_address!.toLowerCase(),
        topics: [TRANSFER_TOPIC, pad(row.from_address!), pad(row.to_address!)],
        data: `0x${word(BigInt(row.value!))}`,
        blockNumber: hex(n),
        blockHash: hashOf(n),
        transactionHash: tx,
        transactionIndex: hex(txIndex.get(`${n}:${tx}`)!),
        logIndex: hex(Number(row.log_index)),
        removed: false,
      });
    }
  }
  const calls: FixtureCall[] = [];
  const listed = uniswapTokens();
  for (const token of new Set(rows.map((r) => r.token_address!.toLowerCase()))) {
    const meta = listed.get(token);
    if (meta === undefined) continue;
    calls.push(
      { to: token, data: SELECTORS.name, result: abiString(meta.name) },
      { to: token, data: SELECTORS.symbol, result: abiString(meta.symbol) },
      { to: token, data: SELECTORS.decimals, result: `0x${word(BigInt(meta.decimals))}` },
    );
  }
  return { node: { blocks, logs, calls, head }, txIndex };
}
