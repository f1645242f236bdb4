/**
 * What a JSON-RPC error object means, from the messages providers send: a range or size refusal
 * (split the request, perhaps to the block count the message names), a transient fault (retry),
 * a node without the block or its state, or anything else (a revert, bad params).
 */

/** How a JSON-RPC error object should be handled. */
export type RpcErrorKind =
  /** The provider refuses the range or the answer size: split the request. */
  | 'range'
  /** Rate limit, overload, internal fault: retry later. */
  | 'transient'
  /** The node has no block or state for the requested height (behind, or pruned). */
  | 'missing-state'
  /** Anything else (reverts, invalid params, method not found). */
  | 'other';

// Messages providers use to refuse an `eth_getLogs` range or an oversized answer. Sources:
// geth/erigon/reth, Infura, Alchemy, QuickNode, Ankr, BlockPI, 1RPC, publicnode, Chainstack,
// Cloudflare, Avalanche, Arbitrum, Optimism/Base, Moonbeam, Aurora, Harmony (see ponder's
// getLogsRetryHelper for the provider-by-provider list).
const RANGE_PATTERNS: readonly RegExp[] = [
  /query returned more than \d+ results/i,
  /query exceeds max (results|block range)/i,
  /block range (is )?too (large|wide)/i,
  /\brange (is )?too large/i,
  /exceeds? (the )?max(imum)? block range/i,
  /maximum block range/i,
  /log response size exceeded/i,
  /too many blocks/i,
  /response size should not greater than/i,
  /limited to (a )?[\d,.]+ (block )?range/i,
  /limited to [\d,.]+ blocks?/i,
  /(backend )?response (is )?too (large|big)/i,
  /logs matched by query exceeds limit/i,
  /exceeds the range allowed/i,
  /block range limit exceeded/i,
  /limit the query to at most/i,
  /block range (greater than|exceeds)/i,
  /query must be smaller than size/i,
  /up to a [\d,.]+ block range/i,
  /blocks distance/i,
  /max range: \d+/i,
  /maximum allowed number of requested blocks/i,
  /try with this block range/i,
  /this block range should work/i,
  /reduc(e|ing) (your |the )?(block )?range/i,
  /too many (results|logs)/i,
];

// Provider messages that name the block count they accept, to offer the caller a first guess.
const SUGGESTED_RANGE_PATTERNS: readonly RegExp[] = [
  /maximum is set to (\d+)/i,
  /max range: (\d+)/i,
  /maximum allowed number of requested blocks is (\d+)/i,
  /limited to (?:a )?([\d,.]+)/i,
  /limit the query to at most ([\d,.]+) blocks/i,
  /maximum block range:? ([\d,.]+)/i,
  /max block range:? ([\d,.]+)/i,
  /block range greater than ([\d,.]+)/i,
  /block range exceeds ([\d,.]+)/i,
  /up to a ([\d,.]+) block range/i,
  /blocks distance: (\d+)/i,
  /\(max(?:imum)? ([\d,.]+)(?: blocks)?\)/i,
  /max(?:imum)? is ([\d,.]+) blocks/i,
];

const MISSING_STATE_PATTERNS: readonly RegExp[] = [
  /missing trie node/i,
  /header not found/i,
  /unknown block/i,
  /block not found/i,
  /state .*not available/i,
  /not available.*state/i,
  /state (is )?(pruned|unavailable)/i,
  /pruned/i,
  /historical state/i,
  /required historical state unavailable/i,
  /state histories/i,
  // A node whose head is below the requested block (behind a load balancer, or mid-reorg: anvil
  // unwinds its head during `anvil_reorg`): anvil/foundry, and geth for `eth_getLogs`.
  /BlockOutOfRange|block height is \d+ but requested was \d+/i,
  /beyond (the )?current head/i,
];

const TRANSIENT_PATTERNS: readonly RegExp[] = [
  /too many requests/i,
  /rate.?limit/i,
  /request limit/i,
  /capacity/i,
  /compute units/i,
  /throughput/i,
  /try again/i,
  /temporar/i,
  /\bbusy\b/i,
  /overload/i,
  /time(d)? ?out/i,
  /upstream/i,
  /no backend/i,
  /unavailable/i,
  /internal (server )?error/i,
];

const REVERT_PATTERN =
  /revert|invalid opcode|out of gas|stack (underflow|overflow)|invalid jump|vm execution error/i;

/** Classifies a JSON-RPC error object (see {@link RpcErrorKind}). */
export function classifyRpcError(error: { code: number; message: string }): RpcErrorKind {
  const { code, message } = error;
  if (RANGE_PATTERNS.some((re) => re.test(message))) return 'range';
  // Infura and others send -32005 for both "too many results" and plain rate limits.
  if (code === -32005 && /more than|range/i.test(message)) return 'range';
  if (REVERT_PATTERN.test(message)) return 'other';
  if (MISSING_STATE_PATTERNS.some((re) => re.test(message))) return 'missing-state';
  if (code === -32005 || code === 429 || code === -32603) return 'transient';
  if (TRANSIENT_PATTERNS.some((re) => re.test(message))) return 'transient';
  return 'other';
}

/** The block count a range refusal names, if any. */
export function suggestedRangeOf(message: string): number | undefined {
  for (const re of SUGGESTED_RANGE_PATTERNS) {
    const m = re.exec(message);
    if (m?.[1] !== undefined) {
      const n = Number(m[1].replace(/[,.]/g, ''));
      if (Number.isSafeInteger(n) && n > 0) return n;
    }
  }
  // Infura: "Try with this block range [0xA, 0xB]" (inclusive bounds).
  const m = /block range (?:should work: )?\[0x([0-9a-f]+),\s*0x([0-9a-f]+)\]/i.exec(message);
  if (m?.[1] !== undefined && m[2] !== undefined) {
    const n = Number.parseInt(m[2], 16) - Number.parseInt(m[1], 16) + 1;
    if (Number.isSafeInteger(n) && n > 0) return n;
  }
  return undefined;
}
