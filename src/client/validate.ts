/**
 * Runtime checks of the server's answers against the contract, so that a wrong server gives
 * one clear error naming the field (`data.tokenInfo.d is a number, expected numeric text`),
 * never `undefined` deep inside the caller's code. A check returns the value it was given
 * (extra keys a server adds pass through untouched) typed as the contract says.
 *
 * Strict where the contract is exact (JSON types, amounts as exact decimal text, keys shown as
 * `null`); lenient only where Tokenview's documentation allows more (see `types.ts`).
 */
import type {
  EvmBalanceEntry,
  EvmTokenPage,
  EvmTokenSummary,
  EvmTransfer,
  HolderPage,
  NeoAssetPage,
  NeoAssetSummary,
  NeoBalanceEntry,
  NeoContract,
  NeoTokenInfo,
  NeoTokenSummary,
  NeoTransfer,
  TokenqueryStatus,
} from './types.js';

/** A failed check: `path` is where in the answer (`data.tokenInfo.d`), `problem` what is wrong there. */
export class ShapeError extends Error {
  override name = 'ShapeError';
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} ${problem}`);
  }
}

/** Checks `value` found at `path` and returns it typed, or throws a {@link ShapeError}. */
export type Check<T> = (value: unknown, path: string) => T;

/** How a JSON value is named in messages. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return value.length > 40 ? 'a long string' : `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  return `a ${typeof value}`;
}

const fail = (path: string, value: unknown, expected: string): never => {
  throw new ShapeError(path, `is ${describe(value)}, expected ${expected}`);
};

export const string: Check<string> = (value, path) =>
  typeof value === 'string' ? value : fail(path, value, 'a string');

/** Counts, block numbers, times: JSON integers a float cannot have rounded. */
export const integer: Check<number> = (value, path) =>
  typeof value === 'number' && Number.isSafeInteger(value) ? value : fail(path, value, 'an integer');

export const boolean: Check<boolean> = (value, path) =>
  typeof value === 'boolean' ? value : fail(path, value, 'a boolean');

export const nullOnly: Check<null> = (value, path) => (value === null ? null : fail(path, value, 'null'));

const INTEGER_TEXT = /^[0-9]+$/;
const DECIMAL_TEXT = /^[0-9]+(?:\.[0-9]+)?$/;

/** Digits only: raw amounts, decimals, Unix times as text. */
export const integerText: Check<string> = (value, path) =>
  typeof value === 'string' && INTEGER_TEXT.test(value)
    ? value
    : fail(path, value, 'integer text (digits only)');

/** Exact decimal text: digits, optionally a point and digits; no sign, no exponent. */
export const decimalText: Check<string> = (value, path) =>
  typeof value === 'string' && DECIMAL_TEXT.test(value)
    ? value
    : fail(path, value, 'exact decimal text (digits, optionally a point and digits)');

/** True when `text` is a supply body: exact decimal text. */
export const isDecimalText = (text: string): boolean => DECIMAL_TEXT.test(text);

export function nullable<T>(check: Check<T>): Check<T | null> {
  return (value, path) => (value === null ? null : check(value, path));
}

type Shape = Record<string, Check<unknown>>;
type Checked<S extends Shape> = { [K in keyof S]: S[K] extends Check<infer T> ? T : never };

/** A JSON object holding every key of `shape` (more keys are allowed and kept). */
export function object<S extends Shape>(shape: S): Check<Checked<S>> {
  const entries = Object.entries(shape);
  return (value, path) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(path, value, 'an object');
    const record = value as Record<string, unknown>;
    for (const [key, check] of entries) {
      // A key the contract shows as null must be present: `undefined` is "missing", not null.
      if (!Object.hasOwn(record, key)) throw new ShapeError(`${path}.${key}`, 'is missing');
      check(record[key], `${path}.${key}`);
    }
    return record as Checked<S>;
  };
}

export function array<T>(item: Check<T>): Check<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) fail(path, value, 'an array');
    (value as unknown[]).forEach((element, i) => {
      item(element, `${path}[${i}]`);
    });
    return value as T[];
  };
}

/** A category or another text: the category set is open (other global assets), only its type is fixed. */
const category: Check<NeoTokenInfo['c']> = string;

// ---- EVM family ----

const evmTokenInfoFields = {
  h: string,
  p: string,
  f: string,
  s: string,
  d: integerText,
  t: nullable(decimalText),
};

export const evmTokenSummary: Check<EvmTokenSummary> = object({
  network: string,
  tokenHash: string,
  transferCnt: integer,
  holderCnt: integer,
  tokenInfo: object(evmTokenInfoFields),
});

export const evmTransferList: Check<EvmTransfer[]> = array(
  object({
    index: integer,
    block_no: integer,
    token: string,
    tokenAddr: string,
    tokenSymbol: string,
    tokenDecimals: integerText,
    time: integer,
    txid: string,
    tokenInfo: object({ h: string, f: string, s: string, d: integerText }),
    from: string,
    to: string,
    value: integerText,
    conformations: integer,
  }),
);

export const evmTokenPage: Check<EvmTokenPage> = object({
  page: integer,
  size: integer,
  total: integer,
  data: array(object({ ...evmTokenInfoFields, ic: string })),
});

// ---- NEO family ----

const neoTokenInfoFields = {
  appendixData: nullOnly,
  pending: nullOnly,
  h: string,
  p: nullable(string),
  f: string,
  s: string,
  d: integerText,
  t: nullable(decimalText),
  c: category,
  i: nullable(integerText),
  o: nullable(string),
  l: nullOnly,
};
const neoTokenInfo = object(neoTokenInfoFields);

export const neoTokenSummary: Check<NeoTokenSummary> = object({
  appendixData: nullOnly,
  pending: nullOnly,
  network: string,
  tokenHash: string,
  transferCnt: integer,
  holderCnt: integer,
  contract: nullOnly,
  circulationSupply: nullOnly,
  tokenInfo: neoTokenInfo,
});

export const neoAssetSummary: Check<NeoAssetSummary> = object({
  network: string,
  tokenHash: string,
  transferCnt: integer,
  holderCnt: integer,
  tokenInfo: object({
    h: string,
    f: string,
    s: string,
    d: integerText,
    t: nullable(decimalText),
    c: category,
    i: nullable(integerText),
    o: nullable(string),
  }),
});

export const neoAssetPage: Check<NeoAssetPage> = object({
  page: integer,
  size: integer,
  total: integer,
  data: array(
    object({
      appendixData: nullOnly,
      pending: nullOnly,
      network: nullOnly,
      tokenHash: nullOnly,
      transferCnt: nullOnly,
      holderCnt: integer,
      contract: nullOnly,
      circulationSupply: nullable(decimalText),
      // Tokenview's documentation: "for some entries tokenInfo.h is null".
      tokenInfo: object({ ...neoTokenInfoFields, h: nullable(string) }),
    }),
  ),
  appendixData: nullOnly,
  pending: nullOnly,
  note: nullOnly,
});

export const neoTransferList: Check<NeoTransfer[]> = array(
  object({
    index: integer,
    block_no: integer,
    token: nullOnly,
    asset: nullOnly,
    tokenAddr: string,
    tokenSymbol: string,
    tokenDecimals: integerText,
    time: integer,
    txid: string,
    tokenInfo: neoTokenInfo,
    confirmations: integer,
    type: nullOnly,
    from: string,
    to: string,
    fromAlias: nullOnly,
    toAlias: nullOnly,
    value: integerText,
    valueIsNft: nullOnly,
    fromIsContract: nullOnly,
    toIsContract: nullOnly,
    amount: nullOnly,
  }),
);

export const neoContractList: Check<NeoContract[]> = array(
  object({
    createTime: integer,
    author: string,
    name: string,
    contractAddress: string,
    ownerAddress: string,
  }),
);

// ---- Address operations and Token Holders ----

const balanceTokenInfoFields = { h: string, f: string, s: string, d: integerText };

export const evmBalanceList: Check<EvmBalanceEntry[]> = array(
  object({
    network: string,
    hash: string,
    tokenInfo: object(balanceTokenInfoFields),
    transferCnt: integer,
    balance: integerText,
  }),
);

export const neoBalanceList: Check<NeoBalanceEntry[]> = array(
  object({
    network: string,
    hash: string,
    tokenInfo: object({ ...balanceTokenInfoFields, c: category }),
    transferCnt: integer,
    balance: integerText,
  }),
);

export const holderPage: Check<HolderPage> = object({
  page: integer,
  size: integer,
  total: integer,
  exact: boolean,
  data: array(
    object({
      rank: integer,
      address: string,
      balance: integerText,
      percentage: nullable(decimalText),
    }),
  ),
});

// ---- tokenquery only ----

const chainProgress = object({ head: integer, indexed: integer });

export const tokenqueryStatus: Check<TokenqueryStatus> = (value, path) => {
  const { chains } = object({ chains: object({}) })(value, path);
  for (const [chain, progress] of Object.entries(chains)) chainProgress(progress, `${path}.chains.${chain}`);
  return value as TokenqueryStatus;
};
