import type { TransferRecord } from '../../internal/records.js';
import type { BalanceEvent, BalanceEventKind, EvmLog } from './types.js';

/** keccak256("Transfer(address,address,uint256)"), shared by ERC-20 and ERC-721. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/**
 * topic0 of the events that move a token's balances without a `Transfer` log (docs/reliability.md,
 * "Exact balances"): WETH9's `Deposit(address indexed dst, uint wad)` and
 * `Withdrawal(address indexed src, uint wad)`, Tether's `Issue(uint amount)`, `Redeem(uint amount)`
 * and `DestroyedBlackFunds(address _blackListedUser, uint _balance)` (nothing indexed).
 */
export const BALANCE_EVENT_TOPICS: Readonly<Record<BalanceEventKind, string>> = {
  deposit: '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c',
  withdrawal: '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65',
  issue: '0xcb8241adb0c3fdb35b70c24ce35c5eb0c17af7431c99f827d44a445ca624176a',
  redeem: '0x702d5967f45f6513a38ffc42d6ba9bf230bd40e8f53b16363c7eb4fd2deb9a44',
  destroyedBlackFunds: '0x61e6e66b0d6339b2980aecc6ccc0039736791f0ccde9ed512e789a7fbdd698c6',
};

/** The balance event of each topic0 of {@link BALANCE_EVENT_TOPICS}. */
export const BALANCE_EVENT_OF_TOPIC: ReadonlyMap<string, BalanceEventKind> = new Map(
  Object.entries(BALANCE_EVENT_TOPICS).map(([kind, topic]) => [topic, kind as BalanceEventKind]),
);

/**
 * The topic0 alternatives every `eth_getLogs` of the indexer asks for (one request: a node
 * answers an OR of topics as cheaply as one topic): Transfer first, then the balance events.
 */
export const INDEXED_TOPICS: readonly string[] = [TRANSFER_TOPIC, ...Object.values(BALANCE_EVENT_TOPICS)];

/**
 * The (non-indexed) topics and 32-byte data words of each balance event in the layout the
 * contracts that define it emit. A log with the same topic0 in another layout (a contract that
 * declared `Deposit(address, uint256)` without `indexed`) is another event and is ignored.
 */
export const BALANCE_EVENT_LAYOUT: Readonly<Record<BalanceEventKind, { topics: number; words: number }>> = {
  deposit: { topics: 2, words: 1 },
  withdrawal: { topics: 2, words: 1 },
  issue: { topics: 1, words: 1 },
  redeem: { topics: 1, words: 1 },
  destroyedBlackFunds: { topics: 1, words: 2 },
};

/**
 * Decodes a balance event (see {@link BALANCE_EVENT_TOPICS}) in its contract's layout, or null for
 * anything else. `holder` is null for `Issue`/`Redeem`: they credit and debit the contract's
 * `owner()` at the block, which only a node call can tell.
 */
export function decodeBalanceEventLog(log: EvmLog): BalanceEvent | null {
  const topic0 = log.topics[0];
  if (topic0 === undefined) return null;
  const kind = BALANCE_EVENT_OF_TOPIC.get(topic0.toLowerCase());
  if (kind === undefined) return null;
  const layout = BALANCE_EVENT_LAYOUT[kind];
  if (log.topics.length !== layout.topics || log.data.length !== 2 + 64 * layout.words) return null;
  if (!HEX_BODY.test(log.data.slice(2))) return null;
  const data = log.data.toLowerCase();
  let holder: string | null = null;
  if (layout.topics === 2) holder = `0x${log.topics[1]!.slice(-40).toLowerCase()}`;
  else if (kind === 'destroyedBlackFunds') holder = `0x${data.slice(26, 66)}`;
  return {
    kind,
    token: log.address.toLowerCase(),
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    txHash: log.transactionHash.toLowerCase(),
    holder,
    amount: BigInt(`0x${data.slice(2 + 64 * (layout.words - 1))}`),
  };
}

/** 4-byte selectors of the read-only functions we call. */
export const SELECTORS = {
  name: '0x06fdde03',
  symbol: '0x95d89b41',
  decimals: '0x313ce567',
  totalSupply: '0x18160ddd',
  cap: '0x355274ea',
  balanceOf: '0x70a08231',
  owner: '0x8da5cb5b',
} as const;

const HEX_BODY = /^(?:[0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Decodes a fungible ERC-20 `Transfer(address indexed, address indexed, uint256)` log.
 * Returns null for anything else, ERC-721 transfers included (they share the topic but
 * carry the token id as a fourth topic and no data).
 */
export function decodeTransferLog(log: EvmLog, time: number): TransferRecord | null {
  const [topic0, fromTopic, toTopic] = log.topics;
  if (log.topics.length !== 3 || topic0 === undefined || fromTopic === undefined || toTopic === undefined) {
    return null;
  }
  if (topic0.toLowerCase() !== TRANSFER_TOPIC) return null;
  if (log.data.length !== 66 || !HEX_BODY.test(log.data.slice(2))) return null;
  return {
    token: log.address.toLowerCase(),
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    txIndex: log.transactionIndex,
    txHash: log.transactionHash.toLowerCase(),
    // An indexed address is left-padded to 32 bytes; the address is the low 20 bytes.
    from: `0x${fromTopic.slice(-40).toLowerCase()}`,
    to: `0x${toTopic.slice(-40).toLowerCase()}`,
    value: BigInt(log.data),
    time,
  };
}

/** Bytes of a `0x` hex string, or null when it is not well-formed hex. */
function hexToBytes(hex: string): Uint8Array | null {
  if (!hex.startsWith('0x') && !hex.startsWith('0X')) return null;
  const body = hex.slice(2);
  if (!HEX_BODY.test(body)) return null;
  return Uint8Array.from(Buffer.from(body, 'hex'));
}

/** Big-endian unsigned integer of a byte slice. */
function bytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  return BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}

// Non-fatal: malformed UTF-8 becomes U+FFFD instead of failing the token.
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

function bytesToText(bytes: Uint8Array): string {
  return utf8.decode(bytes).replace(/\0+$/, '');
}

/**
 * Decodes the answer of `name()`/`symbol()`: an ABI `string`, or a `bytes32` as older tokens
 * (MKR, SAI, EOS) return. Trailing NUL characters are trimmed from both forms, invalid
 * UTF-8 is replaced, and an empty, `0x` or malformed answer reads `""`.
 */
export function decodeAbiStringOrBytes32(hex: string): string {
  const bytes = hexToBytes(hex);
  if (bytes === null || bytes.length === 0) return '';
  if (bytes.length >= 64) {
    // ABI string: a head word holding the offset, then length and data at that offset.
    const offset = bytesToBigInt(bytes.subarray(0, 32));
    if (offset <= BigInt(bytes.length - 32)) {
      const start = Number(offset);
      const length = bytesToBigInt(bytes.subarray(start, start + 32));
      if (length <= BigInt(bytes.length - start - 32)) {
        return bytesToText(bytes.subarray(start + 32, start + 32 + Number(length)));
      }
    }
    return '';
  }
  if (bytes.length === 32) return bytesToText(bytes);
  return '';
}

/** First 32-byte word of an `eth_call` answer as uint256, or null when there is none. */
export function decodeUint(hex: string): bigint | null {
  const bytes = hexToBytes(hex);
  if (bytes === null || bytes.length < 32) return null;
  return bytesToBigInt(bytes.subarray(0, 32));
}

/** `decimals()` answer as a number: 0 when missing, malformed or above 255 (no real token has more). */
export function decodeDecimals(hex: string | null | undefined): number {
  if (hex === null || hex === undefined) return 0;
  const value = decodeUint(hex);
  if (value === null || value > 255n) return 0;
  return Number(value);
}

function encodeAddressWord(address: string): string {
  if (!ADDRESS.test(address)) throw new TypeError(`not an address: ${address}`);
  return address.slice(2).toLowerCase().padStart(64, '0');
}

/** Calldata builders for the read-only token functions. */
export const calldata = {
  name: (): string => SELECTORS.name,
  symbol: (): string => SELECTORS.symbol,
  decimals: (): string => SELECTORS.decimals,
  totalSupply: (): string => SELECTORS.totalSupply,
  cap: (): string => SELECTORS.cap,
  balanceOf: (owner: string): string => SELECTORS.balanceOf + encodeAddressWord(owner),
  owner: (): string => SELECTORS.owner,
};

/** The address of an `owner()` answer (one word, the address in its low 20 bytes), or null. */
export function decodeAddressWord(hex: string): string | null {
  const value = decodeUint(hex);
  if (value === null || value >= 1n << 160n) return null;
  return `0x${value.toString(16).padStart(40, '0')}`;
}

/**
 * Multicall3 (github.com/mds1/multicall3): deployed at this address on most EVM chains, through
 * a keyless transaction, so the address is the same everywhere it exists.
 */
export const MULTICALL3_ADDRESS = '0xca11bde05977b3631167028862be2a173976ca11';

/** `aggregate3((address,bool,bytes)[])`. */
const AGGREGATE3_SELECTOR = '0x82ad56cb';

const word = (n: number): string => n.toString(16).padStart(64, '0');

/**
 * Calldata of Multicall3's `aggregate3` with `allowFailure` set on every call: a call that
 * reverts answers `success = false` instead of reverting the whole batch.
 */
export function encodeAggregate3(calls: readonly { target: string; data: string }[]): string {
  const tuples = calls.map(({ target, data }) => {
    const body = data.slice(2);
    if (!HEX_BODY.test(body)) throw new TypeError(`not hex calldata: ${data}`);
    const length = body.length / 2;
    // (address, bool, offset of the bytes from the tuple's start: three head words), then the bytes.
    return `${encodeAddressWord(target)}${word(1)}${word(96)}${word(length)}${body.padEnd(Math.ceil(length / 32) * 64, '0')}`;
  });
  // The array: its length, the offset of each tuple (from the end of the length word), the tuples.
  let offset = calls.length * 32;
  const offsets = tuples.map((tuple) => {
    const at = offset;
    offset += tuple.length / 2;
    return word(at);
  });
  return `${AGGREGATE3_SELECTOR}${word(32)}${word(calls.length)}${offsets.join('')}${tuples.join('')}`;
}

/**
 * Decodes the `(bool success, bytes returnData)[]` answer of `aggregate3`, or null when it is
 * not a well-formed answer of `count` results (a contract at the address that is not Multicall3).
 */
export function decodeAggregate3(hex: string, count: number): { success: boolean; data: string }[] | null {
  const bytes = hexToBytes(hex);
  if (bytes === null) return null;
  const readWord = (at: number): number | null => {
    if (at < 0 || at + 32 > bytes.length) return null;
    const value = bytesToBigInt(bytes.subarray(at, at + 32));
    return value > BigInt(bytes.length) ? null : Number(value);
  };
  const arrayAt = readWord(0);
  if (arrayAt === null) return null;
  const length = readWord(arrayAt);
  if (length !== count) return null;
  const elements = arrayAt + 32;
  const out: { success: boolean; data: string }[] = [];
  for (let i = 0; i < count; i++) {
    const relative = readWord(elements + i * 32);
    if (relative === null) return null;
    const tuple = elements + relative;
    const success = readWord(tuple);
    const dataAt = readWord(tuple + 32);
    if (success === null || success > 1 || dataAt === null) return null;
    const dataLength = readWord(tuple + dataAt);
    const start = tuple + dataAt + 32;
    if (dataLength === null || start + dataLength > bytes.length) return null;
    out.push({
      success: success === 1,
      data: `0x${Buffer.from(bytes.subarray(start, start + dataLength)).toString('hex')}`,
    });
  }
  return out;
}

/** `0x` hex quantity of a non-negative integer, as JSON-RPC wants block numbers. */
export function toQuantity(value: number | bigint): string {
  return `0x${value.toString(16)}`;
}
