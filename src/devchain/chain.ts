import { DevchainError, quantityToNumber, rpc, rpcBatch, toQuantity } from './rpc.js';

/** A transaction for `eth_sendTransaction` from an unlocked anvil account (anvil fills nonce and fees). */
export interface TxRequest {
  from: string;
  to?: string;
  data?: string;
  value?: bigint;
  /** Gas limit. Default: anvil estimates it (which also fails fast when the call would revert). */
  gas?: bigint | number;
  nonce?: number;
}

/** The parts of a receipt the devchain looks at. */
export interface TxReceipt {
  transactionHash: string;
  blockNumber: number;
  blockHash: string;
  status: 'success' | 'reverted';
  gasUsed: bigint;
  contractAddress: string | null;
}

/** A mined transaction that reverted. anvil mines reverting transactions instead of refusing them. */
export class TransactionRevertedError extends DevchainError {
  override name = 'TransactionRevertedError';
  readonly receipt: TxReceipt;

  constructor(receipt: TxReceipt) {
    super(`transaction ${receipt.transactionHash} reverted in block ${receipt.blockNumber}`);
    this.receipt = receipt;
  }
}

function txParams(tx: TxRequest): Record<string, string> {
  const params: Record<string, string> = { from: tx.from };
  if (tx.to !== undefined) params.to = tx.to;
  if (tx.data !== undefined) params.data = tx.data;
  if (tx.value !== undefined) params.value = toQuantity(tx.value);
  if (tx.gas !== undefined) params.gas = toQuantity(BigInt(tx.gas));
  if (tx.nonce !== undefined) params.nonce = toQuantity(tx.nonce);
  return params;
}

/** Sends a transaction from an unlocked account and returns its hash (without waiting for it to be mined). */
export async function sendTransaction(url: string, tx: TxRequest): Promise<string> {
  return rpc<string>(url, 'eth_sendTransaction', [txParams(tx)]);
}

interface RawReceipt {
  transactionHash: string;
  blockNumber: string;
  blockHash: string;
  status: string;
  gasUsed: string;
  contractAddress: string | null;
}

/**
 * Polls until the transaction is mined, then returns its receipt; throws if it reverted (unless
 * `allowRevert`). With interval mining this waits up to one block time; the default timeout is 60 s.
 */
export async function waitForReceipt(
  url: string,
  hash: string,
  options: { timeoutMs?: number; allowRevert?: boolean } = {},
): Promise<TxReceipt> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const raw = await rpc<RawReceipt | null>(url, 'eth_getTransactionReceipt', [hash]);
    if (raw) {
      const receipt: TxReceipt = {
        transactionHash: raw.transactionHash,
        blockNumber: quantityToNumber(raw.blockNumber),
        blockHash: raw.blockHash,
        status: raw.status === '0x1' ? 'success' : 'reverted',
        gasUsed: BigInt(raw.gasUsed),
        contractAddress: raw.contractAddress ? raw.contractAddress.toLowerCase() : null,
      };
      if (receipt.status === 'reverted' && !options.allowRevert) throw new TransactionRevertedError(receipt);
      return receipt;
    }
    if (Date.now() > deadline) throw new DevchainError(`transaction ${hash} was not mined in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Polls `eth_getTransactionByHash` until the transaction is in a block and returns that block number.
 * Unlike a receipt this answer stays small when the transaction emitted thousands of logs.
 */
export async function waitForInclusion(url: string, hash: string, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tx = await rpc<{ blockNumber: string | null } | null>(url, 'eth_getTransactionByHash', [hash]);
    if (tx?.blockNumber) return quantityToNumber(tx.blockNumber);
    if (Date.now() > deadline) throw new DevchainError(`transaction ${hash} was not mined in time`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `eth_call` against `latest` (or the given block); returns the raw hex result. */
export async function call(
  url: string,
  to: string,
  data: string,
  block: number | 'latest' = 'latest',
): Promise<string> {
  return rpc<string>(url, 'eth_call', [{ to, data }, typeof block === 'number' ? toQuantity(block) : block]);
}

/** Several `eth_call`s in one JSON-RPC batch, results in order. */
export async function callBatch(
  url: string,
  calls: readonly { to: string; data: string }[],
  block: number | 'latest' = 'latest',
): Promise<string[]> {
  const tag = typeof block === 'number' ? toQuantity(block) : block;
  return rpcBatch<string>(
    url,
    calls.map((c) => ({ method: 'eth_call', params: [{ to: c.to, data: c.data }, tag] })),
  );
}

/** The unlocked dev accounts, lower case; the first one deploys and holds the initial supplies. */
export async function getAccounts(url: string): Promise<string[]> {
  const accounts = await rpc<string[]>(url, 'eth_accounts');
  return accounts.map((a) => a.toLowerCase());
}

/** The number of the newest block. */
export async function getBlockNumber(url: string): Promise<number> {
  return quantityToNumber(await rpc<string>(url, 'eth_blockNumber'));
}

/** The header fields the devchain and its tests look at. */
export interface BlockInfo {
  number: number;
  hash: string;
  parentHash: string;
  /** Unix seconds. */
  timestamp: number;
  gasUsed: bigint;
  gasLimit: bigint;
}

/** A block's header, or null past the head. */
export async function getBlock(url: string, block: number | 'latest'): Promise<BlockInfo | null> {
  const raw = await rpc<{
    number: string;
    hash: string;
    parentHash: string;
    timestamp: string;
    gasUsed: string;
    gasLimit: string;
  } | null>(url, 'eth_getBlockByNumber', [typeof block === 'number' ? toQuantity(block) : block, false]);
  if (!raw) return null;
  return {
    number: quantityToNumber(raw.number),
    hash: raw.hash,
    parentHash: raw.parentHash,
    timestamp: quantityToNumber(raw.timestamp),
    gasUsed: BigInt(raw.gasUsed),
    gasLimit: BigInt(raw.gasLimit),
  };
}

/** Mines `blocks` blocks at once (`anvil_mine`), empty unless transactions are pending. */
export async function mine(url: string, blocks = 1): Promise<void> {
  if (!Number.isInteger(blocks) || blocks < 1)
    throw new DevchainError(`blocks must be a positive integer, got ${blocks}`);
  await rpc(url, 'anvil_mine', [toQuantity(blocks)]);
}

/** A transaction to put into the replacement chain of a reorg, `blockOffset` blocks above the fork point. */
export interface ReorgTx {
  tx: TxRequest;
  /** 0 places it in the first replaced block; must be below `depth`. */
  blockOffset: number;
}

/**
 * Replaces the newest `depth` blocks with new ones (`anvil_reorg`): the chain keeps its height but
 * those heights get new hashes. The transactions of the replaced blocks are dropped unless re-sent;
 * `txs` places given transactions into the new blocks (anvil's `[depth, [[tx, blockOffset], ...]]`).
 */
export async function reorg(url: string, depth: number, txs: readonly ReorgTx[] = []): Promise<void> {
  if (!Number.isInteger(depth) || depth < 1)
    throw new DevchainError(`depth must be a positive integer, got ${depth}`);
  for (const t of txs) {
    if (!Number.isInteger(t.blockOffset) || t.blockOffset < 0 || t.blockOffset >= depth) {
      throw new DevchainError(`reorg blockOffset must be in [0, ${depth - 1}], got ${t.blockOffset}`);
    }
  }
  await rpc(url, 'anvil_reorg', [depth, txs.map((t) => [txParams(t.tx), t.blockOffset])]);
}

/** Turns automine on or off (`evm_setAutomine`); with it off, transactions wait for `mine()`. */
export async function setAutomine(url: string, enabled: boolean): Promise<void> {
  await rpc(url, 'evm_setAutomine', [enabled]);
}
