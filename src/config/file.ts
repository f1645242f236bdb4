/**
 * `tokenquery.config.json`: every option of the flags and environment variables, in one file.
 * Precedence, option by option (and chain by chain under `chains`): flags, then environment
 * variables, then this file, then the defaults. The file's schema below is the one definition
 * behind both its validation and the published `docs/tokenquery.config.schema.json`.
 */
import { statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ALL_CHAINS, type ChainName } from '../internal/chains.js';
import { ProblemsError, redactUrls, UserError } from '../internal/errors.js';
import { HTTP_LIMIT_DEFAULTS, HTTP_LIMIT_RANGES } from '../internal/http-limits.js';
import { readJsonFile } from '../internal/json-file.js';
import type { LogLevel } from '../internal/logger.js';
import { parseRate } from '../internal/rate-limit.js';
import { API_LIMIT_ENV, parseAnonymousRateLimit, parseOperatorListen } from './api-limits.js';
import { HTTP_LIMIT_ENV } from './http-limits.js';
import { DEFAULTS, ENV, LIMITS, LOG_LEVELS } from './load.js';
import { type ObjectSchema, type Schema, toJsonSchema, validate } from './schema.js';

/** The file picked up from the working directory when neither `--config` nor the variable names one. */
export const CONFIG_FILE_NAME = 'tokenquery.config.json';
/** Environment variable naming the config file (the `--config` flag wins over it). */
export const CONFIG_ENV = 'TOKENQUERY_CONFIG';
/** Where the published JSON Schema lives in the repository, relative to its root. */
export const CONFIG_SCHEMA_PATH = 'docs/tokenquery.config.schema.json';

/** One chain's settings in the file. Any of them may also come from flags or the environment. */
export interface ChainFileSettings {
  rpc?: string;
  ws?: string;
  fromBlock?: number;
  finality?: number;
}

/** A config file, read and validated. Relative paths in it are already resolved against its folder. */
export interface ConfigFile {
  /** The path as given or found, for messages (`tokenquery.config.json: port ...`). */
  label: string;
  /** Absolute path of the file. */
  path: string;
  db?: string;
  dbRead?: string;
  host?: string;
  port?: number;
  logLevel?: LogLevel;
  pollIntervalMs?: number;
  /** Reconcile mode (`--reconcile`). */
  reconcile?: boolean;
  chains: Partial<Record<ChainName, ChainFileSettings>>;
  tokenLists: readonly string[];
  rateLimit?: string;
  rateBurst?: number;
  redis?: string;
  /** Proxies, as a list or as the flag's comma-separated text (no hop counts: docs/api-keys.md). */
  trustProxy?: string | readonly string[];
  /** Trust trustProxy ranges that cover public address space too. */
  trustProxyAny?: boolean;
  operatorListen?: string;
  anonymousRateLimit?: string;
  requestTimeoutMs?: number;
  headersTimeoutMs?: number;
  idleTimeoutMs?: number;
  maxConnections?: number;
}

/** The problem `parseOperatorListen` (the flag's parser) finds, without its `from` prefix. */
function operatorListenProblem(text: string): string | undefined {
  try {
    parseOperatorListen(text, 'operatorListen');
    return undefined;
  } catch (error) {
    return error instanceof UserError ? error.shortMessage.replace(/^operatorListen /, '') : String(error);
  }
}

/** The problem `parseRate` (the flag's parser) finds in a rate, without its `from` prefix. */
function rateProblem(text: string): string | undefined {
  try {
    parseRate(text, '');
    return undefined;
  } catch (error) {
    return error instanceof UserError ? error.shortMessage.trim() : String(error);
  }
}

/** The problem `parseAnonymousRateLimit` (the flag's parser) finds, without its `from` prefix. */
function anonymousRateProblem(text: string): string | undefined {
  try {
    parseAnonymousRateLimit(text, '');
    return undefined;
  } catch (error) {
    return error instanceof UserError ? error.shortMessage.trim() : String(error);
  }
}

const RATE_PATTERN =
  '([0-9]+(\\.[0-9]+)?(/([sS]|[sS][eE][cC]|[mM]|[mM][iI][nN]|[hH]|[hH][oO][uU][rR]))?|[uU][nN][lL][iI][mM][iI][tT][eE][dD])';

const chainSchema: ObjectSchema = {
  type: 'object',
  description:
    "One chain's node and indexing window. Settings not given here may come from flags or the environment.",
  properties: {
    rpc: {
      type: 'string',
      format: 'http-url',
      description: `JSON-RPC endpoint of the chain's node (http:// or https://). It may hold credentials; tokenquery never logs them, and the environment (${ENV.rpc}) keeps them out of this file. Flag --rpc <chain>=<url>.`,
    },
    ws: {
      type: 'string',
      format: 'ws-url',
      description: `Websocket endpoint of the same node (ws:// or wss://; EVM chains): new blocks are indexed as soon as eth_subscribe newHeads announces them, with polling (pollIntervalMs) kept as the fallback. Absent: polling only. It may hold credentials, never logged. Flag --ws <chain>=<url>, variable ${ENV.ws}.`,
    },
    fromBlock: {
      type: 'integer',
      ...LIMITS.fromBlock,
      default: DEFAULTS.fromBlock,
      description: `First block to index. Flag --from-block <chain>=<n>, variable ${ENV.fromBlock}.`,
    },
    finality: {
      type: 'integer',
      ...LIMITS.finality,
      default: DEFAULTS.finalityDepth,
      description: `Unfinalized window in blocks, where reorgs are handled (ignored for neo, final at once). Flag --finality <chain>=<n>, variable ${ENV.finality}.`,
    },
  },
};

/** The config file's definition: validated by `readConfigFile`, published by `configJsonSchema`. */
export const CONFIG_FILE_SCHEMA: ObjectSchema = {
  type: 'object',
  description: `tokenquery configuration. Precedence: flags, then environment variables, then this file, then defaults. Relative paths are relative to this file's folder. Check it with \`tokenquery config check\`.`,
  properties: {
    $schema: {
      type: 'string',
      description: `This file's JSON Schema, for editors: the path of ${CONFIG_SCHEMA_PATH} in tokenquery's package.`,
    },
    db: {
      type: 'string',
      default: DEFAULTS.db,
      description: `SQLite file or postgres:// connection string (which may hold a password: never logged). Flag --db, variable ${ENV.db}.`,
    },
    dbRead: {
      type: 'string',
      format: 'postgres-url',
      description: `serve/start: a postgres:// read replica of db for the API's chain data; API keys are still read from db. Flag --db-read, variable ${ENV.dbRead}.`,
    },
    host: {
      type: 'string',
      default: DEFAULTS.host,
      description: `API listen address. Flag --host, variable ${ENV.host}.`,
    },
    port: {
      type: 'integer',
      ...LIMITS.port,
      default: DEFAULTS.port,
      description: `API port; 0 picks any free port. Flag --port, variable ${ENV.port}.`,
    },
    logLevel: {
      type: 'enum',
      values: LOG_LEVELS,
      default: DEFAULTS.logLevel,
      description: `Log level. Flag --log-level, variable ${ENV.logLevel}.`,
    },
    pollIntervalMs: {
      type: 'integer',
      ...LIMITS.pollIntervalMs,
      default: DEFAULTS.pollIntervalMs,
      description: `How often to poll the nodes for a new head once caught up, in milliseconds. Flag --poll-interval, variable ${ENV.pollInterval}.`,
    },
    reconcile: {
      type: 'boolean',
      description: `start/index: reconcile mode (default false) for tokens whose balances move without a log (rebasing, shares, reflection, fee-taking): the addresses their logs name are read with balanceOf at the indexed block (through Multicall3 where the chain has it, JSON-RPC batches otherwise) and their stored balances corrected, so touched holders are exact; holders no log ever names stay as they are. Costs node calls: docs/reliability.md, "Reconcile mode". EVM chains. Flag --reconcile, variable ${ENV.reconcile}.`,
    },
    chains: {
      type: 'object',
      keyNoun: 'chain',
      description: `The chains to index, by name (${ALL_CHAINS.join(', ')}). A chain is indexed when it has an rpc here or in flags or the environment.`,
      properties: Object.fromEntries(ALL_CHAINS.map((chain) => [chain, chainSchema])),
    },
    tokenLists: {
      type: 'array',
      description: `serve/start: Uniswap-style token list files (https://tokenlists.org) that fill icons (ic) and empty names and symbols. Flag --token-list (repeatable), variable ${ENV.tokenList}; either replaces this list.`,
      items: { type: 'string', description: 'Path of a token list JSON file.' },
    },
    rateLimit: {
      type: 'string',
      check: rateProblem,
      pattern: `^\\s*${RATE_PATTERN}\\s*$`,
      description: `serve/start: rate limit of API keys without their own: 10/s, 600/min, 3600/h or unlimited (the default). Flag --rate-limit, variable ${API_LIMIT_ENV.rateLimit}.`,
    },
    rateBurst: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000_000,
      description: `serve/start: requests a key may make at once under rateLimit (default one second's worth). Flag --rate-burst, variable ${API_LIMIT_ENV.rateBurst}.`,
    },
    redis: {
      type: 'string',
      format: 'redis-url',
      description: `serve/start: redis:// or rediss:// URL where API replicas share rate-limit state (default: per process). It may hold a password: never logged. Flag --redis, variable ${API_LIMIT_ENV.redis}.`,
    },
    anonymousRateLimit: {
      type: 'string',
      check: anonymousRateProblem,
      pattern: `^\\s*(${RATE_PATTERN}|[oO][fF][fF])\\s*$`,
      default: '10/s',
      description: `serve/start: how fast each client address may make requests without a key or with a failed one before they are answered 429: 10/s (the default), 600/min, ... or off. Flag --anonymous-rate-limit, variable ${API_LIMIT_ENV.anonymousRateLimit}.`,
    },
    trustProxy: {
      type: 'oneOf',
      expected: 'proxies (CIDRs, addresses, loopback, linklocal, uniquelocal)',
      description: `serve/start: believe X-Forwarded-For (for key allow-lists) from these proxies (default: never). Flag --trust-proxy, variable ${API_LIMIT_ENV.trustProxy}.`,
      options: [
        { type: 'string', description: 'Proxies, comma-separated, as the flag takes them.' },
        {
          type: 'array',
          description: 'Proxies.',
          items: { type: 'string', description: 'A CIDR, an address or a range name.' },
        },
      ],
    },
    trustProxyAny: {
      type: 'boolean',
      description: `serve/start: accept trustProxy ranges that cover public address space (wider than an IPv4 /8 or IPv6 /16, outside private, loopback, link-local and unique-local space), which are refused otherwise: anyone in them could forge X-Forwarded-For (default false). Flag --trust-proxy-any, variable ${API_LIMIT_ENV.trustProxyAny}.`,
    },
    operatorListen: {
      type: 'string',
      check: operatorListenProblem,
      pattern: '^\\s*([Ss][Aa][Mm][Ee]|[Oo][Ff][Ff]|(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5})\\s*$',
      description: `serve/start: where /metrics, the dashboard and the docs are served: same (the default: beside the API), off, or host:port for a listener of their own; the API then answers 404 for them. Flag --operator-listen, variable ${API_LIMIT_ENV.operatorListen}.`,
    },
    requestTimeoutMs: {
      type: 'integer',
      ...HTTP_LIMIT_RANGES.requestTimeoutMs,
      default: HTTP_LIMIT_DEFAULTS.requestTimeoutMs,
      description: `serve/start: milliseconds a request (headers and body) may take to arrive; a slower one is cut off. Flag --request-timeout, variable ${HTTP_LIMIT_ENV.requestTimeout}.`,
    },
    headersTimeoutMs: {
      type: 'integer',
      ...HTTP_LIMIT_RANGES.headersTimeoutMs,
      default: HTTP_LIMIT_DEFAULTS.headersTimeoutMs,
      description: `serve/start: milliseconds a request's headers may take to arrive (answered 408 beyond), at most requestTimeoutMs. Flag --headers-timeout, variable ${HTTP_LIMIT_ENV.headersTimeout}.`,
    },
    idleTimeoutMs: {
      type: 'integer',
      ...HTTP_LIMIT_RANGES.idleTimeoutMs,
      default: HTTP_LIMIT_DEFAULTS.idleTimeoutMs,
      description: `serve/start: milliseconds a connection may go without traffic (keep-alive between requests, or a stalled one) before it is closed. Flag --idle-timeout, variable ${HTTP_LIMIT_ENV.idleTimeout}.`,
    },
    maxConnections: {
      type: 'integer',
      ...HTTP_LIMIT_RANGES.maxConnections,
      default: HTTP_LIMIT_DEFAULTS.maxConnections,
      description: `serve/start: connections open at once; further ones are closed as soon as they are accepted. Keep it below the open-file limit. Flag --max-connections, variable ${HTTP_LIMIT_ENV.maxConnections}.`,
    },
  },
  moved: {
    rpc: 'chains.<chain>.rpc',
    ws: 'chains.<chain>.ws',
    fromBlock: 'chains.<chain>.fromBlock',
    finality: 'chains.<chain>.finality',
  },
};

/** The published JSON Schema of the config file (`docs/tokenquery.config.schema.json`). */
export function configJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: CONFIG_FILE_NAME,
    ...toJsonSchema(CONFIG_FILE_SCHEMA),
  };
}

/** A config file larger than this is a mistake (a token list given as --config, say). */
const MAX_CONFIG_BYTES = 1 << 20;

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/**
 * Checks a parsed config file against {@link CONFIG_FILE_SCHEMA} and returns it with its relative
 * paths resolved against `dir`. Throws `ProblemsError` with one line per problem, each naming the
 * field (`tokenquery.config.json: chains.eth.rpc: must be an http(s) URL`) and never a secret.
 */
export function parseConfigFile(json: unknown, label: string, path: string): ConfigFile {
  const problems = validate(CONFIG_FILE_SCHEMA as Schema, json);
  if (problems.length > 0) {
    throw new ProblemsError(problems.map((p) => redactUrls(`${label}: ${p.path}: ${p.message}`)));
  }
  const {
    $schema: _,
    db,
    tokenLists,
    chains,
    ...rest
  } = json as Omit<ConfigFile, 'label' | 'path'> & {
    $schema?: string;
  };
  const dir = dirname(path);
  const local = (p: string) => (isAbsolute(p) ? p : resolve(dir, p));
  return {
    label,
    path,
    ...rest,
    ...(db === undefined ? {} : { db: POSTGRES_URL.test(db) || db === ':memory:' ? db : local(db) }),
    chains: chains ?? {},
    tokenLists: (tokenLists ?? []).map(local),
  };
}

/** Reads and validates the config file at `path`; `label` names it in messages. */
export function readConfigFile(path: string, label = path): ConfigFile {
  const absolute = resolve(path);
  const json = readJsonFile(absolute, { label, what: 'the config file', maxBytes: MAX_CONFIG_BYTES });
  return parseConfigFile(json, label, absolute);
}

/**
 * The config file to use, if any: `--config`, else `TOKENQUERY_CONFIG`, else
 * `./tokenquery.config.json` when it exists. A file named by the flag or variable must exist.
 */
export function findConfigFile(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): ConfigFile | undefined {
  if (flag !== undefined) {
    if (flag.trim() === '') throw new UserError('--config must not be empty');
    return readConfigFile(resolve(cwd, flag), flag);
  }
  const fromEnv = env[CONFIG_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    return readConfigFile(resolve(cwd, fromEnv), fromEnv);
  }
  const local = resolve(cwd, CONFIG_FILE_NAME);
  try {
    statSync(local);
  } catch {
    return undefined;
  }
  return readConfigFile(local, CONFIG_FILE_NAME);
}
