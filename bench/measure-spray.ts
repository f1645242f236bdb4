// Measures how fast `spray` generates transfers on a fresh anvil; the figure the benchmarks rely on.
// Usage: node dist/bench/measure-spray.js [transfers=200000] [holders=10000] [perTx=10000]
import { startAnvil } from '../src/devchain/anvil.js';
import { deployDemoTokens } from '../src/devchain/deploy.js';
import { SPRAY_GAS_LIMIT, spray } from '../src/devchain/traffic.js';

const [transfers = 200_000, holders = 10_000, perTx = 10_000] = process.argv.slice(2).map(Number);
const anvil = await startAnvil({ gasLimit: SPRAY_GAS_LIMIT });
try {
  const [token] = await deployDemoTokens(anvil.url);
  const result = await spray(anvil.url, token!, { transfers, holders, perTx, seed: 1 });
  const gasPerTransfer = result.gasUsed === null ? null : Number(result.gasUsed) / transfers;
  console.log(
    JSON.stringify({
      transfers,
      holders,
      perTx: result.perTx,
      transactions: result.transactions,
      blocks: result.toBlock - result.fromBlock + 1,
      seconds: Math.round(result.elapsedMs) / 1000,
      transfersPerSecond: Math.round(result.transfersPerSecond),
      gasPerTransfer: gasPerTransfer === null ? null : Math.round(gasPerTransfer),
    }),
  );
} finally {
  await anvil.stop();
}
