// `npm run bench -- realtime`: how long after a block is mined its transfers show in the API, with
// the real CLI (`tokenquery start`) following a real anvil, once with the websocket subscription
// (`--ws`) and once polling only (the default 1 s `--poll-interval`), in the same run.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { encodeCall } from '../src/devchain/abi.js';
import { type AnvilInstance, startAnvil } from '../src/devchain/anvil.js';
import { sendTransaction, setAutomine } from '../src/devchain/chain.js';
import { type DeployedToken, deployDemoTokens, selector, TRANSFER_TOPIC } from '../src/devchain/deploy.js';
import { rpc } from '../src/devchain/rpc.js';
import { sleep } from '../src/internal/async.js';
import { seededRandom } from '../src/internal/random.js';
import { fixed } from './common.js';

const BIN = fileURLToPath(new URL('../../bin/tokenquery.js', import.meta.url));

export interface RealtimeBenchOptions {
  /** Blocks measured per mode, split over `rounds`. */
  blocks: number;
  /** Each mode runs this many times (a fresh `tokenquery start` each), taking turns with the other. */
  rounds: number;
  /** `--poll-interval` of both modes (with `--ws` it is the fallback). */
  pollIntervalMs: number;
  /** How often the client asks the API while it waits for a block. */
  clientPollMs: number;
  /** Pause before each block, drawn uniformly from this range (irregular, so polls cannot line up with it). */
  gapMs: readonly [number, number];
  workDir: string;
  seed: number;
}

export interface RealtimeMode {
  name: string;
  /** Per block: milliseconds from `evm_mine` returning to the API answering with the block's transfers. */
  latencies: number[];
  /** Per block: the same until this process's own `newHeads` subscription heard of the block. */
  nodeLatencies: number[];
  /** API requests made while waiting, in all. */
  requests: number;
}

export interface RealtimeReport {
  modes: RealtimeMode[];
  options: Omit<RealtimeBenchOptions, 'workDir'>;
  /** 1-minute load average at the end of the run (the start is in the machine line). */
  loadAtEnd: number;
}

export async function runRealtimeBench(
  options: RealtimeBenchOptions,
  log: (line: string) => void,
): Promise<RealtimeReport> {
  const anvil = await startAnvil();
  const heads = new Map<number, number>();
  let listener: WebSocket | undefined;
  try {
    const [token] = await deployDemoTokens(anvil.url);
    if (!token) throw new Error('no demo token deployed');
    // From here on a block is mined only when the benchmark says so.
    await setAutomine(anvil.url, false);
    listener = await listenForHeads(anvil, heads);

    const modes: RealtimeMode[] = [
      { name: 'websocket subscription (`--ws`)', latencies: [], nodeLatencies: [], requests: 0 },
      {
        name: `polling only (\`--poll-interval ${options.pollIntervalMs}\`)`,
        latencies: [],
        nodeLatencies: [],
        requests: 0,
      },
    ];
    const next = seededRandom(options.seed);
    const perRound = Math.ceil(options.blocks / options.rounds);
    for (let round = 0; round < options.rounds; round++) {
      for (const [i, mode] of modes.entries()) {
        const ws = i === 0;
        const db = join(options.workDir, `realtime-${round}-${ws ? 'ws' : 'poll'}.sqlite`);
        const server = await startCli(anvil, db, options.pollIntervalMs, ws);
        try {
          const client = apiClient(server.url, server.key, token);
          // Caught up: the API shows every transfer of the token so far.
          let expected = await transferLogCount(anvil.url, token);
          await client.waitForCount(expected, 5, 60_000);
          for (let b = 0; b < perRound; b++) {
            const [low, high] = options.gapMs;
            await sleep(low + next() * (high - low));
            const transfers = 1 + Math.floor(next() * 4);
            for (let t = 0; t < transfers; t++) await sendTransfer(anvil.url, token, next);
            const mined = await rpc<string>(anvil.url, 'evm_mine', []).then(() => performance.now());
            expected += transfers;
            const seen = await client.waitForCount(expected, options.clientPollMs, 30_000);
            const block = Number.parseInt(await rpc<string>(anvil.url, 'eth_blockNumber', []), 16);
            mode.latencies.push(seen - mined);
            const heard = heads.get(block);
            if (heard !== undefined) mode.nodeLatencies.push(heard - mined);
          }
          mode.requests += client.requests();
          client.close();
          log(
            `realtime round ${round + 1}/${options.rounds}, ${ws ? 'ws' : 'poll'}: p50 ${fixed(percentile(mode.latencies, 0.5), 0)} ms so far`,
          );
        } finally {
          await server.stop();
        }
      }
    }
    return {
      modes,
      options: {
        blocks: perRound * options.rounds,
        rounds: options.rounds,
        pollIntervalMs: options.pollIntervalMs,
        clientPollMs: options.clientPollMs,
        gapMs: options.gapMs,
        seed: options.seed,
      },
      loadAtEnd: loadavg()[0] ?? 0,
    };
  } finally {
    listener?.terminate();
    await anvil.stop();
  }
}

/** This process's own `newHeads` subscription: when each block was heard of (performance.now()). */
async function listenForHeads(anvil: AnvilInstance, heads: Map<number, number>): Promise<WebSocket> {
  const ws = new WebSocket(anvil.url.replace(/^http/, 'ws'));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.on('message', (data) => {
    const at = performance.now();
    const message = JSON.parse(String(data)) as { params?: { result?: { number?: string } } };
    const number = message.params?.result?.number;
    if (number !== undefined) heads.set(Number.parseInt(number, 16), at);
  });
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  return ws;
}

async function sendTransfer(url: string, token: DeployedToken, next: () => number): Promise<void> {
  const to = `0x${Math.floor(next() * 2 ** 32)
    .toString(16)
    .padStart(40, '0')}`;
  const data = encodeCall(selector('transfer(address,uint256)'), [
    { type: 'address', value: to },
    { type: 'uint256', value: 1n + BigInt(Math.floor(next() * 1000)) },
  ]);
  await sendTransaction(url, { from: token.deployer, to: token.address, data, gas: 100_000 });
}

async function transferLogCount(url: string, token: DeployedToken): Promise<number> {
  const logs = await rpc<unknown[]>(url, 'eth_getLogs', [
    { fromBlock: '0x0', toBlock: 'latest', address: token.address, topics: [TRANSFER_TOPIC] },
  ]);
  return logs.length;
}

/** A keep-alive client of the Token Info operation, as a dashboard polling for new transfers would be. */
function apiClient(base: string, key: string, token: DeployedToken) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const path = `/vipapi/eth/token/${token.address}?apikey=${key}`;
  let requests = 0;
  const count = (): Promise<number> =>
    new Promise((resolve, reject) => {
      requests++;
      const req = request(`${base}${path}`, { agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            data?: { transferCnt?: number };
          };
          resolve(body.data?.transferCnt ?? -1);
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  return {
    requests: () => requests,
    /** Asks every `everyMs` until the count reaches `expected`; resolves with when the answer arrived. */
    async waitForCount(expected: number, everyMs: number, timeoutMs: number): Promise<number> {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const asked = performance.now();
        const got = await count();
        const now = performance.now();
        if (got >= expected) return now;
        if (now > deadline) throw new Error(`the API still shows ${got} transfers, not ${expected}`);
        await sleep(Math.max(0, everyMs - (now - asked)));
      }
    },
    close: () => agent.destroy(),
  };
}

/** `tokenquery keys create` then `tokenquery start`, as a user would run them. */
async function startCli(anvil: AnvilInstance, db: string, pollIntervalMs: number, ws: boolean) {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('TOKENQUERY_')) env[name] = value;
  const keyOutput = execFileSync(process.execPath, [BIN, 'keys', 'create', '--db', db, '--label', 'bench'], {
    env,
    encoding: 'utf8',
  });
  const key = keyOutput.trim().split('\n').pop()!.trim();
  const args = [
    BIN,
    'start',
    '--rpc',
    `eth=${anvil.url}`,
    ...(ws ? ['--ws', `eth=${anvil.url.replace(/^http/, 'ws')}`] : []),
    '--db',
    db,
    '--port',
    '0',
    '--poll-interval',
    String(pollIntervalMs),
    '--log-level',
    'info',
  ];
  const child: ChildProcess = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tokenquery start did not start: ${stderr}`)), 60_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      for (const line of stderr.split('\n')) {
        if (!line.includes('"tokenquery started"')) continue;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tokenquery start exited (${code}): ${stderr}`));
    });
  });
  return {
    url,
    key,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export function renderRealtime(r: RealtimeReport, machine: string): string {
  const o = r.options;
  const ms = (n: number) => `${fixed(n, 0)} ms`;
  const ws = r.modes[0]!;
  const node = r.modes.flatMap((m) => m.nodeLatencies);
  return [
    `${machine} Load average ${r.loadAtEnd.toFixed(1)} at the end.`,
    '',
    `${o.blocks} blocks per mode, in ${o.rounds} rounds in which the two modes take turns, each a fresh ` +
      `\`tokenquery start\` (SQLite, indexer in its worker thread) on the same anvil. Before each block the ` +
      `benchmark waits ${o.gapMs[0]}–${o.gapMs[1]} ms (uniformly at random), sends 1–4 ERC-20 transfers and mines ` +
      `them with \`evm_mine\`; the client then asks Token Info every ${o.clientPollMs} ms over one keep-alive ` +
      'connection until its transfer count includes them.',
    '',
    '| mode | p50 | p90 | max | mean | API requests per block |',
    '|---|---|---|---|---|---|',
    ...r.modes.map(
      (m) =>
        `| ${m.name} | **${ms(percentile(m.latencies, 0.5))}** | ${ms(percentile(m.latencies, 0.9))} | ` +
        `${ms(Math.max(...m.latencies))} | ${ms(m.latencies.reduce((a, b) => a + b, 0) / m.latencies.length)} | ` +
        `${fixed(m.requests / m.latencies.length, 1)} |`,
    ),
    `| reference: the node's own \`newHeads\` reaching the benchmark (both modes' blocks) | ${ms(percentile(node, 0.5))} | ` +
      `${ms(percentile(node, 0.9))} | ${ms(Math.max(...node))} | | |`,
    '',
    `Target: p50 ≤ 300 ms with the subscription — ${percentile(ws.latencies, 0.5) <= 300 ? 'met' : '**not met**'}.`,
  ].join('\n');
}
