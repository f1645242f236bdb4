/**
 * Loaders for the recorded EVM chain data under `fixtures/evm/` (ethereum-etl and
 * polygon-etl test resources, see `fixtures/README.md`), in the shapes `startFixtureNode`
 * serves. Files are found from the repository root, because compiled tests run from `dist/`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FixtureCall, RawBlock, RawLog } from './fixture-node.js';

/** What one recorded set holds, ready for `startFixtureNode`. */
export interface FixtureSet {
  logs: RawLog[];
  blocks: RawBlock[];
  calls: FixtureCall[];
  /** From a recorded `eth_chainId`, when there is one. */
  chainId?: number;
  /** From a recorded `eth_blockNumber`, when there is one. */
  head?: number;
}

/** A transfer as ethereum-etl's expected outputs list it. */
export interface ExpectedTransfer {
  token: string;
  from: string;
  to: string;
  value: bigint;
  txHash: string;
  logIndex: number;
  blockNumber: number;
  /** Present in the JSON outputs, absent from the CSV ones. */
  blockTimestamp?: number;
}

/** Token metadata as ethereum-etl's `expected_tokens.*` files list it. */
export interface ExpectedToken {
  address: string;
  symbol: string;
  name: string;
  decimals: number;
  totalSupply: bigint;
}

let cachedRoot: string | undefined;

/** The repository root: the nearest directory above this module that holds `package.json`. */
export function repoRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the fixture loader');
    dir = parent;
  }
  cachedRoot = dir;
  return dir;
}

/** Absolute path of a file or folder under `fixtures/evm/`. */
export function evmFixturePath(...parts: string[]): string {
  return join(repoRoot(), 'fixtures', 'evm', ...parts);
}

/** A set from ethereum-etl, e.g. `stream_blocks_17173049_17173050` or `export_tokens/eos_0x86fa0498`. */
export function loadEthereumEtlSet(name: string): FixtureSet {
  return loadFixtureSet(`ethereum-etl/${name}`);
}

/** A set from polygon-etl, e.g. `export_tokens_LINK_0xb0897686`. */
export function loadPolygonEtlSet(name: string): FixtureSet {
  return loadFixtureSet(`polygon-etl/${name}`);
}

/**
 * Reads every recording in a folder under `fixtures/evm/` (recursively): logs from
 * `eth_getFilterLogs`/`eth_getLogs` answers, `logs_all.json`, `logs.csv` and transaction
 * receipts (deduplicated by block hash and log index); blocks from `eth_getBlockByNumber`
 * answers (the `latest` recordings are left out: they are far from the set's blocks); and
 * `eth_call` answers from their file names (`eth_call_data_<data>_to_<address>_latest`).
 */
export function loadFixtureSet(relativeDir: string): FixtureSet {
  const files = listFiles(evmFixturePath(relativeDir)).sort();
  const set: FixtureSet = { logs: [], blocks: [], calls: [] };
  const seenLogs = new Set<string>();
  const blocks = new Map<string, { block: RawBlock; full: boolean }>();
  const addLogs = (logs: unknown) => {
    if (!Array.isArray(logs)) return;
    for (const log of logs as RawLog[]) {
      const key = `${log.blockHash.toLowerCase()}:${hexToNumber(log.logIndex)}`;
      if (seenLogs.has(key)) continue;
      seenLogs.add(key);
      set.logs.push(log);
    }
  };
  // Filter answers first, receipts second: both hold the same logs where they overlap.
  const receiptFiles: string[] = [];
  for (const file of files) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    if (/eth_get(Filter)?Logs.*\.json$/.test(name) || name === 'logs_all.json') {
      addLogs(resultOf(readJson(file)));
    } else if (name === 'logs.csv') {
      addLogs(parseCsv(readFileSync(file, 'utf8')).map(csvRowToLog));
    } else if (/eth_getTransactionReceipt_.*\.json$/.test(name) || name === 'receipts_by_txhash.json') {
      receiptFiles.push(file);
    } else if (/eth_getBlockByNumber.*\.json$/.test(name) && !/_latest/.test(name)) {
      const block = resultOf(readJson(file)) as RawBlock | null;
      if (block === null) continue;
      const full =
        /_true\.json$/.test(name) || (block.transactions ?? []).some((tx) => typeof tx === 'object');
      const known = blocks.get(block.number);
      if (known === undefined || (full && !known.full)) blocks.set(block.number, { block, full });
    } else if (/eth_blockNumber.*\.json$/.test(name)) {
      set.head = hexToNumber(resultOf(readJson(file)) as string);
    } else if (/eth_chainId.*\.json$/.test(name)) {
      set.chainId = hexToNumber(resultOf(readJson(file)) as string);
    } else {
      const call = /eth_call_data_(0x[0-9a-f]*)_to_(0x[0-9a-f]{40})_[a-z0-9]+\.json$/i.exec(name);
      if (call !== null) {
        const json = readJson(file) as { result?: string; error?: FixtureCall['error'] };
        const recorded: FixtureCall = { to: call[2]!, data: call[1]! };
        if (json.error !== undefined) recorded.error = json.error;
        else if (json.result !== undefined) recorded.result = json.result;
        set.calls.push(recorded);
      }
    }
  }
  for (const file of receiptFiles) {
    const json = readJson(file);
    const receipts = file.endsWith('receipts_by_txhash.json')
      ? Object.values(json as object)
      : [resultOf(json)];
    for (const receipt of receipts) addLogs((receipt as { logs?: unknown } | null)?.logs);
  }
  set.blocks = [...blocks.values()].map((b) => b.block);
  return set;
}

/**
 * Expected transfers from an ethereum-etl output under `fixtures/evm/`: CSV, or JSON lines
 * (`expected_*.json`). Values beyond 2^53 are read exactly.
 */
export function loadExpectedTransfers(relativeFile: string): ExpectedTransfer[] {
  const text = readFileSync(evmFixturePath(relativeFile), 'utf8');
  const rows: Record<string, unknown>[] = relativeFile.endsWith('.csv')
    ? parseCsv(text)
    : parseJsonLines(text).filter((row) => row.type === undefined || row.type === 'token_transfer');
  return rows.map((row) => {
    const transfer: ExpectedTransfer = {
      token: String(row.token_address),
      from: String(row.from_address),
      to: String(row.to_address),
      value: BigInt(String(row.value)),
      txHash: String(row.transaction_hash),
      logIndex: Number(row.log_index),
      blockNumber: Number(row.block_number),
    };
    if (row.block_timestamp !== undefined) transfer.blockTimestamp = Number(row.block_timestamp);
    return transfer;
  });
}

/** Tokens from an `expected_tokens.csv` or `expected_tokens.json` (JSON lines) under `fixtures/evm/`. */
export function loadExpectedTokens(relativeFile: string): ExpectedToken[] {
  const text = readFileSync(evmFixturePath(relativeFile), 'utf8');
  const rows: Record<string, unknown>[] = relativeFile.endsWith('.csv')
    ? parseCsv(text)
    : parseJsonLines(text);
  return rows.map((row) => ({
    address: String(row.address),
    symbol: String(row.symbol ?? ''),
    name: String(row.name ?? ''),
    decimals: Number(row.decimals),
    totalSupply: BigInt(String(row.total_supply)),
  }));
}

/**
 * Parses JSON whose integer literals may exceed 2^53: a small scanner skips string contents
 * and turns integer literals of 16 digits or more into strings before `JSON.parse` sees
 * them (Node 20's reviver gets no source text). Read such fields with `BigInt(String(v))`.
 */
export function parseJsonBigIntSafe(text: string): unknown {
  let out = '';
  let inString = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') {
        out += text[i + 1] ?? '';
        i += 2;
        continue;
      }
      if (ch === '"') inString = false;
      i++;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      i++;
      continue;
    }
    const m = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m !== null && (i === 0 || !/[\w.]/.test(text[i - 1]!))) {
      const literal = m[0];
      out += /^-?\d{16,}$/.test(literal) ? `"${literal}"` : literal;
      i += literal.length;
      continue;
    }
    out += ch;
    i++;
  }
  return JSON.parse(out) as unknown;
}

function parseJsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => parseJsonBigIntSafe(line) as Record<string, unknown>);
}

/** RFC 4180 CSV (quoted fields with commas, doubled quotes) into rows keyed by the header. */
export function parseCsv(text: string): Record<string, string>[] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      field = '';
      if (record.some((f) => f !== '')) records.push(record);
      record = [];
    } else field += ch;
  }
  record.push(field);
  if (record.some((f) => f !== '')) records.push(record);
  const [header, ...rows] = records;
  if (header === undefined) return [];
  return rows.map((row) => Object.fromEntries(header.map((key, k) => [key, row[k] ?? ''])));
}

function csvRowToLog(row: Record<string, string>): RawLog {
  const quantity = (n: string) => `0x${BigInt(n).toString(16)}`;
  return {
    address: row.address!,
    topics: row.topics === '' || row.topics === undefined ? [] : row.topics.split(','),
    data: row.data!,
    blockNumber: quantity(row.block_number!),
    blockHash: row.block_hash!,
    transactionHash: row.transaction_hash!,
    transactionIndex: quantity(row.transaction_index!),
    logIndex: quantity(row.log_index!),
    removed: false,
  };
}

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

/** A recorded JSON-RPC response's `result`, or the value itself when it is not an envelope. */
function resultOf(json: unknown): unknown {
  if (typeof json === 'object' && json !== null && !Array.isArray(json) && 'result' in json) {
    return (json as { result: unknown }).result;
  }
  return json;
}

function hexToNumber(hex: string): number {
  return Number.parseInt(hex, 16);
}
