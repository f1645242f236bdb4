import { ALL_CHAINS, type ChainName, isChainName } from '../internal/chains.js';
import { UserError } from '../internal/errors.js';
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

/** Parses repeated `<chain>=<value>` pairs; flags win over the environment chain by chain. */
function chainPairs(option: string, flagValues: string[] | undefined, envValue: string | undefined) {
  const pairs = new Map<ChainName, string>();
  const parse = (entries: string[], from: string) => {
    for (const entry of entries) {
      const eq = entry.indexOf('=');
      if (eq <= 0) throw new UserError(`${from}: expected <chain>=<value>, got "${entry}"`);
      const chain = entry.slice(0, eq).trim().toLowerCase();
      if (!isChainName(chain)) {
        throw new UserError(`${from}: unknown chain "${chain}" (known: ${ALL_CHAINS.join(', ')})`);
      }
      pairs.set(chain, entry.slice(eq + 1).trim());
    }
  };
  parse(splitList(envValue), ENV[option as keyof typeof ENV]);
  parse(flagValues ?? [], `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  return pairs;
}

function integer(value: string, what: string, min: number, max: number): number {
  if (!/^[0-9]+$/.test(value)) throw new UserError(`${what} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new UserError(`${what} must be between ${min} and ${max}, got ${value}`);
  return n;
}

function rpcUrl(chain: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`--rpc ${chain}=…: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`--rpc ${chain}=…: only http:// and https:// JSON-RPC endpoints are supported`);
  }
  return value;
}

/**
 * Flags + environment + defaults → one frozen, validated Config. Throws `UserError` with a
 * message that names the bad option.
 */
export function loadConfig(raw: RawOptions, env: NodeJS.ProcessEnv = process.env): Config {
  const rpc = chainPairs('rpc', raw.rpc, env[ENV.rpc]);
  const fromBlocks = chainPairs('fromBlock', raw.fromBlock, env[ENV.fromBlock]);
  const finality = chainPairs('finality', raw.finality, env[ENV.finality]);
  for (const [chain] of [...fromBlocks, ...finality]) {
    if (!rpc.has(chain)) throw new UserError(`a block option names chain "${chain}" but no --rpc ${chain}=<url> is given`);
  }
  const pollText = raw.pollInterval ?? env[ENV.pollInterval];
  const pollIntervalMs = pollText
    ? integer(pollText, '--poll-interval', 50, 3_600_000)
    : DEFAULTS.pollIntervalMs;

  const chains: ChainConfig[] = [...rpc].map(([name, url]) => {
    const fromText = fromBlocks.get(name);
    const finalityText = finality.get(name);
    return Object.freeze({
      name,
      rpcUrl: rpcUrl(name, url),
      fromBlock: fromText === undefined ? DEFAULTS.fromBlock : integer(fromText, `--from-block ${name}`, 0, 2 ** 48),
      finalityDepth:
        finalityText === undefined ? DEFAULTS.finalityDepth : integer(finalityText, `--finality ${name}`, 0, 100_000),
      pollIntervalMs,
    });
  });

  const portText = raw.port ?? env[ENV.port];
  const logLevel = (raw.logLevel ?? env[ENV.logLevel] ?? DEFAULTS.logLevel) as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new UserError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const db = raw.db ?? env[ENV.db] ?? DEFAULTS.db;
  if (db.trim() === '') throw new UserError('--db must not be empty');

  return Object.freeze({
    db,
    host: raw.host ?? env[ENV.host] ?? DEFAULTS.host,
    port: portText === undefined ? DEFAULTS.port : integer(portText, '--port', 0, 65_535),
    chains: Object.freeze(chains),
    logLevel,
  });
}
