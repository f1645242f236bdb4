/**
 * The import's tokens, each looked up once per run: known to the store already, or new, when its
 * facts come from the node (an ERC-20's metadata, or null for a token whose Transfer logs carry no
 * amount). Without a node a new token is an error: its name, symbol and decimals cannot be known.
 */
import type { Store } from '../store/types.js';
import { ImportInputError, type ImportRow } from './columns.js';
import type { ImportNode, TokenFacts } from './node-reader.js';

/** The facts of the tokens of `samples` (one row per token), in their order: `'known'` for a stored token. */
export type TokenLookup = (samples: ImportRow[]) => Promise<(TokenFacts | 'known')[]>;

export function createTokenLookup(options: {
  store: Store;
  chain: string;
  node: ImportNode | null;
  /** `file:line` of a row, for the errors. */
  where: (file: number, line: number) => string;
  /** What to tell the user to give for a node. */
  rpcHint: string;
}): TokenLookup {
  const { store, chain, node, where, rpcHint } = options;
  const tokenFacts = new Map<string, Promise<TokenFacts | 'known'>>();
  /**
   * The facts already settled: a batch of a chain-shaped export names thousands of tokens, nearly
   * all seen before, and a promise for each of them, every batch, cost more than the lookup.
   */
  const settled = new Map<string, TokenFacts | 'known'>();
  return (samples) => {
    let all = true;
    for (const s of samples) {
      if (!settled.has(s.token)) {
        all = false;
        break;
      }
    }
    if (all) return Promise.resolve(samples.map((s) => settled.get(s.token)!));
    const fresh = samples.filter((s) => !tokenFacts.has(s.token));
    if (fresh.length > 0) {
      const all = (async () => {
        const unknown: ImportRow[] = [];
        const known = new Set<string>();
        for (const s of fresh) {
          if (await store.writer.getToken(chain, s.token)) known.add(s.token);
          else unknown.push(s);
        }
        if (unknown.length > 0 && node === null) {
          const first = unknown[0]!;
          throw new ImportInputError(
            `${where(first.file, first.line)}: token ${first.token} is new to the store: its name, symbol and decimals come from a node; ${rpcHint}`,
          );
        }
        const facts =
          node === null
            ? []
            : await node.tokens(
                unknown.map((s) => ({
                  token: s.token,
                  blockNumber: s.blockNumber,
                  logIndex: s.logIndex,
                  txHash: s.txHash,
                  where: where(s.file, s.line),
                })),
              );
        const byToken = new Map<string, TokenFacts | 'known'>();
        for (const token of known) byToken.set(token, 'known');
        unknown.forEach((s, i) => {
          byToken.set(s.token, facts[i] ?? null);
        });
        for (const [token, fact] of byToken) settled.set(token, fact);
        return byToken;
      })();
      for (const s of fresh) {
        const one = all.then((map) => map.get(s.token)!);
        one.catch(() => {}); // the error reaches the caller through Promise.all below
        tokenFacts.set(s.token, one);
      }
    }
    return Promise.all(samples.map((s) => tokenFacts.get(s.token)!));
  };
}
