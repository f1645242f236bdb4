import {
  type AbiArg,
  bytes32ToText,
  decodeBytes32,
  decodeStringBytes,
  decodeUint,
  encodeArgs,
  encodeCall,
  textToBytes32,
} from './abi.js';
import { call, callBatch, getAccounts, sendTransaction, waitForReceipt } from './chain.js';
import {
  Bytes32Token,
  CappedDemoToken,
  type CompiledContract,
  DemoNft,
  DemoToken,
} from './contracts.generated.js';
import { DevchainError } from './rpc.js';

/** Which demo contract a token is. `six-decimals` is a DemoToken with decimals 6. */
export type DemoTokenKind = 'standard' | 'six-decimals' | 'capped' | 'bytes32';

/** A token deployed on the dev chain. Addresses are lower case. */
export interface DeployedToken {
  address: string;
  kind: DemoTokenKind;
  name: string;
  symbol: string;
  decimals: number;
  /** Only for capped tokens, whose contract has `cap()`. */
  cap?: bigint;
  /** Minted to the deployer at construction. */
  initialSupply: bigint;
  /** The account that deployed it, holds the initial supply and may `mint`. */
  deployer: string;
  /** Block the deployment was mined in. */
  blockNumber: number;
}

/** What to deploy with `deployToken`. */
export interface TokenSpec {
  kind: DemoTokenKind;
  /** Text, or raw bytes to test decoders (NUL padding, invalid UTF-8). At most 32 bytes for `bytes32`. */
  name: string | Uint8Array;
  symbol: string | Uint8Array;
  decimals: number;
  /** Raw units (already scaled by decimals). */
  initialSupply: bigint;
  /** Raw units; required for `capped`, ignored otherwise. */
  cap?: bigint;
}

/** ERC-20 `Transfer(address,address,uint256)` topic: topic0 of both ERC-20 and ERC-721 transfers. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/**
 * The 4-byte selector of a function, as 8 hex characters. The ERC-20 part of the ABI is identical in
 * every token contract, so DemoToken's selectors serve them all by default.
 */
export function selector(signature: string, contract: CompiledContract = DemoToken): string {
  const s = contract.selectors[signature];
  if (!s) throw new DevchainError(`${contract.name} has no function ${signature}`);
  return s;
}

/** Accepts a deployed token or a bare address. */
export type TokenRef = string | { address: string };

/** The lower-case address of a token reference. */
export function addressOf(token: TokenRef): string {
  return typeof token === 'string' ? token.toLowerCase() : token.address.toLowerCase();
}

function textBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

function asText(value: string | Uint8Array): string {
  return typeof value === 'string' ? value : Buffer.from(value).toString('utf8');
}

/** `from`, else the first dev account (the deployer of the demo set). */
export async function defaultFrom(url: string, from: string | undefined): Promise<string> {
  if (from) return from.toLowerCase();
  const [first] = await getAccounts(url);
  if (!first) throw new DevchainError('the node has no unlocked accounts');
  return first;
}

function constructorCall(spec: TokenSpec): { contract: CompiledContract; args: AbiArg[] } {
  const decimals: AbiArg = { type: 'uint8', value: spec.decimals };
  const supply: AbiArg = { type: 'uint256', value: spec.initialSupply };
  switch (spec.kind) {
    case 'standard':
    case 'six-decimals':
      return {
        contract: DemoToken,
        args: [
          { type: 'string', value: spec.name },
          { type: 'string', value: spec.symbol },
          decimals,
          supply,
        ],
      };
    case 'capped':
      if (spec.cap === undefined || spec.cap <= 0n)
        throw new DevchainError('a capped token needs a positive cap');
      return {
        contract: CappedDemoToken,
        args: [
          { type: 'string', value: spec.name },
          { type: 'string', value: spec.symbol },
          decimals,
          supply,
          { type: 'uint256', value: spec.cap },
        ],
      };
    case 'bytes32': {
      const toBytes32 = (v: string | Uint8Array): Uint8Array => {
        if (typeof v === 'string') return textToBytes32(v);
        if (v.length > 32) throw new DevchainError('bytes32 name or symbol longer than 32 bytes');
        return v;
      };
      return {
        contract: Bytes32Token,
        args: [
          { type: 'bytes32', value: toBytes32(spec.name) },
          { type: 'bytes32', value: toBytes32(spec.symbol) },
          decimals,
          supply,
        ],
      };
    }
  }
}

async function deployContract(
  url: string,
  contract: CompiledContract,
  args: readonly AbiArg[],
  from: string,
) {
  const hash = await sendTransaction(url, { from, data: contract.bytecode + encodeArgs(args) });
  const receipt = await waitForReceipt(url, hash);
  if (!receipt.contractAddress) throw new DevchainError(`deployment of ${contract.name} created no contract`);
  return { address: receipt.contractAddress, blockNumber: receipt.blockNumber };
}

/** Deploys one token from `from` (default: the first dev account) and waits for it to be mined. */
export async function deployToken(
  url: string,
  spec: TokenSpec,
  options: { from?: string } = {},
): Promise<DeployedToken> {
  if (!Number.isInteger(spec.decimals) || spec.decimals < 0 || spec.decimals > 255) {
    throw new DevchainError(`decimals must be an integer in [0, 255], got ${spec.decimals}`);
  }
  const from = await defaultFrom(url, options.from);
  const { contract, args } = constructorCall(spec);
  const { address, blockNumber } = await deployContract(url, contract, args, from);
  return describeToken(spec, address, from, blockNumber);
}

/** What was deployed, with a bytes32 name or symbol read back the way the contract will answer it. */
function describeToken(
  spec: TokenSpec,
  address: string,
  deployer: string,
  blockNumber: number,
): DeployedToken {
  const text = (value: string | Uint8Array): string =>
    spec.kind === 'bytes32' ? bytes32ToText(padTo32(textBytes(value))) : asText(value);
  const token: DeployedToken = {
    address,
    kind: spec.kind,
    name: text(spec.name),
    symbol: text(spec.symbol),
    decimals: spec.decimals,
    initialSupply: spec.initialSupply,
    deployer,
    blockNumber,
  };
  if (spec.kind === 'capped') token.cap = spec.cap!;
  return token;
}

function padTo32(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  out.set(bytes.subarray(0, 32));
  return out;
}

/** The demo set, in deployment order. Supplies are 1e9 whole tokens; the capped token's cap is 2e9. */
export const DEMO_TOKEN_SPECS: readonly TokenSpec[] = [
  {
    kind: 'standard',
    name: 'Demo Token',
    symbol: 'DEMO',
    decimals: 18,
    initialSupply: 10n ** 9n * 10n ** 18n,
  },
  {
    kind: 'six-decimals',
    name: 'Demo Dollar',
    symbol: 'DUSD',
    decimals: 6,
    initialSupply: 10n ** 9n * 10n ** 6n,
  },
  {
    kind: 'capped',
    name: 'Capped Demo',
    symbol: 'CAPD',
    decimals: 18,
    initialSupply: 10n ** 9n * 10n ** 18n,
    cap: 2n * 10n ** 9n * 10n ** 18n,
  },
  {
    kind: 'bytes32',
    name: 'Bytes32 Demo',
    symbol: 'B32D',
    decimals: 18,
    initialSupply: 10n ** 9n * 10n ** 18n,
  },
];

/**
 * Deploys the demo set (standard 18 decimals, 6 decimals, capped, bytes32 name/symbol) from the first
 * dev account, or `from`. The transactions are sent together and then awaited, so with interval mining
 * they share a block instead of taking one block time each.
 */
export async function deployDemoTokens(
  url: string,
  options: { from?: string } = {},
): Promise<DeployedToken[]> {
  const from = await defaultFrom(url, options.from);
  // Sent one after another (anvil assigns consecutive nonces), then awaited together.
  const hashes: string[] = [];
  for (const spec of DEMO_TOKEN_SPECS) {
    const { contract, args } = constructorCall(spec);
    hashes.push(await sendTransaction(url, { from, data: contract.bytecode + encodeArgs(args) }));
  }
  return Promise.all(
    hashes.map(async (hash, i) => {
      const spec = DEMO_TOKEN_SPECS[i]!;
      const receipt = await waitForReceipt(url, hash);
      if (!receipt.contractAddress)
        throw new DevchainError(`deployment of the ${spec.kind} token created no contract`);
      return describeToken(spec, receipt.contractAddress, from, receipt.blockNumber);
    }),
  );
}

/** Deploys a minimal ERC-721 (`DemoNft`), whose 4-topic Transfer logs an indexer must not count as fungible. */
export async function deployDemoNft(
  url: string,
  options: { name?: string; symbol?: string; from?: string } = {},
): Promise<{ address: string; blockNumber: number }> {
  const from = await defaultFrom(url, options.from);
  return deployContract(
    url,
    DemoNft,
    [
      { type: 'string', value: options.name ?? 'Demo NFT' },
      { type: 'string', value: options.symbol ?? 'DNFT' },
    ],
    from,
  );
}

/** Mints the next NFT id to `to` and returns the transaction hash once mined. */
export async function mintNft(
  url: string,
  nft: TokenRef,
  to: string,
  options: { from?: string } = {},
): Promise<string> {
  const from = await defaultFrom(url, options.from);
  const data = encodeCall(selector('mint(address)', DemoNft), [{ type: 'address', value: to }]);
  const hash = await sendTransaction(url, { from, to: addressOf(nft), data });
  await waitForReceipt(url, hash);
  return hash;
}

/** `balanceOf(holder)` at `latest` or the given block. */
export async function balanceOf(
  url: string,
  token: TokenRef,
  holder: string,
  block: number | 'latest' = 'latest',
): Promise<bigint> {
  const data = encodeCall(selector('balanceOf(address)'), [{ type: 'address', value: holder }]);
  return decodeUint(await call(url, addressOf(token), data, block));
}

/** `balanceOf` of many holders in JSON-RPC batches of 500, results in holder order. */
export async function balancesOf(
  url: string,
  token: TokenRef,
  holders: readonly string[],
  block: number | 'latest' = 'latest',
): Promise<bigint[]> {
  const out: bigint[] = [];
  const to = addressOf(token);
  for (let i = 0; i < holders.length; i += 500) {
    const calls = holders.slice(i, i + 500).map((h) => ({
      to,
      data: encodeCall(selector('balanceOf(address)'), [{ type: 'address', value: h }]),
    }));
    for (const result of await callBatch(url, calls, block)) out.push(decodeUint(result));
  }
  return out;
}

/** `totalSupply()` at `latest` or the given block. */
export async function totalSupply(
  url: string,
  token: TokenRef,
  block: number | 'latest' = 'latest',
): Promise<bigint> {
  return decodeUint(await call(url, addressOf(token), encodeCall(selector('totalSupply()')), block));
}

/** Reads `decimals()`. */
export async function readDecimals(url: string, token: TokenRef): Promise<number> {
  return Number(decodeUint(await call(url, addressOf(token), encodeCall(selector('decimals()')))));
}

/**
 * Reads name and symbol as the contract returns them: a `string` for most tokens, a `bytes32` for
 * MKR-style ones (`kind` tells which; the returned text has trailing NULs removed either way).
 */
export async function readNameSymbol(
  url: string,
  token: TokenRef,
  kind: 'string' | 'bytes32' = 'string',
): Promise<{ name: string; symbol: string }> {
  const [name, symbol] = await callBatch(url, [
    { to: addressOf(token), data: encodeCall(selector('name()')) },
    { to: addressOf(token), data: encodeCall(selector('symbol()')) },
  ]);
  const read = (hex: string): string =>
    kind === 'bytes32' ? bytes32ToText(decodeBytes32(hex)) : bytes32ToText(decodeStringBytes(hex));
  return { name: read(name!), symbol: read(symbol!) };
}

async function sendAndWait(url: string, from: string, to: string, data: string): Promise<string> {
  const hash = await sendTransaction(url, { from, to, data });
  await waitForReceipt(url, hash);
  return hash;
}

/** One ERC-20 `transfer` from an unlocked account; resolves with the hash once mined. */
export async function transferToken(
  url: string,
  token: TokenRef,
  args: { from: string; to: string; amount: bigint },
): Promise<string> {
  const data = encodeCall(selector('transfer(address,uint256)'), [
    { type: 'address', value: args.to },
    { type: 'uint256', value: args.amount },
  ]);
  return sendAndWait(url, args.from, addressOf(token), data);
}

/** `mint(to, amount)` (a Transfer from 0x0); only the deployer may mint. Resolves once mined. */
export async function mintToken(
  url: string,
  token: TokenRef,
  args: { to: string; amount: bigint; from?: string },
): Promise<string> {
  const from = await defaultFrom(url, args.from);
  const data = encodeCall(selector('mint(address,uint256)'), [
    { type: 'address', value: args.to },
    { type: 'uint256', value: args.amount },
  ]);
  return sendAndWait(url, from, addressOf(token), data);
}

/** `burn(amount)` of the caller's balance (a Transfer to 0x0). Resolves once mined. */
export async function burnToken(
  url: string,
  token: TokenRef,
  args: { amount: bigint; from?: string },
): Promise<string> {
  const from = await defaultFrom(url, args.from);
  const data = encodeCall(selector('burn(uint256)'), [{ type: 'uint256', value: args.amount }]);
  return sendAndWait(url, from, addressOf(token), data);
}
