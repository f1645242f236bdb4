import { execFileSync, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { resolveAnvilBinary } from '../src/devchain/anvil.js';

/** What the figures were measured on; printed beside every table. */
export interface MachineFacts {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  anvil: string;
  /** 1-minute load average when the run started: the machine is shared. */
  load: number;
  /** ISO date and time of the run. */
  date: string;
}

export function machineFacts(): MachineFacts {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) cpu = match[1].trim();
  } catch {
    // not Linux: os.cpus() is as good
  }
  let anvil = 'unknown';
  try {
    anvil = execFileSync(resolveAnvilBinary(), ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    // reported as unknown
  }
  return {
    cpu,
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    anvil,
    load: loadavg()[0] ?? 0,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/**
 * CPU seconds (user and system) that process `pid` has used so far, from Linux's /proc, or null
 * where that cannot be read. Used for the node's share of a run: on a machine this small the
 * node and the client compete for the same cores.
 */
export function processCpuSeconds(pid: number): number | null {
  try {
    // Fields 14 and 15 (utime, stime), after the parenthesized command name; USER_HZ is 100.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** CPU seconds each thread of this process has used so far, by thread id, in thread-id order (Linux only; empty elsewhere). */
export function threadCpuSeconds(): Map<number, number> {
  const threads = new Map<number, number>();
  let ids: string[];
  try {
    ids = readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const id of ids.map(Number).sort((a, b) => a - b)) {
    try {
      const fields = readFileSync(`/proc/self/task/${id}/stat`, 'utf8').split(') ')[1]!.split(' ');
      threads.set(id, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return threads;
}

/**
 * CPU seconds per thread used since `before` (a {@link threadCpuSeconds} reading), in thread-id
 * order: the main thread first, then V8's and libuv's helpers, and worker threads last (threads
 * are all named `node`, so the order is what tells them apart).
 */
export function threadCpuSince(before: Map<number, number>): number[] {
  return [...threadCpuSeconds()].map(([id, seconds]) => seconds - (before.get(id) ?? 0));
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** 12345.6 → "12,346". */
export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function fixed(n: number, digits = 2): string {
  return n.toFixed(digits);
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

/**
 * Samples `process.memoryUsage()` every `everyMs` and keeps the peak RSS, and the whole sample it
 * was seen in (`atPeak`: this thread's heap and the process's external memory at that moment).
 */
export function rssSampler(everyMs = 10): { peak(): number; stop(): number; atPeak(): NodeJS.MemoryUsage } {
  let atPeak = process.memoryUsage();
  const sample = (): void => {
    const usage = process.memoryUsage();
    if (usage.rss > atPeak.rss) atPeak = usage;
  };
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    peak: () => Math.max(atPeak.rss, process.memoryUsage().rss),
    stop() {
      clearInterval(timer);
      sample();
      return atPeak.rss;
    },
    atPeak: () => atPeak,
  };
}

/** Messages a benchmark child sends over IPC. */
export type ChildMessage<T> = { type: 'ready' | 'result'; value: T } | { type: 'error'; message: string };

/** In a child: the JSON input the parent passed as argv[2]. */
export function childInput<T>(): T {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('benchmark child started without its input (argv[2])');
  return JSON.parse(raw) as T;
}

/** In a child: sends a message to the parent and resolves once it is handed to the channel. */
export function sendToParent<T>(message: ChildMessage<T>): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) {
      reject(new Error('benchmark child has no IPC channel'));
      return;
    }
    process.send(message, (error: Error | null) => (error ? reject(error) : resolve()));
  });
}

export interface ChildHandle<T> {
  /** The child's first `ready` or `result` message. */
  value: T;
  pid: number;
  /** Asks the child to stop (disconnects IPC), and kills it after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Forks a compiled benchmark child (`dist/bench/<file>`) with its input as JSON in argv[2] and waits
 * for its first message. The child runs in its own process so that it has a core and an event loop
 * to itself (and its RSS and CPU profile are its own).
 */
export function startChild<T>(
  file: string,
  input: unknown,
  options: { execArgv?: string[]; timeoutMs?: number } = {},
): Promise<ChildHandle<T>> {
  const child = fork(new URL(file, import.meta.url), [JSON.stringify(input)], {
    execArgv: options.execArgv ?? [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} gave no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs ?? 300_000);
    child.once('message', (raw) => {
      clearTimeout(timer);
      const message = raw as ChildMessage<T>;
      if (message.type === 'error') {
        void stop();
        reject(new Error(`${file}: ${message.message}`));
      } else {
        resolve({ value: message.value, pid: child.pid!, stop });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited before answering (${signal ?? `code ${code}`})`));
    });
  });
}

/** Runs a one-shot child to its result and waits for it to exit. */
export async function runChild<T>(file: string, input: unknown, execArgv: string[] = []): Promise<T> {
  const handle = await startChild<T>(file, input, { execArgv });
  await handle.stop();
  return handle.value;
}

/** In a child: runs `main`, reports its value or error to the parent. */
export async function childMain<T>(
  main: () => Promise<T>,
  type: 'ready' | 'result' = 'result',
): Promise<void> {
  try {
    const value = await main();
    await sendToParent<T>({ type, value });
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    await sendToParent<T>({ type: 'error', message }).catch(() => {});
    process.exitCode = 1;
  }
}
