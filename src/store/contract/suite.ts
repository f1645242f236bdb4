/**
 * The one behaviour suite every `Store` backend must pass, through the `Store` interface only
 * (like kysely's per-dialect test loop). A backend's test file calls `runStoreContractSuite`
 * with a factory that hands out a fresh, empty store for each test; each section of the suite
 * lives in its own file here.
 *
 * Choices this suite pins down where `types.ts` leaves room:
 * - `""` (NEO's mint/burn party) is never a holder, like the zero address.
 * - `tokensNeedingSupply(chain, staleBefore, limit)`: `staleBefore` is a block number; marked
 *   tokens come first (oldest mark first), then tokens whose last read (`atBlock`) is older than
 *   `staleBefore`, oldest first.
 * - A supply read at a block older than the transfer that marked the token records its values
 *   but leaves the token marked.
 * - `RollbackResult.affectedTokens` lists, sorted, every token that lost transfers, including
 *   tokens that disappear (so a caller can forget them).
 * - A batch or rollback that does not fit the checkpoint is rejected and changes nothing.
 * - Starting balances (`IndexBatch.seeds`) are recorded per (token, holder) even when zero, count
 *   once, survive rollbacks, and go away only with a token a rollback drops whole.
 * - Address operations and holders (`addresses.ts`, `holders.ts`, `address-history.ts`, checked
 *   against the reference model `testing/address-model.ts`): addresses order by code unit (JS `<`,
 *   SQL `COLLATE "C"`/`BINARY`), so NEO's `AQ…` comes before `Ab…`; while balances lag the
 *   checkpoint, a holding's `transferCount` and an address's transfers are as of `balancesBlock`
 *   like its balance (token counts and a token's transfer list stay as of the checkpoint); a
 *   backend that writes them at once answers them as of the checkpoint, and its `balancesBlock`
 *   is then unset; `scanHoldings` may list `{0n, 0}` rows beside
 *   those the model requires (every pair with a non-zero balance or a transfer naming it).
 * - Balance changes without a transfer (`balance-changes.ts`) are no transfers: a token named only by
 *   them is listed with `transferCount` 0; a rollback that removes only such changes still names
 *   their token in `affectedTokens`, and `removedTransfers` does not count them.
 * NEO's choices are stated in `neo.ts`.
 */
import { describe } from 'node:test';
import type { Store } from '../types.js';
import { runAddressHistoryCases } from './address-history.js';
import { runAddressCases } from './addresses.js';
import { runApiKeyCases } from './api-keys.js';
import { runBalanceChangeCases } from './balance-changes.js';
import { runBalanceSumCases } from './balance-sums.js';
import { runBatchCases } from './batches.js';
import { runBulkLoadCases } from './bulk-load.js';
import { runChainStatusCases } from './chain-status.js';
import { runCheckpointBatchCases } from './checkpoint-batches.js';
import type { ContractContext, StoreUnderTest } from './fixtures.js';
import { runHolderCases } from './holders.js';
import { runNeoCases } from './neo.js';
import { runNeoAddressCases } from './neo-addresses.js';
import { runNotExactCases } from './not-exact.js';
import { runPersistenceCases } from './persistence.js';
import { runReadCases } from './reads.js';
import { runRollbackCases } from './rollback.js';
import { runSeedCases } from './seeds.js';
import { runSupplyCases } from './supplies.js';

export type { StoreUnderTest } from './fixtures.js';

/** Options of {@link runStoreContractSuite}. */
export interface StoreContractOptions {
  /**
   * Run the NEO cases (`neo.ts`). Default true; a backend whose NEO tables are not written yet
   * passes false until they are.
   */
  neo?: boolean;
}

export function runStoreContractSuite(
  name: string,
  open: () => Promise<StoreUnderTest>,
  options: StoreContractOptions = {},
): void {
  const context: ContractContext = {
    open,
    async withStore(fn: (store: Store, context: StoreUnderTest) => Promise<void>): Promise<void> {
      const underTest = await open();
      try {
        await fn(underTest.store, underTest);
      } finally {
        await underTest.cleanup();
      }
    },
  };

  describe(`store contract: ${name}`, () => {
    runBatchCases(context);
    runCheckpointBatchCases(context);
    runReadCases(context);
    runRollbackCases(context);
    runSeedCases(context);
    runSupplyCases(context);
    runChainStatusCases(context);
    runApiKeyCases(context);
    runPersistenceCases(context);
    runAddressCases(context);
    runHolderCases(context);
    runAddressHistoryCases(context);
    runBalanceChangeCases(context);
    runBalanceSumCases(context);
    runNotExactCases(context);
    runBulkLoadCases(context);
    if (options.neo !== false) {
      runNeoCases(context);
      runNeoAddressCases(context);
    }
  });
}
