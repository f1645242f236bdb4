/**
 * What the address operations and Token Holders read (issue #16), apart from types.ts to keep that
 * file readable; re-exported from there, which is where the rest of the code takes them from.
 */
import type { TokenLabel } from './types.js';

/**
 * One token as an address sees it: what the address operations answer (Address Token Balance(s)).
 */
export interface AddressHolding {
  /**
   * Balance computed from the indexed transfers, exactly as {@link StoreReader.getBalance} answers
   * it (negative while a late start has not seeded the holder: the API shows such a balance as 0).
   */
  balance: bigint;
  /**
   * Transfers of the token (NEO global-asset transfers included) in which the address is sender
   * or recipient: a self-transfer once, zero-value transfers too; 0 when none names it.
   */
  transferCount: number;
}

/** A token an address holds, with the token's label (see {@link StoreReader.listAddressBalances}). */
export interface AddressBalance<T extends TokenLabel = TokenLabel> extends AddressHolding {
  token: T;
}

/** One holder of a token (see {@link StoreReader.listHolders}). */
export interface HolderEntry {
  address: string;
  /** Positive: holders are exactly those `holderCount` counts. */
  balance: bigint;
}
