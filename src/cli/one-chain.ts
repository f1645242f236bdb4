/**
 * Configuration of a command that works on one chain of the store (`import`, `verify`): the
 * store, the log level and, when `--rpc` names one, that chain's node.
 */
import { findConfigFile } from '../config/file.js';
import { loadConfig } from '../config/load.js';
import type { ChainConfig, Config } from '../config/types.js';
import { UserError } from '../internal/errors.js';

export interface OneChainRawOptions {
  db?: string;
  rpc?: string[];
  logLevel?: string;
  config?: string;
}

/** Loads flags, environment and config file; a node given for other chains only is an error. */
export function loadOneChainConfig(
  raw: OneChainRawOptions,
  chain: string,
): { config: Config; chainConfig: ChainConfig | undefined } {
  const config = loadConfig(
    {
      ...(raw.rpc === undefined ? {} : { rpc: raw.rpc }),
      ...(raw.db === undefined ? {} : { db: raw.db }),
      ...(raw.logLevel === undefined ? {} : { logLevel: raw.logLevel }),
    },
    process.env,
    findConfigFile(raw.config),
  );
  const chainConfig = config.chains.find((c) => c.name === chain);
  if (config.chains.length > 0 && chainConfig === undefined) {
    throw new UserError(`--rpc gives no node for chain ${chain} (--chain ${chain})`);
  }
  return { config, chainConfig };
}
