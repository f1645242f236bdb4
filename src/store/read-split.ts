import type { Store } from './types.js';

/**
 * The API's store when it has a read replica (`serve --db-read`): the chain data the API shows
 * (status, tokens, transfers, balances, NEO) is read from `replica`; everything else goes to
 * `primary`. In particular API keys are read from the primary, because a replica may lag (by
 * seconds, or much longer when replication stalls) and a revoked key must be refused within
 * one second on every replica; a key lookup is one indexed row, and the API caches it for
 * 500 ms, so the primary sees at most about two lookups per second per key and replica. Writes
 * (which the API never makes) go to the primary too. `close` closes both.
 */
export function splitReads(primary: Store, replica: Store): Store {
  const store: Store = {
    kind: primary.kind,
    // Indexer and key methods: the primary.
    getCheckpoint: (chain) => primary.getCheckpoint(chain),
    applyBatch: (batch) => primary.applyBatch(batch),
    getBlockRefs: (chain, from, to) => primary.getBlockRefs(chain, from, to),
    rollback: (chain, toBlock, hash) => primary.rollback(chain, toBlock, hash),
    tokensNeedingSupply: (chain, staleBefore, limit) =>
      primary.tokensNeedingSupply(chain, staleBefore, limit),
    updateSupplies: (chain, updates) => primary.updateSupplies(chain, updates),
    setChainStatus: (chain, status) => primary.setChainStatus(chain, status),
    seededHolders: (chain, pairs) => primary.seededHolders(chain, pairs),
    createApiKey: (key) => primary.createApiKey(key),
    listApiKeys: () => primary.listApiKeys(),
    revokeApiKey: (idOrHash, at) => primary.revokeApiKey(idOrHash, at),
    findApiKeyByHash: (hash) => primary.findApiKeyByHash(hash),
    setApiKeyLimits: (idOrHash, limits) => primary.setApiKeyLimits(idOrHash, limits),
    // What the API shows: the replica.
    getChainStatus: (chain) => replica.getChainStatus(chain),
    listChainStatuses: () => replica.listChainStatuses(),
    getToken: (chain, address) => replica.getToken(chain, address),
    listTransfers: (chain, token, offset, limit) => replica.listTransfers(chain, token, offset, limit),
    listTokens: (chain, offset, limit) => replica.listTokens(chain, offset, limit),
    getBalance: (chain, token, holder) => replica.getBalance(chain, token, holder),
    scanTransfers: (chain, token, after, limit) => replica.scanTransfers(chain, token, after, limit),
    scanBalances: (chain, token, afterHolder, limit) =>
      replica.scanBalances(chain, token, afterHolder, limit),
    scanSeedBalances: (chain, token, afterHolder, limit) =>
      replica.scanSeedBalances(chain, token, afterHolder, limit),
    getNeoOutputs: (chain, refs) => replica.getNeoOutputs(chain, refs),
    getNeoToken: (chain, address) => replica.getNeoToken(chain, address),
    listNeoTokens: (chain, offset, limit) => replica.listNeoTokens(chain, offset, limit),
    listNeoContracts: (chain, offset, limit) => replica.listNeoContracts(chain, offset, limit),
    async close() {
      await Promise.all([primary.close(), replica.close()]);
    },
  };
  // The response cache follows what the API reads, so the replica's change counter if it has one.
  if (replica.readVersion !== undefined) store.readVersion = () => replica.readVersion!();
  // The dashboard's figures: the replica's activity, beside the status it comes with; the primary's size.
  if (replica.getChainActivity !== undefined)
    store.getChainActivity = (chain) => replica.getChainActivity!(chain);
  if (primary.storageBytes !== undefined) store.storageBytes = () => primary.storageBytes!();
  return store;
}
