/**
 * Loaders for the recorded NEO 2.x data under `fixtures/neo-legacy/` (see
 * `fixtures/README.md`): CityOfZion/neo-scan's mainnet recordings, neon-js's TestNet RPC
 * cases, and nspcc-dev/neo-go's 2.x RPC examples. Files are found from the repository root,
 * because compiled tests run from `dist/`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../evm/testing/fixture-sets.js';

/** A recorded answer to `getapplicationlog(txid)`: keyed by the txid that was asked for. */
export interface RecordedApplicationLog {
  /** `0x` + lower-case hex, as asked (the answer may name another txid: see the FAULT copy). */
  txid: string;
  result: unknown;
}

/** A recorded `invokefunction(contract, method, params)` answer. */
export interface RecordedInvocation {
  /** `0x` + 40 lower-case hex. */
  contract: string;
  method: string;
  params: unknown[];
  result: unknown;
}

/** Everything one recording set holds, in the shapes `startFakeNeoNode` serves. */
export interface NeoRecordings {
  /** Verbose `getblock` results. */
  blocks: Record<string, unknown>[];
  applicationLogs: RecordedApplicationLog[];
  /** Verbose `getrawtransaction` results. */
  transactions: Record<string, unknown>[];
  /** `getcontractstate` results. */
  contracts: Record<string, unknown>[];
  /** `getassetstate` results. */
  assets: Record<string, unknown>[];
  invocations: RecordedInvocation[];
}

/** A NEP-5 transfer as `expected_nep5_transfers.json` lists it. */
export interface ExpectedNep5Transfer {
  contract: string;
  notify_index: number;
  from_scripthash: string | null;
  from_address: string | null;
  to_scripthash: string | null;
  to_address: string | null;
  amount_raw: string;
  amount_encoding: 'ByteArray' | 'Integer';
  vmstate: string;
  counted: boolean;
}

/** One request/response pair of neon-js's TestNet `rpc_cases.json`. */
export interface RpcCase {
  name: string;
  method: string;
  params: unknown[];
  response: { result?: unknown; error?: { code: number; message: string } };
}

/** Absolute path under `fixtures/`. */
export function neoFixturePath(...parts: string[]): string {
  return join(repoRoot(), 'fixtures', ...parts);
}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}

/**
 * The neo-scan mainnet recordings (`fixtures/neo-legacy/mainnet-neoscan`), read through its
 * `INDEX.json`, which names the method and params of every file.
 */
export function loadNeoscanRecordings(): NeoRecordings {
  const dir = neoFixturePath('neo-legacy', 'mainnet-neoscan');
  const index = readJson(join(dir, 'INDEX.json')) as Record<string, { method: string; params: unknown[] }>;
  const set: NeoRecordings = {
    blocks: [],
    applicationLogs: [],
    transactions: [],
    contracts: [],
    assets: [],
    invocations: [],
  };
  for (const [file, { method, params }] of Object.entries(index)) {
    const result = (readJson(join(dir, file)) as { result: Record<string, unknown> }).result;
    switch (method) {
      case 'getblock':
        set.blocks.push(result);
        break;
      case 'getapplicationlog':
        set.applicationLogs.push({ txid: prefixed(String(params[0]).toLowerCase()), result });
        break;
      case 'getrawtransaction':
        set.transactions.push(result);
        break;
      case 'getcontractstate':
        set.contracts.push(result);
        break;
      case 'getassetstate':
        set.assets.push(result);
        break;
      case 'invokefunction':
        set.invocations.push({
          contract: prefixed(String(params[0]).toLowerCase()),
          method: String(params[1]),
          params: (params[2] as unknown[] | undefined) ?? [],
          result,
        });
        break;
      default:
        throw new Error(`INDEX.json names an unexpected method ${method}`);
    }
  }
  set.blocks.sort((a, b) => (a.index as number) - (b.index as number));
  return set;
}

/** `expected_nep5_transfers.json`: txid (bare hex, as in the file) → its transfers. */
export function loadExpectedNep5Transfers(): Record<string, ExpectedNep5Transfer[]> {
  return readJson(neoFixturePath('neo-legacy', 'mainnet-neoscan', 'expected_nep5_transfers.json')) as Record<
    string,
    ExpectedNep5Transfer[]
  >;
}

/** neon-js's TestNet cases (`fixtures/neo-legacy/testnet-neonjs/rpc_cases.json`). */
export function loadRpcCases(): RpcCase[] {
  return readJson(neoFixturePath('neo-legacy', 'testnet-neonjs', 'rpc_cases.json')) as RpcCase[];
}

/** neo-go 2.x RPC client examples (`fixtures/neo-format-examples/`): other nodes' answer shapes. */
export function loadNeoGoExamples(): { method: string; response: { result: unknown } }[] {
  return readJson(neoFixturePath('neo-format-examples', 'neo-go-master-2.x_rpc_client_examples.json')) as {
    method: string;
    response: { result: unknown };
  }[];
}

function prefixed(hash: string): string {
  return hash.startsWith('0x') ? hash : `0x${hash}`;
}
