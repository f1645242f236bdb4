import { ALL_CHAINS, type ChainName, isChainName } from '../internal/chains.js';
import { redactUrls, UserError } from '../internal/errors.js';
import type { LogLevel } from '../internal/logger.js';
import type { ChainConfig, Config } from './types.js';

/** Raw option values as the CLI parsed them (strings; repeatable options as arrays). */
export interface RawOptions {
  rpc?: string[];
  fromBlock?: string[];
  finality?: string[];
  db?: string;
  port?: string;
  host?: string;
  pollInterval?: string;
  logLevel?: string;
}

/** Environment variables, one per option; repeatable ones take a comma- or space-separated list. */
export const ENV = {
  rpc: 'TOKENQUERY_RPC',
  fromBlock: 'TOKENQUERY_FROM_BLOCK',
  finality: 'TOKENQUERY_FINALITY',
  db: 'TOKENQUERY_DB',
  port: 'TOKENQUERY_PORT',
  host: 'TOKENQUERY_HOST',
  pollInterval: 'TOKENQUERY_POLL_INTERVAL_MS',
  logLevel: 'TOKENQUERY_LOG_LEVEL',
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

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function splitList(value: string | undefined): string[] {
  return value ? value.split(/[\s,]+/).filter(Boolean) : [];
}

/** A value and where it came from (`--port` or `TOKENQUERY_PORT`), so errors name what to fix. */
interface Sourced {
  value: string;
  from: string;
}

const flagName = (option: keyof typeof ENV) => `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** A single-valued option: the flag wins over the environment. */
function single(
  option: keyof typeof ENV,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): Sourced | undefined {
  if (flag !== undefined) return { value: flag, from: flagName(option) };
  const value = env[ENV[option]];
  return value === undefined || value === '' ? undefined : { value, from: ENV[option] };
}

/** Parses repeated `<chain>=<value>` pairs; flags win over the environment chain by chain. */
function chainPairs(
  option: 'rpc' | 'fromBlock' | 'finality',
  flagValues: string[] | undefined,
  env: NodeJS.ProcessEnv,
): Map<ChainName, Sourced> {
  const pairs = new Map<ChainName, Sourced>();
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

function integer({ value, from }: Sourced, min: number, max: number): number {
  if (!/^[0-9]+$/.test(value)) throw new UserError(`${from} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new UserError(`${from} must be between ${min} and ${max}, got ${value}`);
  return n;
}

function rpcUrl({ value, from }: Sourced): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`${from}: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(
      `${from}: only http:// and https:// JSON-RPC endpoints are supported, got ${url.protocol}//`,
    );
  }
  return value;
}

/**
 * Flags + environment + defaults → one frozen, validated Config. Throws `UserError` with a
 * message that names the bad option (the flag or the variable it came from) and never a secret.
 */
export function loadConfig(raw: RawOptions, env: NodeJS.ProcessEnv = process.env): Config {
  const rpc = chainPairs('rpc', raw.rpc, env);
  const fromBlocks = chainPairs('fromBlock', raw.fromBlock, env);
  const finality = chainPairs('finality', raw.finality, env);
  for (const [chain, { from }] of [...fromBlocks, ...finality]) {
    if (!rpc.has(chain))
      throw new UserError(`${from}: no --rpc ${chain}=<url> is given for chain "${chain}"`);
  }
  const pollText = single('pollInterval', raw.pollInterval, env);
  const pollIntervalMs = pollText ? integer(pollText, 50, 3_600_000) : DEFAULTS.pollIntervalMs;

  const chains: ChainConfig[] = [...rpc].map(([name, url]) => {
    const fromText = fromBlocks.get(name);
    const finalityText = finality.get(name);
    return Object.freeze({
      name,
      rpcUrl: rpcUrl(url),
      fromBlock: fromText === undefined ? DEFAULTS.fromBlock : integer(fromText, 0, 2 ** 48),
      finalityDepth: finalityText === undefined ? DEFAULTS.finalityDepth : integer(finalityText, 0, 100_000),
      pollIntervalMs,
    });
  });

  const portText = single('port', raw.port, env);
  const levelText = single('logLevel', raw.logLevel, env);
  const logLevel = (levelText?.value ?? DEFAULTS.logLevel) as LogLevel;
  if (levelText && !LOG_LEVELS.includes(logLevel)) {
    throw new UserError(
      `${levelText.from} must be one of ${LOG_LEVELS.join(', ')}, got "${levelText.value}"`,
    );
  }
  const host = single('host', raw.host, env)?.value ?? DEFAULTS.host;
  if (host.trim() === '') throw new UserError('--host must not be empty');

  return Object.freeze({
    db: loadStoreLocation(raw, env),
    host,
    port: portText === undefined ? DEFAULTS.port : integer(portText, 0, 65_535),
    chains: Object.freeze(chains),
    logLevel,
  });
}

/**
 * Only the store location, for commands that need nothing else (`keys`): an unrelated bad
 * variable such as `TOKENQUERY_RPC` must not stop a key from being created.
 */
export function loadStoreLocation(
  raw: { db?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const db = single('db', raw.db, env)?.value ?? DEFAULTS.db;
  if (db.trim() === '') throw new UserError('--db must not be empty');
  return db;
}
