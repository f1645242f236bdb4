// A small driver for wrk (https://github.com/wg/wrk, Debian package `wrk`): a native HTTP load
// generator. On this 2-core machine autocannon saturates near 15k requests/s and so hides what a
// fast server costs; wrk, in C, takes a fraction of a core for the same load. Runs wrk on one URL
// (or a rotation of paths through a generated Lua script) and parses its `--latency` report.
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const WRK_INSTALL_HINT =
  'wrk not found: install it with `apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk` (macOS)';

/** Null when wrk runs; otherwise the one line that says how to install it. */
export function wrkMissing(): string | null {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  // wrk prints its version and usage and exits 1 when given no URL: only a failed spawn means missing.
  return probe.error ? WRK_INSTALL_HINT : null;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  /**
   * Latency percentiles in milliseconds, as wrk's `--latency` report gives them (2 decimals of its
   * unit); NaN when no request completed within the run (wrk then prints zeros).
   */
  p50Ms: number;
  p75Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Responses with a status outside 2xx/3xx. */
  non2xx: number;
  /** connect + read + write + timeout errors. */
  socketErrors: number;
}

export interface WrkRun {
  /** Base URL, `http://127.0.0.1:port`. */
  url: string;
  /** One path is requested again and again; several in turn (each wrk thread keeps its own turn). */
  paths: string[];
  connections: number;
  seconds: number;
  /** Default 1: one wrk thread keeps up with any server here and leaves the other core to it. */
  threads?: number;
  /** Where a Lua script for a rotation of paths is written. */
  workDir: string;
  /** A request not answered within this counts as a timeout error (wrk's default is 2 s). Default 30. */
  timeoutSeconds?: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `981.00us`, `1.02ms`, `1.20s` → milliseconds. */
function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (!match) throw new Error(`wrk: cannot read the duration "${text}"`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** Parses wrk's report (run with `--latency`). */
export function parseWrkOutput(text: string): WrkResult {
  const percentile = (p: number): number => {
    const match = new RegExp(`^\\s*${p}%\\s+(\\S+)\\s*$`, 'm').exec(text);
    if (!match) throw new Error(`wrk: no ${p}% line in its report (was it run with --latency?):\n${text}`);
    return durationMs(match[1]!);
  };
  const total = /^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h),/m.exec(text);
  const rate = /^Requests\/sec:\s+([\d.]+)/m.exec(text);
  if (!total || !rate) throw new Error(`wrk: no request count in its report:\n${text}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  const requests = Number(total[1]);
  const latency = (p: number) => (requests === 0 ? Number.NaN : percentile(p));
  return {
    requests,
    seconds: durationMs(`${total[2]}${total[3]}`) / 1000,
    requestsPerSecond: Number(rate[1]),
    p50Ms: latency(50),
    p75Ms: latency(75),
    p90Ms: latency(90),
    p99Ms: latency(99),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

let scripts = 0;

/** Runs wrk once and parses its report. */
export function runWrk(run: WrkRun): Promise<WrkResult> {
  const threads = Math.min(run.threads ?? 1, run.connections);
  const timeout = run.timeoutSeconds ?? 30;
  const args = ['--latency', '-t', String(threads), '-c', String(run.connections), '-d', `${run.seconds}s`];
  args.push('--timeout', `${timeout}s`);
  let target = run.url + run.paths[0]!;
  if (run.paths.length > 1) {
    const script = join(run.workDir, `wrk-rotation-${process.pid}-${scripts++}.lua`);
    writeFileSync(
      script,
      `local paths = ${luaList(run.paths)}\nlocal i = 0\n` +
        'request = function()\n  i = i % #paths + 1\n  return wrk.format(nil, paths[i])\nend\n',
    );
    args.push('-s', script);
    target = run.url;
  }
  args.push(target);
  return new Promise((resolve, reject) => {
    execFile(
      'wrk',
      args,
      { encoding: 'utf8', timeout: (run.seconds + timeout + 30) * 1000 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`wrk ${args.join(' ')} failed: ${error.message}\n${stderr}`));
          return;
        }
        try {
          resolve(parseWrkOutput(stdout));
        } catch (parseError) {
          reject(parseError);
        }
      },
    );
  });
}

function luaList(items: string[]): string {
  return `{\n${items.map((s) => `  ${JSON.stringify(s)},`).join('\n')}\n}`;
}
