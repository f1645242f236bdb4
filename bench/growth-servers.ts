// Servers for the growth benchmark: \`tokenquery serve\` on a store and the bare \`node:http\` floor,
// each started and timed to its first 200 answer, and their memory measured under load; with the
// small steps around them (an API key made as a user makes it, a file read into the page cache,
// an answer checked).

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createReadStream, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../src/internal/testing/net.js';
import { cpuSecondsOf, load } from './api.js';
import type { GrowthBenchOptions } from './growth.js';
import type { MemoryResult } from './growth-report.js';
import { BIN, cleanEnv } from './growth-store.js';

export interface Server {
  url: string;
  pid: number;
  apiKey: string;
  stop(): Promise<void>;
}

/** Reads a file to the end (into the OS page cache). */
export async function readThrough(path: string): Promise<void> {
  for await (const _ of createReadStream(path, { highWaterMark: 1 << 20 })) {
    // nothing: reading is the point
  }
}

/** `tokenquery keys create`, as a user runs it; the key is the last line of its output. */
export function createKey(db: string, cwd: string): string {
  const out = execFileSync(process.execPath, [BIN, 'keys', 'create', '--db', db, '--label', 'bench-growth'], {
    env: cleanEnv(),
    cwd,
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop()!.trim();
}

/** GET over a fresh connection: the status code, or null when nothing listens yet. */
function status(url: string): Promise<number | null> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? null));
    });
    request.once('error', () => resolve(null));
    request.setTimeout(5_000, () => request.destroy());
  });
}

export async function answer(url: string): Promise<string> {
  const response = await fetch(url);
  const body = await response.text();
  const code = (JSON.parse(body) as { code?: unknown }).code;
  if (response.status !== 200 || code !== 1)
    throw new Error(`${url}: HTTP ${response.status}, code ${String(code)}`);
  return body;
}

/** Entries of a list answer (`data` array, or `data.list`), or 1 for an object. */
export function countEntries(body: string): number {
  const data = (JSON.parse(body) as { data?: unknown }).data;
  if (Array.isArray(data)) return data.length;
  const list = (data as { list?: unknown } | undefined)?.list;
  return Array.isArray(list) ? list.length : 1;
}

/**
 * Spawns `args` (a server on `port`) and polls `path` every 5 ms over fresh connections; resolves
 * with the time from spawn to the first 200 answer, and the CPU time the process had used by then.
 */
async function spawnUntilOk(
  args: string[],
  port: number,
  path: string,
  cwd: string,
): Promise<{ child: ChildProcess; ms: number; cpuMs: number; stop: () => Promise<void> }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env: cleanEnv(), cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}${path}`;
  for (;;) {
    const code = await status(url);
    if (code === 200) {
      const ms = performance.now() - t0;
      return { child, ms, cpuMs: cpuSecondsOf(child.pid!) * 1000, stop };
    }
    if (exited || performance.now() - t0 > 60_000 || (code !== null && code !== 200)) {
      await stop();
      throw new Error(`${args.slice(1, 3).join(' ')} did not answer 200 (got ${code}): ${stderr}`);
    }
    await sleep(5);
  }
}

/** `tokenquery serve` on `db`, timed from spawn to the first 200 answer to `path`. */
export async function startServe(
  db: string,
  apiKey: string,
  path: string,
  cwd: string,
): Promise<{ server: Server; ms: number; cpuMs: number }> {
  const port = await freePort();
  const args = [
    BIN,
    'serve',
    '--db',
    db,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--log-level',
    'warn',
  ];
  const { child, ms, cpuMs, stop } = await spawnUntilOk(args, port, `${path}?apikey=${apiKey}`, cwd);
  return { server: { url: `http://127.0.0.1:${port}`, pid: child.pid!, apiKey, stop }, ms, cpuMs };
}

/** The floor: `node -e` with a bare `node:http` server answering the file's bytes to every request. */
export async function startBare(
  bodyPath: string,
  cwd: string,
): Promise<{ server: Server; ms: number; cpuMs: number }> {
  const port = await freePort();
  const script =
    `const b=require('node:fs').readFileSync(${JSON.stringify(bodyPath)});` +
    "require('node:http').createServer((q,s)=>{s.writeHead(200,{'content-type':'application/json; charset=utf-8','content-length':b.length});s.end(b)})" +
    `.listen(${port},'127.0.0.1')`;
  const { child, ms, cpuMs, stop } = await spawnUntilOk(['-e', script], port, '/', cwd);
  return { server: { url: `http://127.0.0.1:${port}`, pid: child.pid!, apiKey: '', stop }, ms, cpuMs };
}

/** A `/proc/<pid>/status` field in bytes (VmRSS, VmHWM). */
export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // not Linux, or the process is gone
  }
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

export async function measureMemory(
  start: () => Promise<{ server: Server; ms: number; cpuMs: number }>,
  paths: string[],
  options: Pick<GrowthBenchOptions, 'memorySeconds' | 'connections'>,
): Promise<MemoryResult> {
  const { server } = await start();
  try {
    const idleBytes = procStatus(server.pid, 'VmRSS');
    const withKey = server.apiKey === '' ? paths : paths.map((p) => `${p}?apikey=${server.apiKey}`);
    const slice = await load(
      { url: server.url, paths: withKey, pid: server.pid },
      options.memorySeconds,
      options.connections,
    );
    return {
      idleBytes,
      peakBytes: procStatus(server.pid, 'VmHWM'),
      requestsPerSecond: slice.perSecond,
      errors: slice.errors + slice.non2xx,
    };
  } finally {
    await server.stop();
  }
}
