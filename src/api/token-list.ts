/**
 * Uniswap-style token lists (https://github.com/Uniswap/token-lists), the convention wallets
 * use for token names and icons, as an overlay on what the API answers: a list fills `ic` with
 * the token's `logoURI` and repairs the name and symbol of tokens whose contracts return nothing.
 * An on-chain name or symbol that is not empty is never replaced.
 *
 * Why at read time in the API rather than written into the store by the indexer: a list is the
 * operator's data, not chain data, like an API key. Applied when answering, it takes effect on
 * every token already indexed (or imported), on the next restart of `serve` alone, with no
 * re-indexing and no writer (so also on a read replica); removing a list undoes it; and the store
 * keeps exactly what the chain said. It costs one Map lookup per token answered, and nothing on
 * answers from the response cache.
 */
import { EVM_CHAIN_IDS, type EvmChain } from '../internal/chains.js';
import { ProblemsError } from '../internal/errors.js';
import { readJsonFile } from '../internal/json-file.js';
import { cleanTokenMetadata } from '../internal/token-text.js';
import type { Store, TokenRecord } from '../store/types.js';

/** What one list says about one token of a served chain. */
export interface TokenListEntry {
  /** `""` when the list gives none. */
  name: string;
  symbol: string;
  /** `logoURI`, `""` when none or not usable (see {@link ICON_SCHEMES}). */
  icon: string;
}

/** A token list, validated, reduced to the tokens of the chains tokenquery serves. */
export interface TokenList {
  /** Where it was read from, for messages. */
  source: string;
  name: string;
  /** `major.minor.patch`. */
  version: string;
  timestamp: string;
  /** By `<chain> <lower-case address>`. */
  entries: ReadonlyMap<string, TokenListEntry>;
  /** Entries of chain ids that tokenquery does not serve (skipped, not errors). */
  otherChains: number;
  /** Second entries for a token already listed (the first one counts). */
  duplicates: number;
  /** `logoURI`s left out because their scheme is not one of {@link ICON_SCHEMES} or they are too long. */
  ignoredIcons: number;
}

/**
 * The `logoURI` schemes passed on as `ic`. The official schema allows any URI; these are the
 * ones an image can be fetched from (IPFS, IPNS and Arweave through a gateway). A `javascript:`
 * or a megabyte `data:` URI has no business in an API answer or a dashboard's `<img>`.
 */
export const ICON_SCHEMES = ['https:', 'http:', 'ipfs:', 'ipns:', 'ar:'] as const;
const MAX_ICON_LENGTH = 2048;
/** Limits of the official schema (tokenlist.schema.json). */
const MAX_NAME_LENGTH = 60;
const MAX_SYMBOL_LENGTH = 20;
/** A list larger than this is not a token list (the biggest public ones are a few MiB). */
const MAX_LIST_BYTES = 64 << 20;
/** Problems listed per list before the rest are only counted. */
const MAX_PROBLEMS = 20;

const CHAIN_BY_ID = new Map<number, EvmChain>(
  Object.entries(EVM_CHAIN_IDS).map(([chain, id]) => [id, chain as EvmChain]),
);
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
const CONTROL = /[\u0000-\u001f\u007f]/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0;

/**
 * Validates a parsed token list. Throws `ProblemsError` with one line per problem, each naming the
 * list and the entry (`list.json: tokens[12] (USDC): address must be 0x and 40 hex digits`).
 */
export function parseTokenList(json: unknown, source: string): TokenList {
  const problems: string[] = [];
  const problem = (where: string, message: string) => {
    problems.push(`${source}: ${where}: ${message}`);
  };
  if (!isObject(json)) throw new ProblemsError([`${source}: not a token list (expected a JSON object)`]);

  const { name, timestamp, version, tokens } = json;
  if (typeof name !== 'string' || name.trim() === '') problem('name', 'must be a non-empty string');
  if (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp)))
    problem('timestamp', 'must be an ISO 8601 date-time string');
  if (!isObject(version) || !isCount(version.major) || !isCount(version.minor) || !isCount(version.patch))
    problem('version', 'must be {"major", "minor", "patch"} with non-negative integers');
  if (!Array.isArray(tokens) || tokens.length === 0) problem('tokens', 'must be a non-empty array');
  // A file whose top level is wrong is not a token list at all: its entries would only add noise.
  if (problems.length > 0 || !Array.isArray(tokens)) throw new ProblemsError(problems);

  const entries = new Map<string, TokenListEntry>();
  let otherChains = 0;
  let duplicates = 0;
  let ignoredIcons = 0;
  for (let i = 0; i < tokens.length; i++) {
    const before = problems.length;
    const parsed = parseEntry(tokens[i], i, problem);
    if (parsed === 'other chain') otherChains++;
    if (typeof parsed !== 'object' || problems.length > before) continue;
    if (parsed.ignoredIcon) ignoredIcons++;
    if (entries.has(parsed.key)) duplicates++;
    else entries.set(parsed.key, parsed.entry);
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS);
    if (problems.length > MAX_PROBLEMS)
      shown.push(`${source}: ${problems.length - MAX_PROBLEMS} more problems not shown`);
    throw new ProblemsError(shown);
  }
  const v = version as { major: number; minor: number; patch: number };
  return {
    source,
    name: name as string,
    version: `${v.major}.${v.minor}.${v.patch}`,
    timestamp: timestamp as string,
    entries,
    otherChains,
    duplicates,
    ignoredIcons,
  };
}

/**
 * One entry of `tokens`: reported through `problem` when malformed; `'other chain'` for a chain
 * tokenquery does not serve, which is not ours to judge (its address may be base58, say).
 */
function parseEntry(
  token: unknown,
  i: number,
  problem: (where: string, message: string) => void,
): { key: string; entry: TokenListEntry; ignoredIcon: boolean } | 'other chain' | undefined {
  if (!isObject(token)) {
    problem(`tokens[${i}]`, 'must be an object');
    return undefined;
  }
  const where =
    typeof token.symbol === 'string' && token.symbol !== '' && !CONTROL.test(token.symbol)
      ? `tokens[${i}] (${token.symbol.slice(0, MAX_SYMBOL_LENGTH)})`
      : `tokens[${i}]`;
  const { chainId, address, decimals, logoURI } = token;
  if (!Number.isInteger(chainId) || (chainId as number) < 1) {
    problem(where, 'chainId must be a positive integer');
    return undefined;
  }
  const chain = CHAIN_BY_ID.get(chainId as number);
  if (chain === undefined) return 'other chain';
  const say = (message: string) => problem(where, message);
  if (typeof address !== 'string' || !EVM_ADDRESS.test(address)) say('address must be 0x and 40 hex digits');
  const name = text(token.name, 'name', MAX_NAME_LENGTH, say);
  const symbol = text(token.symbol, 'symbol', MAX_SYMBOL_LENGTH, say);
  if (!Number.isInteger(decimals) || (decimals as number) < 0 || (decimals as number) > 255)
    say('decimals must be an integer from 0 to 255');
  let icon = '';
  let ignoredIcon = false;
  if (logoURI !== undefined) {
    const uri = typeof logoURI === 'string' ? parseUri(logoURI) : null;
    if (uri === null) say('logoURI must be a URI');
    else if (
      (ICON_SCHEMES as readonly string[]).includes(uri.protocol) &&
      (logoURI as string).length <= MAX_ICON_LENGTH
    )
      icon = logoURI as string;
    else ignoredIcon = true;
  }
  return { key: `${chain} ${String(address).toLowerCase()}`, entry: { name, symbol, icon }, ignoredIcon };
}

/** A name or symbol: a string without control characters, within the official length limit. */
function text(value: unknown, field: string, max: number, problem: (message: string) => void): string {
  if (typeof value !== 'string') {
    problem(`${field} must be a string`);
    return '';
  }
  if (value.length > max) problem(`${field} must be at most ${max} characters`);
  else if (CONTROL.test(value)) problem(`${field} must not hold control characters`);
  return value.trim();
}

function parseUri(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** Reads and validates a token list file. Errors name the file; they are `UserError`s. */
export function readTokenList(path: string): TokenList {
  return parseTokenList(
    readJsonFile(path, { label: path, what: 'the token list', maxBytes: MAX_LIST_BYTES }),
    path,
  );
}

/** The lists, merged: what the API applies to each token it answers. */
export interface TokenOverlay {
  /** Tokens with an entry in any list. */
  readonly size: number;
  /** The entry for a token, if any list has one (`address` in lower case). */
  get(chain: string, address: string): TokenListEntry | undefined;
  /**
   * The token as the API shows it: an empty name or symbol taken from the lists, an empty icon
   * filled. The same object when the lists change nothing.
   */
  apply(token: TokenRecord): TokenRecord;
}

/**
 * Merges lists in the order given: for each token and each field, the first list with a non-empty
 * value wins, so a later list fills only what earlier ones leave empty.
 */
export function createTokenOverlay(lists: readonly TokenList[]): TokenOverlay {
  // One map per chain, by address: the lookup on the API's path builds no key string.
  const byChain = new Map<string, Map<string, TokenListEntry>>();
  let size = 0;
  for (const list of lists) {
    for (const [key, entry] of list.entries) {
      const [chain = '', address = ''] = key.split(' ');
      const chainMap = byChain.get(chain) ?? new Map<string, TokenListEntry>();
      byChain.set(chain, chainMap);
      const seen = chainMap.get(address);
      if (seen === undefined) size++;
      chainMap.set(
        address,
        seen === undefined
          ? entry
          : {
              name: seen.name || entry.name,
              symbol: seen.symbol || entry.symbol,
              icon: seen.icon || entry.icon,
            },
      );
    }
  }
  const get = (chain: string, address: string) => byChain.get(chain)?.get(address);
  return {
    size,
    get,
    apply(token) {
      const entry = get(token.chain, token.address);
      if (entry === undefined) return token;
      const name = token.name === '' ? entry.name : token.name;
      const symbol = token.symbol === '' ? entry.symbol : token.symbol;
      const icon = token.icon === '' ? entry.icon : token.icon;
      if (name === token.name && symbol === token.symbol && icon === token.icon) return token;
      return { ...token, name, symbol, icon };
    },
  };
}

/**
 * The API's store with the overlay applied to the EVM tokens it reads (Token Info, the token list,
 * the transfer list's token fields), and every token's name and symbol, EVM and NEO, capped and
 * cleaned as the indexer does (`cleanTokenText`): a store written before the cap existed may hold
 * a megabyte name, and it is not served. Everything else passes through unchanged.
 */
export function withTokenOverlay(store: Store, overlay: TokenOverlay): Store {
  const { reader, neo } = store;
  const show = (token: TokenRecord) => cleanTokenMetadata(overlay.size === 0 ? token : overlay.apply(token));
  return {
    ...store,
    reader: {
      ...reader,
      async getToken(chain, address) {
        const token = await reader.getToken(chain, address);
        return token === null ? null : show(token);
      },
      async listTokens(chain, offset, limit) {
        const page = await reader.listTokens(chain, offset, limit);
        return { ...page, tokens: page.tokens.map(show) };
      },
    },
    neo: {
      ...neo,
      async getNeoToken(chain, address) {
        const token = await neo.getNeoToken(chain, address);
        return token === null ? null : cleanTokenMetadata(token);
      },
      async listNeoTokens(chain, offset, limit) {
        const page = await neo.listNeoTokens(chain, offset, limit);
        return { ...page, tokens: page.tokens.map(cleanTokenMetadata) };
      },
    },
  };
}
