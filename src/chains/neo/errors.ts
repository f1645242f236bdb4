/**
 * Errors of the NEO chain layer. The RPC fault classes (transport, JSON-RPC error, invalid
 * answer) are the EVM layer's, shared until they move to a chain-neutral module.
 */
import { InvalidRpcResponseError, RpcError } from '../jsonrpc/errors.js';

export { InvalidRpcResponseError, RpcError, RpcResponseError, RpcTransportError } from '../jsonrpc/errors.js';

/**
 * The node has no application log for an InvocationTransaction of a block it served: it runs
 * without neo-cli's ApplicationLogs plugin, or the plugin was added after the block was
 * persisted. NEP-5 transfers cannot be indexed from such a node; retrying will not help.
 */
export class NeoApplicationLogMissingError extends RpcError {
  override name = 'NeoApplicationLogMissingError';
  readonly txid: string;

  constructor(txid: string, nodeMessage: string) {
    super(
      `getapplicationlog ${txid}: the node has no application log (${nodeMessage}); NEO indexing needs neo-cli's ApplicationLogs plugin with the log of every block`,
      { retryable: false },
    );
    this.txid = txid;
  }
}

/** An input spends an output that the node does not have: the chain data is inconsistent. */
export class NeoMissingOutputError extends RpcError {
  override name = 'NeoMissingOutputError';
  readonly ref: { txid: string; n: number };

  constructor(ref: { txid: string; n: number }, reason: string) {
    super(`output ${ref.txid}:${ref.n} cannot be resolved: ${reason}`, { retryable: false });
    this.ref = ref;
  }
}

/** Shorthand for the validation failures of untrusted answers. */
export function invalid(message: string): InvalidRpcResponseError {
  return new InvalidRpcResponseError(message);
}
