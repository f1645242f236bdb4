/**
 * Hostile clients for the slowloris scenario (`src/cli/hostile.chaos.test.ts`), run in a process
 * of their own so that their work never shares an event loop with the valid client the scenario
 * times:
 * - slowloris: `slowConnections` sockets, each sending a request's headers one short line at a
 *   time and never finishing them; one the server closes is opened again at once, so the
 *   pressure lasts the whole run;
 * - a flood of random keys: `floodConnections` keep-alive loops asking a real operation with a
 *   new `apikey` each time (half shaped like a key, half junk), `floodRate` requests a second in
 *   all.
 *
 * Run as `node hostile-clients.js '<options as JSON>'`; prints one line of JSON, the
 * {@link HostileReport}, when `seconds` are over.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { sleep } from '../../internal/async.js';

export interface HostileOptions {
  /** The API's base URL, `http://127.0.0.1:<port>`. */
  url: string;
  /** A path of a real operation, without `apikey` (the flood adds one). */
  floodPath: string;
  slowConnections: number;
  floodConnections: number;
  /** Flood requests a second, all loops together. */
  floodRate: number;
  seconds: number;
}

export interface HostileReport {
  /** Flood answers by HTTP status. */
  statuses: Record<string, number>;
  /** Flood requests that failed without an answer (reset, refused). */
  floodErrors: number;
  /** Slow connections opened in all (reopened ones included). */
  slowOpened: number;
  /** Slow connections the server ended (a timeout or the connection cap). */
  slowEndedByServer: number;
  /** The most slow connections open at once. */
  slowPeak: number;
}

const SLOW_LINE_INTERVAL_MS = 1_000;

/** GET `path` through `agent`, the body read and dropped: the status, or null when no answer came within 10 s. */
export function statusOf(agent: Agent, host: string, port: number, path: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, agent, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
      res.on('error', () => resolve(null));
    });
    req.setTimeout(10_000, () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

export async function runHostileClients(options: HostileOptions): Promise<HostileReport> {
  const target = new URL(options.url);
  const host = target.hostname;
  const port = Number(target.port);
  const until = Date.now() + options.seconds * 1_000;
  const report: HostileReport = {
    statuses: {},
    floodErrors: 0,
    slowOpened: 0,
    slowEndedByServer: 0,
    slowPeak: 0,
  };

  // ---- slowloris ----
  const open = new Set<Socket>();
  let stopping = false;
  const openSlow = (): void => {
    if (stopping) return;
    const socket = connect({ host, port });
    report.slowOpened++;
    open.add(socket);
    report.slowPeak = Math.max(report.slowPeak, open.size);
    socket.setNoDelay(true);
    socket.on('connect', () => socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`));
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => {
      open.delete(socket);
      if (stopping) return;
      report.slowEndedByServer++;
      // Reopened a little later, as a real attacker would: not in a tight loop.
      setTimeout(openSlow, 50);
    });
  };
  for (let i = 0; i < options.slowConnections; i++) openSlow();
  let line = 0;
  const trickle = setInterval(() => {
    line++;
    for (const socket of open) if (socket.writable) socket.write(`X-Slow-${line}: ${line}\r\n`);
  }, SLOW_LINE_INTERVAL_MS);

  // ---- random keys ----
  const agent = new Agent({ keepAlive: true, maxSockets: options.floodConnections });
  const gap = (1_000 * options.floodConnections) / options.floodRate;
  const loop = async (n: number): Promise<void> => {
    let i = 0;
    while (Date.now() < until) {
      const started = Date.now();
      const key =
        (n + i++) % 2 === 0 ? `tq_${randomBytes(32).toString('base64url')}` : randomBytes(12).toString('hex');
      const status = await statusOf(agent, host, port, `${options.floodPath}?apikey=${key}`);
      if (status === null) report.floodErrors++;
      else report.statuses[status] = (report.statuses[status] ?? 0) + 1;
      await sleep(Math.max(0, gap - (Date.now() - started)));
    }
  };
  await Promise.all(Array.from({ length: options.floodConnections }, (_, n) => loop(n)));

  stopping = true;
  clearInterval(trickle);
  for (const socket of open) socket.destroy();
  agent.destroy();
  return report;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = JSON.parse(process.argv[2] ?? '{}') as HostileOptions;
  const report = await runHostileClients(options);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
