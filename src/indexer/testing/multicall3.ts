/**
 * Multicall3 on a test node: its runtime code (compiled from contracts/Multicall3.sol, MIT, from
 * github.com/mds1/multicall3) put at the canonical address, where most chains have it.
 */
import { MULTICALL3_ADDRESS } from '../../chains/evm/abi.js';
import { sendTransaction, waitForReceipt } from '../../devchain/chain.js';
import { Multicall3 } from '../../devchain/contracts.generated.js';
import { rpc } from '../../devchain/rpc.js';

/** Deploys Multicall3 from `from`, then copies its runtime code to the canonical address (`anvil_setCode`). */
export async function deployMulticall3(url: string, from: string): Promise<void> {
  const receipt = await waitForReceipt(url, await sendTransaction(url, { from, data: Multicall3.bytecode }));
  const code = await rpc<string>(url, 'eth_getCode', [receipt.contractAddress, 'latest']);
  await rpc(url, 'anvil_setCode', [MULTICALL3_ADDRESS, code]);
  if ((await rpc<string>(url, 'eth_getCode', [MULTICALL3_ADDRESS, 'latest'])) === '0x')
    throw new Error('Multicall3 has no code at its canonical address');
}
