/**
 * The chains tokenquery serves, and facts about them that every layer shares.
 * This module has no chain *code*: the API may import it.
 */
export const EVM_CHAINS = ['eth', 'bsc', 'kcs', 'movr'] as const;
export type EvmChain = (typeof EVM_CHAINS)[number];

export const ALL_CHAINS = [...EVM_CHAINS, 'neo'] as const;
export type ChainName = (typeof ALL_CHAINS)[number];

export function isEvmChain(name: string): name is EvmChain {
  return (EVM_CHAINS as readonly string[]).includes(name);
}

export function isChainName(name: string): name is ChainName {
  return (ALL_CHAINS as readonly string[]).includes(name);
}

/** Burn addresses whose node-side balances are subtracted from total supply for circulating supply. */
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
export const DEAD_ADDRESS = '0x000000000000000000000000000000000000dead';

/**
 * EIP-155 chain ids of the EVM chains, as token lists (https://tokenlists.org) name them:
 * Ethereum 1, BNB Smart Chain 56, KCC 321, Moonriver 1285.
 */
export const EVM_CHAIN_IDS: Readonly<Record<EvmChain, number>> = { eth: 1, bsc: 56, kcs: 321, movr: 1285 };
