/**
 * `tokenquery config check`: reads the configuration exactly as `start` would (flags, environment,
 * config file, defaults) and the token lists it names, and either prints the effective settings
 * with every secret redacted or fails with one line per problem.
 */
import { readTokenList, type TokenList } from '../api/token-list.js';
import { type ConfigFile, configJsonSchema, findConfigFile } from '../config/file.js';
import { loadConfig, type RawOptions } from '../config/load.js';
import type { Config } from '../config/types.js';
import { EVM_CHAINS } from '../internal/chains.js';
import { ProblemsError, redactUrls, UserError } from '../internal/errors.js';
import { formatRate } from '../internal/rate-limit.js';

/** `config check`'s options: the node options of `start` plus `--config`. */
export interface ConfigCheckOptions extends RawOptions {
  config?: string;
}

/** Problems as lines: a `ProblemsError` gives several, any other `UserError` one. */
function problemsOf(error: unknown): string[] {
  if (error instanceof ProblemsError) return [...error.problems];
  if (error instanceof UserError) return [error.shortMessage];
  throw error;
}

/**
 * The effective configuration as JSON-ready data, with secrets redacted: RPC URLs keep only their
 * host, database URLs their host and database name.
 */
export function describeConfig(config: Config, file: ConfigFile | undefined, lists: readonly TokenList[]) {
  return {
    configFile: file?.path ?? null,
    db: redactUrls(config.db),
    ...(config.dbRead === undefined ? {} : { dbRead: redactUrls(config.dbRead) }),
    host: config.host,
    port: config.port,
    logLevel: config.logLevel,
    ...(config.limits.defaultRateLimit === undefined
      ? {}
      : {
          rateLimit: formatRate(config.limits.defaultRateLimit.perSecond),
          rateBurst: config.limits.defaultRateLimit.burst,
        }),
    ...(config.limits.redis === undefined ? {} : { redis: redactUrls(config.limits.redis) }),
    ...(config.limits.trustProxy === undefined ? {} : { trustProxy: config.limits.trustProxy }),
    ...(config.limits.operatorListen === undefined ? {} : { operatorListen: config.limits.operatorListen }),
    ...(config.limits.anonymousRateLimit === undefined
      ? {}
      : {
          anonymousRateLimit:
            config.limits.anonymousRateLimit === null
              ? 'off'
              : formatRate(config.limits.anonymousRateLimit.perSecond),
        }),
    ...config.http,
    chains: Object.fromEntries(
      config.chains.map((chain) => [
        chain.name,
        {
          rpc: redactUrls(chain.rpcUrl),
          ...(chain.wsUrl === undefined ? {} : { ws: redactUrls(chain.wsUrl) }),
          fromBlock: chain.fromBlock,
          finality: chain.finalityDepth,
          pollIntervalMs: chain.pollIntervalMs,
          ...(chain.reconcile === true ? { reconcile: true } : {}),
        },
      ]),
    ),
    tokenLists: lists.map((list) => ({
      path: list.source,
      name: list.name,
      version: list.version,
      tokens: Object.fromEntries(
        EVM_CHAINS.map((chain) => [
          chain,
          [...list.entries.keys()].filter((key) => key.startsWith(`${chain} `)).length,
        ]),
      ),
      otherChains: list.otherChains,
    })),
  };
}

/**
 * Checks everything and returns the effective configuration; throws `ProblemsError` with one line
 * per problem. The token lists are checked only once the rest is valid (their paths come from it).
 */
export function checkConfig(
  raw: ConfigCheckOptions,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): ReturnType<typeof describeConfig> {
  let file: ConfigFile | undefined;
  let config: Config;
  try {
    file = findConfigFile(raw.config, env, cwd);
    config = loadConfig(raw, env, file);
  } catch (error) {
    throw new ProblemsError(problemsOf(error));
  }
  const problems: string[] = [];
  const lists: TokenList[] = [];
  for (const path of config.tokenLists) {
    try {
      lists.push(readTokenList(path));
    } catch (error) {
      problems.push(...problemsOf(error));
    }
  }
  if (problems.length > 0) throw new ProblemsError(problems);
  return describeConfig(config, file, lists);
}

/** `tokenquery config check`: the effective configuration on standard output, as JSON. */
export function configCheckCommand(raw: ConfigCheckOptions): void {
  process.stdout.write(`${JSON.stringify(checkConfig(raw), null, 2)}\n`);
}

/** `tokenquery config schema`: the config file's JSON Schema, as published in docs/. */
export function configSchemaCommand(): void {
  process.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
}
