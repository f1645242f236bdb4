import { mulberry32 } from '../internal/random.js';
import { decodeAddress, decodeUint, encodeCall } from './abi.js';
import {
  call,
  callBatch,
  getAccounts,
  getBlock,
  sendTransaction,
  waitForInclusion,
  waitForReceipt,
} from './chain.js';
import {
  addressOf,
  balanceOf,
  type DeployedToken,
  defaultFrom,
  readDecimals,
  selector,
  type TokenRef,
} from './deploy.js';
import { DevchainError } from './rpc.js';

/** A transfer sent by `sendTransfers`. */
export interface SentTransfer {
  token: string;
  from: string;
  to: string;
  amount: bigint;
  hash: string;
}

/** Options of `sendTransfers`. */
export interface SendTransfersOptions {
  /** Number of `transfer` transactions to send. */
  count: number;
  /** PRNG seed. Default: 1. */
  seed?: number;
  /** Besides the dev accounts, how many seed-derived addresses receive tokens. Default: 20. */
  extraRecipients?: number;
  /** Wait until every transfer is mined (and check none reverted). Default: true. */
  wait?: boolean;
}

/**
 * Sends `count` ordinary ERC-20 `transfer` transactions (one Transfer event each), the traffic of a live
 * demo. Senders are the dev accounts; receivers are dev accounts and `extraRecipients` seed-derived
 * addresses. A dev account that holds too little is first funded with 1000 tokens by the token's
 * deployer (that funding transfer counts towards `count`). Amounts are 0.01 to 100 tokens.
 * With interval mining a sender only spends tokens it received once the incoming transfer is mined,
 * so no transfer can revert for the order transactions land in within a block.
 */
export async function sendTransfers(
  url: string,
  tokens: readonly (DeployedToken | string)[],
  options: SendTransfersOptions,
): Promise<SentTransfer[]> {
  if (tokens.length === 0) throw new DevchainError('sendTransfers needs at least one token');
  const accounts = await getAccounts(url);
  if (accounts.length === 0) throw new DevchainError('the node has no unlocked accounts');
  const next = mulberry32(options.seed ?? 1);
  const extra = Array.from({ length: options.extraRecipients ?? 20 }, () => {
    let hex = '0x';
    for (let i = 0; i < 5; i++) hex += next().toString(16).padStart(8, '0');
    return hex;
  });
  const recipients = [...accounts, ...extra];

  const resolved = await Promise.all(
    tokens.map(async (t) =>
      typeof t === 'string'
        ? { address: t.toLowerCase(), decimals: await readDecimals(url, t), deployer: accounts[0]! }
        : { address: t.address, decimals: t.decimals, deployer: t.deployer },
    ),
  );

  // Balances as this function will have left them, plus incoming amounts that may not be mined yet.
  const balances = new Map<string, bigint>();
  const unsettled = new Map<string, { amount: bigint; hashes: string[] }>();
  const key = (token: string, account: string): string => `${token}:${account}`;
  const balance = async (token: string, account: string): Promise<bigint> => {
    const k = key(token, account);
    let b = balances.get(k);
    if (b === undefined) {
      b = await balanceOf(url, token, account);
      balances.set(k, b);
    }
    return b;
  };
  const spendable = async (token: string, account: string, amount: bigint): Promise<boolean> => {
    const total = await balance(token, account);
    const u = unsettled.get(key(token, account));
    if (!u || total - u.amount >= amount) return total >= amount;
    if (total < amount) return false;
    for (const h of u.hashes) await waitForInclusion(url, h);
    unsettled.delete(key(token, account));
    return true;
  };

  const sent: SentTransfer[] = [];
  const send = async (token: string, from: string, to: string, amount: bigint): Promise<void> => {
    const data = encodeCall(selector('transfer(address,uint256)'), [
      { type: 'address', value: to },
      { type: 'uint256', value: amount },
    ]);
    // Read both balances before sending: once the transfer is mined a first read would already include it.
    const fromBefore = await balance(token, from);
    const toBefore = await balance(token, to);
    // An explicit gas limit skips anvil's estimation round trip; a transfer needs well under 100k.
    const hash = await sendTransaction(url, { from, to: token, data, gas: 100_000 });
    balances.set(key(token, from), fromBefore - amount);
    balances.set(key(token, to), toBefore + amount);
    const u = unsettled.get(key(token, to)) ?? { amount: 0n, hashes: [] };
    u.amount += amount;
    u.hashes.push(hash);
    unsettled.set(key(token, to), u);
    sent.push({ token, from, to, amount, hash });
  };

  for (let i = 0; i < options.count; i++) {
    const token = resolved[next() % resolved.length]!;
    const unit = 10n ** BigInt(token.decimals);
    const from = accounts[next() % accounts.length]!;
    let to = recipients[next() % recipients.length]!;
    if (to === from) to = recipients[(recipients.indexOf(to) + 1) % recipients.length]!;
    const amount = (unit * BigInt((next() % 10_000) + 1)) / 100n || 1n;
    if (await spendable(token.address, from, amount)) {
      await send(token.address, from, to, amount);
    } else {
      const fund = unit * 1000n;
      if (from === token.deployer || !(await spendable(token.address, token.deployer, fund))) {
        throw new DevchainError(
          `the deployer of ${token.address} has too little left to fund demo transfers`,
        );
      }
      await send(token.address, token.deployer, from, fund);
    }
  }
  if (options.wait ?? true) {
    for (const s of sent) await waitForReceipt(url, s.hash);
  }
  return sent;
}

/** Options of `spray`. */
export interface SprayOptions {
  /** Number of transfers (Transfer events) to generate in total. */
  transfers: number;
  /** Number of seed-derived holder addresses the transfers move between (at least 2). */
  holders: number;
  /** Derives the holder addresses; the same seed reuses the same holders. Default: 1. */
  seed?: bigint | number;
  /**
   * Transfers per transaction. Default: 10,000, lowered to what fits in the block gas limit (budgeting
   * 32,000 gas per transfer, the worst case of two cold storage writes, one of them zero to non-zero).
   * 10,000 needs a block gas limit of at least 320,100,000: start anvil with `SPRAY_GAS_LIMIT`.
   */
  perTx?: number;
  /** Sender; its token balance funds the holders (1000 tokens each as needed). Default: the first dev account. */
  from?: string;
}

/** What `spray` did. */
export interface SprayResult {
  transfers: number;
  transactions: number;
  perTx: number;
  /** First and last block holding spray transactions. */
  fromBlock: number;
  toBlock: number;
  /** Gas used by the spray transactions, when each had its block to itself (automine); else null. */
  gasUsed: bigint | null;
  elapsedMs: number;
  /** Transfers generated per second of wall time, sending and mining included. */
  transfersPerSecond: number;
}

/**
 * A block gas limit for bulk spraying (`startAnvil({ gasLimit: SPRAY_GAS_LIMIT })`): room for the default
 * 10,000 transfers per transaction, and blocks stay under half full so anvil's base fee does not climb.
 */
export const SPRAY_GAS_LIMIT = 1_000_000_000n;

/** Worst-case gas of one spray step, see `SprayOptions.perTx`. */
const SPRAY_GAS_PER_TRANSFER = 32_000;
const SPRAY_GAS_BASE = 100_000;

/**
 * Generates `transfers` real ERC-20 transfers among `holders` seed-derived addresses by calling the
 * token's `spray(count, holders, seed)` in transactions of `perTx` transfers. Transactions are sent
 * back to back, as many at a time as fit in one block (anvil orders them by nonce). Success is checked
 * through the token's `sprayed()` counter rather than receipts, which would carry every log.
 */
export async function spray(url: string, token: TokenRef, options: SprayOptions): Promise<SprayResult> {
  const { transfers, holders } = options;
  if (!Number.isInteger(transfers) || transfers < 1)
    throw new DevchainError('transfers must be a positive integer');
  if (!Number.isInteger(holders) || holders < 2)
    throw new DevchainError('holders must be an integer of at least 2');
  const address = addressOf(token);
  const from = await defaultFrom(url, options.from);
  const seed = BigInt(options.seed ?? 1);

  const head = await getBlock(url, 'latest');
  if (!head) throw new DevchainError('the node has no latest block');
  const blockGasLimit = head.gasLimit;
  const fitting = Math.floor(Number(blockGasLimit - BigInt(SPRAY_GAS_BASE)) / SPRAY_GAS_PER_TRANSFER);
  const perTx = Math.max(1, Math.min(options.perTx ?? 10_000, fitting, transfers));
  if (options.perTx !== undefined && options.perTx > fitting) {
    throw new DevchainError(
      `perTx ${options.perTx} does not fit in the block gas limit ${blockGasLimit} (at most ${fitting}); start anvil with a larger gasLimit`,
    );
  }

  const sprayedBefore = decodeUint(await call(url, address, encodeCall(selector('sprayed()'))));
  const started = performance.now();
  // Keep in flight only as many transactions as fit in one block together. With automine, anvil mines
  // when a transaction arrives and leaves what does not fit pending until the next arrival, so a
  // surplus sent at the end would never be mined.
  const txGas = SPRAY_GAS_BASE + perTx * SPRAY_GAS_PER_TRANSFER;
  const maxInFlight = Math.max(1, Number(blockGasLimit / BigInt(txGas)));
  const hashes: string[] = [];
  const blocks: number[] = [];
  for (let done = 0; done < transfers; done += perTx) {
    if (hashes.length - blocks.length >= maxInFlight)
      blocks.push(await waitForInclusion(url, hashes[blocks.length]!, 600_000));
    const count = Math.min(perTx, transfers - done);
    const data = encodeCall(selector('spray(uint256,uint256,uint256)'), [
      { type: 'uint256', value: count },
      { type: 'uint256', value: holders },
      { type: 'uint256', value: seed },
    ]);
    const gas = SPRAY_GAS_BASE + count * SPRAY_GAS_PER_TRANSFER;
    hashes.push(await sendTransaction(url, { from, to: address, data, gas }));
  }
  while (blocks.length < hashes.length)
    blocks.push(await waitForInclusion(url, hashes[blocks.length]!, 600_000));
  const elapsedMs = performance.now() - started;

  const sprayedAfter = decodeUint(await call(url, address, encodeCall(selector('sprayed()'))));
  if (sprayedAfter - sprayedBefore !== BigInt(transfers)) {
    // Find the culprit only on failure: its receipt is small because a reverted call has no logs.
    for (const h of hashes) {
      const receipt = await waitForReceipt(url, h, { allowRevert: true });
      if (receipt.status === 'reverted') {
        throw new DevchainError(`spray transaction ${h} reverted`, {
          details: `sender ${from} needs about ${holders} x 1000 tokens to fund the holders, and enough gas`,
        });
      }
    }
    throw new DevchainError(
      `spray generated ${sprayedAfter - sprayedBefore} transfers, expected ${transfers}`,
    );
  }

  const fromBlock = Math.min(...blocks);
  const toBlock = Math.max(...blocks);
  let gasUsed: bigint | null = null;
  if (new Set(blocks).size === hashes.length && fromBlock > head.number) {
    gasUsed = 0n;
    for (const b of new Set(blocks)) gasUsed += (await getBlock(url, b))?.gasUsed ?? 0n;
  }
  return {
    transfers,
    transactions: hashes.length,
    perTx,
    fromBlock,
    toBlock,
    gasUsed,
    elapsedMs,
    transfersPerSecond: transfers / (elapsedMs / 1000),
  };
}

/** The first `count` spray holder addresses for `seed`, read from the contract's `sprayHolder` (batched). */
export async function sprayHolders(
  url: string,
  token: TokenRef,
  seed: bigint | number,
  count: number,
): Promise<string[]> {
  const to = addressOf(token);
  const out: string[] = [];
  for (let i = 0; i < count; i += 500) {
    const calls = [];
    for (let j = i; j < Math.min(count, i + 500); j++) {
      calls.push({
        to,
        data: encodeCall(selector('sprayHolder(uint256,uint256)'), [
          { type: 'uint256', value: BigInt(seed) },
          { type: 'uint256', value: j },
        ]),
      });
    }
    for (const result of await callBatch(url, calls)) out.push(decodeAddress(result));
  }
  return out;
}
