/**
 * The chains tokenquery serves, and facts about them that every layer shares.
 * This module has no chain *code*: the API may import it.
 */
export const EVM_CHAINS = ['eth', 'bsc', 'kcs', 'movr'] as const;
export type EvmChain = (typeof EVM_CHAINS)[number];

export const NEO_CHAINS = ['neo'] as const;

export const ALL_CHAINS = [...EVM_CHAINS, ...NEO_CHAINS] as const;
export type ChainName = (typeof ALL_CHAINS)[number];

export function isEvmChain(name: string): name is EvmChain {
  return (EVM_CHAINS as readonly string[]).includes(name);
}

export function isChainName(name: string): name is ChainName {
  return (ALL_CHAINS as readonly string[]).includes(name);
}

/** The families of chains: chains of one family share a node protocol, an indexer and a data model. */
export type ChainFamilyName = 'evm' | 'neo';

/** What every layer may know about a family of chains (the code that indexes it is in src/indexer/families.ts). */
export interface ChainFamily {
  name: ChainFamilyName;
  /** As the family is named in messages (`NEO nodes have no eth_subscribe`). */
  label: string;
  chains: readonly ChainName[];
  /**
   * True: a block may be replaced until it is `--finality` blocks deep, so the indexer keeps an
   * unfinalized window and rolls back on a reorg. False: a block is final once produced (dBFT).
   */
  reorgs: boolean;
  /** The node announces new heads over a websocket (`eth_subscribe("newHeads")`, `--ws`). */
  websocketHeads: boolean;
}

/** The families, each once. */
export const CHAIN_FAMILIES: Readonly<Record<ChainFamilyName, ChainFamily>> = {
  evm: { name: 'evm', label: 'EVM', chains: EVM_CHAINS, reorgs: true, websocketHeads: true },
  neo: { name: 'neo', label: 'NEO', chains: NEO_CHAINS, reorgs: false, websocketHeads: false },
};

const FAMILY_OF_CHAIN = new Map<string, ChainFamily>(
  Object.values(CHAIN_FAMILIES).flatMap((family) => family.chains.map((chain) => [chain, family] as const)),
);

/** The family `chain` belongs to (undefined for a name that is no chain tokenquery serves). */
export function familyOf(chain: ChainName): ChainFamily;
export function familyOf(chain: string): ChainFamily | undefined;
export function familyOf(chain: string): ChainFamily | undefined {
  return FAMILY_OF_CHAIN.get(chain);
}

/** Burn addresses whose node-side balances are subtracted from total supply for circulating supply. */
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
export const DEAD_ADDRESS = '0x000000000000000000000000000000000000dead';

/**
 * EIP-155 chain ids of the EVM chains, as token lists (https://tokenlists.org) name them:
 * Ethereum 1, BNB Smart Chain 56, KCC 321, Moonriver 1285.
 */
export const EVM_CHAIN_IDS: Readonly<Record<EvmChain, number>> = { eth: 1, bsc: 56, kcs: 321, movr: 1285 };
