/**
 * The running per-token sum of stored balances (`StoreReader.getBalanceSum`): what the exactness
 * check compares with `totalSupply()` (indexer/exactness-check.ts). Every write of balances adds
 * its net changes to the token's sum in the same transaction, so reading it costs one row however
 * many holders the token has. The zero address is left out: its balance is the negative of what
 * was minted (or the burned amount), not anyone's holding, and `totalSupply()` does not count it.
 * Balances are signed (negative while history starts late), and so is the sum. (On NEO, `""`, the
 * mint party of NEP-5 tokens, is summed like any address: no check reads NEO's sums.)
 */
import { ZERO_ADDRESS } from '../internal/chains.js';

/** What the net balance changes `deltas` (holder → change) add to their token's running sum. */
export function balanceSumChange(deltas: ReadonlyMap<string, bigint>): bigint {
  let change = 0n;
  for (const [holder, delta] of deltas) if (holder !== ZERO_ADDRESS) change += delta;
  return change;
}
