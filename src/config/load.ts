import { ALL_CHAINS, type ChainName, familyOf, isChainName } from '../internal/chains.js';
import { redactUrls, UserError } from '../internal/errors.js';
import type { LogLevel } from '../internal/logger.js';
import { type ApiLimitOptions, loadApiLimits } from './api-limits.js';
import type { ConfigFile } from './file.js';
import { type HttpLimitOptions, loadHttpLimits } from './http-limits.js';
import type { ChainConfig, Config } from './types.js';

/** Raw option values as the CLI parsed them (strings; repeatable options as arrays). */
export interface RawOptions extends ApiLimitOptions, HttpLimitOptions {
  rpc?: string[];
  ws?: string[];
  fromBlock?: string[];
  finality?: string[];
  db?: string;
  dbRead?: string;
  port?: string;
  host?: string;
  pollInterval?: string;
  logLevel?: string;
  tokenList?: string[];
  /** `--reconcile`: a switch. */
  reconcile?: boolean;
}

/** Environment variables, one per option; repeatable ones take a comma- or space-separated list. */
export const ENV = {
  rpc: 'TOKENQUERY_RPC',
  ws: 'TOKENQUERY_WS',
  fromBlock: 'TOKENQUERY_FROM_BLOCK',
  finality: 'TOKENQUERY_FINALITY',
  db: 'TOKENQUERY_DB',
  dbRead: 'TOKENQUERY_DB_READ',
  port: 'TOKENQUERY_PORT',
  host: 'TOKENQUERY_HOST',
  pollInterval: 'TOKENQUERY_POLL_INTERVAL_MS',
  logLevel: 'TOKENQUERY_LOG_LEVEL',
  tokenList: 'TOKENQUERY_TOKEN_LIST',
  reconcile: 'TOKENQUERY_RECONCILE',
} as const;

export const DEFAULTS = {
  db: './data/tokenquery.sqlite',
  host: '127.0.0.1',
  port: 8080,
  fromBlock: 0,
  /** Blocks that may still reorg. 64 covers Ethereum's two epochs to finality and BSC's fast finality with margin. */
  finalityDepth: 64,
  pollIntervalMs: 1000,
  logLevel: 'info' as LogLevel,
};

/** Accepted ranges of the numeric options, shared with the config file's schema (file.ts). */
export const LIMITS = {
  port: { minimum: 0, maximum: 65_535 },
  pollIntervalMs: { minimum: 50, maximum: 3_600_000 },
  fromBlock: { minimum: 0, maximum: 2 ** 48 },
  finality: { minimum: 0, maximum: 100_000 },
} as const;

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function splitList(value: string | undefined): string[] {
  return value ? value.split(/[\s,]+/).filter(Boolean) : [];
}

/** A value and where it came from (`--port` or `TOKENQUERY_PORT`), so errors name what to fix. */
interface Sourced {
  value: string;
  from: string;
}

const flagName = (option: keyof typeof ENV) => `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The config file's key of each single-valued option. */
const FILE_KEYS = {
  db: 'db',
  dbRead: 'dbRead',
  port: 'port',
  host: 'host',
  pollInterval: 'pollIntervalMs',
  logLevel: 'logLevel',
} as const;

/** A single-valued option: the flag wins over the environment, which wins over the config file. */
function single(
  option: keyof typeof FILE_KEYS,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  file?: ConfigFile,
): Sourced | undefined {
  if (flag !== undefined) return { value: flag, from: flagName(option) };
  const value = env[ENV[option]];
  if (value !== undefined && value !== '') return { value, from: ENV[option] };
  const key = FILE_KEYS[option];
  const inFile = file?.[key];
  return inFile === undefined ? undefined : { value: String(inFile), from: `${file!.label}: ${key}` };
}

/**
 * Parses repeated `<chain>=<value>` pairs; chain by chain, flags win over the environment, which
 * wins over the config file's `chains.<chain>.<option>`.
 */
function chainPairs(
  option: 'rpc' | 'ws' | 'fromBlock' | 'finality',
  flagValues: string[] | undefined,
  env: NodeJS.ProcessEnv,
  file?: ConfigFile,
): Map<ChainName, Sourced> {
  const pairs = new Map<ChainName, Sourced>();
  for (const [chain, settings] of Object.entries(file?.chains ?? {}) as [ChainName, ChainFileSettings][]) {
    const value = settings[option];
    if (value !== undefined) {
      pairs.set(chain, { value: String(value), from: `${file!.label}: chains.${chain}.${option}` });
    }
  }
  const parse = (entries: string[], from: string) => {
    // Within one source a chain named twice is a mistake (which URL was meant?); across sources the flag wins.
    const seen = new Set<ChainName>();
    for (const entry of entries) {
      const eq = entry.indexOf('=');
      // The entry may be a bare URL with credentials: never echo it unredacted.
      if (eq <= 0) throw new UserError(`${from}: expected <chain>=<value>, got "${redactUrls(entry)}"`);
      const chain = entry.slice(0, eq).trim().toLowerCase();
      if (!isChainName(chain)) {
        throw new UserError(
          `${from}: unknown chain "${redactUrls(chain)}" (known: ${ALL_CHAINS.join(', ')})`,
        );
      }
      if (seen.has(chain)) throw new UserError(`${from}: chain "${chain}" is given twice`);
      seen.add(chain);
      pairs.set(chain, { value: entry.slice(eq + 1).trim(), from: `${from} ${chain}` });
    }
  };
  parse(splitList(env[ENV[option]]), ENV[option]);
  parse(flagValues ?? [], flagName(option));
  return pairs;
}

type ChainFileSettings = ConfigFile['chains'][ChainName] & {};

function integer(
  { value, from }: Sourced,
  { minimum: min, maximum: max }: { minimum: number; maximum: number },
): number {
  if (!/^[0-9]+$/.test(value)) throw new UserError(`${from} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new UserError(`${from} must be between ${min} and ${max}, got ${value}`);
  return n;
}

function rpcUrl({ value, from }: Sourced, chain: ChainName): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`${from}: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const hint =
      url.protocol === 'ws:' || url.protocol === 'wss:'
        ? ` (a websocket endpoint of the same node speeds up following the head: give it with --ws ${chain}=<url>)`
        : '';
    throw new UserError(
      `${from}: only http:// and https:// JSON-RPC endpoints are supported, got ${url.protocol}//${hint}`,
    );
  }
  return value;
}

function wsUrl({ value, from }: Sourced, chain: ChainName): string {
  const family = familyOf(chain);
  if (!family.websocketHeads) {
    throw new UserError(
      `${from}: ${family.label} nodes have no eth_subscribe; ${chain} is followed by polling`,
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`${from}: not a URL`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new UserError(`${from}: expected a ws:// or wss:// endpoint, got ${url.protocol}//`);
  }
  return value;
}

/**
 * Flags + environment + config file + defaults, in that order of precedence → one frozen,
 * validated Config. Throws `UserError` with a message that names the bad option (the flag, the
 * variable or the config file's field it came from) and never a secret. `file` is a config file
 * that `readConfigFile` (file.ts) has already read and validated.
 */
export function loadConfig(raw: RawOptions, env: NodeJS.ProcessEnv = process.env, file?: ConfigFile): Config {
  const rpc = chainPairs('rpc', raw.rpc, env, file);
  const fromBlocks = chainPairs('fromBlock', raw.fromBlock, env, file);
  const finality = chainPairs('finality', raw.finality, env, file);
  const ws = chainPairs('ws', raw.ws, env, file);
  for (const [chain, { from }] of [...fromBlocks, ...finality, ...ws]) {
    if (!rpc.has(chain))
      throw new UserError(
        `${from}: no --rpc ${chain}=<url> is given for chain "${chain}" (nor ${ENV.rpc}, nor chains.${chain}.rpc in the config file)`,
      );
  }
  const pollText = single('pollInterval', raw.pollInterval, env, file);
  const pollIntervalMs = pollText ? integer(pollText, LIMITS.pollIntervalMs) : DEFAULTS.pollIntervalMs;

  const reconcile = reconcileMode(raw, env, file);
  const chains: ChainConfig[] = [...rpc].map(([name, url]) => {
    const fromText = fromBlocks.get(name);
    const finalityText = finality.get(name);
    const wsText = ws.get(name);
    return Object.freeze({
      name,
      rpcUrl: rpcUrl(url, name),
      fromBlock: fromText === undefined ? DEFAULTS.fromBlock : integer(fromText, LIMITS.fromBlock),
      finalityDepth:
        finalityText === undefined ? DEFAULTS.finalityDepth : integer(finalityText, LIMITS.finality),
      pollIntervalMs,
      ...(wsText === undefined ? {} : { wsUrl: wsUrl(wsText, name) }),
      // NEO has no tokens whose balances move without a log: its indexer has no reconcile mode.
      ...(reconcile && familyOf(name).name === 'evm' ? { reconcile: true } : {}),
    });
  });

  const portText = single('port', raw.port, env, file);
  const levelText = single('logLevel', raw.logLevel, env, file);
  const logLevel = (levelText?.value ?? DEFAULTS.logLevel) as LogLevel;
  if (levelText && !LOG_LEVELS.includes(logLevel)) {
    throw new UserError(
      `${levelText.from} must be one of ${LOG_LEVELS.join(', ')}, got "${levelText.value}"`,
    );
  }
  const host = single('host', raw.host, env, file)?.value ?? DEFAULTS.host;
  if (host.trim() === '') throw new UserError('--host must not be empty');

  const db = loadStoreLocation(raw, env, file);
  const dbRead = readReplica(single('dbRead', raw.dbRead, env, file), db);
  return Object.freeze({
    db,
    ...(dbRead === undefined ? {} : { dbRead }),
    host,
    port: portText === undefined ? DEFAULTS.port : integer(portText, LIMITS.port),
    chains: Object.freeze(chains),
    logLevel,
    tokenLists: Object.freeze(tokenLists(raw.tokenList, env, file)),
    limits: loadApiLimits(raw, env, file),
    http: loadHttpLimits(raw, env, file),
  });
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/**
 * `--reconcile` (docs/reliability.md, "Reconcile mode"): the flag, else the variable (1/true/yes
 * or 0/false/no), else the config file's `reconcile`; off by default.
 */
function reconcileMode(raw: RawOptions, env: NodeJS.ProcessEnv, file?: ConfigFile): boolean {
  if (raw.reconcile !== undefined) return raw.reconcile;
  const text = env[ENV.reconcile]?.trim().toLowerCase();
  if (text !== undefined && text !== '') {
    if (['1', 'true', 'yes'].includes(text)) return true;
    if (['0', 'false', 'no'].includes(text)) return false;
    throw new UserError(
      `${ENV.reconcile} must be 1 or 0 (true or false), got "${env[ENV.reconcile]!.slice(0, 40)}"`,
    );
  }
  return file?.reconcile ?? false;
}

/** `--db-read`: a PostgreSQL replica of the `--db` PostgreSQL database. Never echoes either URL. */
function readReplica(text: Sourced | undefined, db: string): string | undefined {
  if (text === undefined) return undefined;
  if (!POSTGRES_URL.test(text.value)) {
    throw new UserError(`${text.from} must be a postgres:// connection string (a read replica of --db)`);
  }
  if (!POSTGRES_URL.test(db)) {
    throw new UserError(`${text.from} needs --db to be the primary PostgreSQL database (postgres://...)`);
  }
  return text.value;
}

/**
 * Only the store location, for commands that need nothing else (`keys`): an unrelated bad
 * variable such as `TOKENQUERY_RPC` must not stop a key from being created.
 */
export function loadStoreLocation(
  raw: { db?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
  file?: ConfigFile,
): string {
  const db = single('db', raw.db, env, file)?.value ?? DEFAULTS.db;
  if (db.trim() === '') throw new UserError('--db must not be empty');
  return db;
}

/**
 * `--token-list` files: those of the first source that gives any (flags, then the environment,
 * then the config file, whose paths are relative to the file). A list replaces, it does not add
 * to, the lists of a lower source, like every other option.
 */
function tokenLists(flags: string[] | undefined, env: NodeJS.ProcessEnv, file?: ConfigFile): string[] {
  if (flags !== undefined && flags.length > 0) return flags;
  const fromEnv = splitList(env[ENV.tokenList]);
  if (fromEnv.length > 0) return fromEnv;
  return [...(file?.tokenLists ?? [])];
}
