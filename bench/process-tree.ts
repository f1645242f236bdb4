// Process trees for the benchmarks that launch whole indexers (Ponder spawns workers): peak RSS
// and CPU time of a process and its descendants from Linux /proc, output read line by line, a
// process group stopped, and a free port.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Peak RSS of a process and its descendants (/proc VmRSS, the descendants listed anew every second). */
export function treeRssSampler(root: number): { stop(): number } {
  let pids = [root];
  let peak = 0;
  let listedAt = 0;
  const sample = (): void => {
    if (Date.now() - listedAt > 1000) {
      pids = descendants(root);
      listedAt = Date.now();
    }
    let sum = 0;
    for (const pid of pids) sum += vmRss(pid);
    peak = Math.max(peak, sum);
  };
  sample();
  const timer = setInterval(sample, 100);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/** User + system CPU seconds of a process and its live descendants, and of the children they reaped. */
export function treeCpuSeconds(root: number): number {
  let ticks = 0;
  for (const pid of descendants(root)) {
    const fields = statFields(pid);
    // utime, stime, cutime, cstime: fields 14–17 of /proc/<pid>/stat.
    if (fields) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks / CLOCK_TICKS;
}

/** `getconf CLK_TCK`: 100 on every Linux build that matters here. */
const CLOCK_TICKS = 100;

/** Fields after the command name of /proc/<pid>/stat (field 3, the state, first). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (!fields) continue;
    const ppid = Number(fields[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

function vmRss(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export function lines(
  child: ChildProcess,
  stream: 'stdout' | 'stderr',
  onLine: (line: string) => void,
): void {
  let rest = '';
  child[stream]!.setEncoding('utf8');
  child[stream]!.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) if (part.trim() !== '') onLine(part);
  });
}

/** SIGTERM to the child's process group (Ponder shuts down cleanly on it), SIGKILL after 15 s. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
