import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The parts of a V8 `.cpuprofile` (as written by `node --cpu-prof`) that a summary needs. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  /** `function (file:line)`. */
  name: string;
  /** Share of all samples spent in the function itself. */
  selfShare: number;
  /** Share of all samples with the function anywhere on the stack. */
  totalShare: number;
}

export interface ProfileSummary {
  self: ProfileEntry[];
  total: ProfileEntry[];
}

/**
 * `node --cpu-prof` writes one file per thread, named `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`;
 * thread 0 is the main thread.
 */
export function isMainThreadProfile(file: string): boolean {
  return /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(file);
}

/**
 * Top functions by self time, and by inclusive time, of the `.cpuprofile` files in `dir`
 * (those `include` accepts, by file name).
 */
export function summarizeProfiles(
  dir: string,
  top = 15,
  include: (file: string) => boolean = () => true,
): ProfileSummary {
  const selfTime = new Map<string, number>();
  const totalTime = new Map<string, number>();
  let all = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile') && include(f))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const label = (id: number): string => {
      const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
      const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : 'native';
      return `${functionName || '(anonymous)'} (${where})`;
    };
    profile.samples.forEach((id, i) => {
      const dt = profile.timeDeltas[i] ?? 0;
      all += dt;
      const own = label(id);
      selfTime.set(own, (selfTime.get(own) ?? 0) + dt);
      // Inclusive time: each distinct function on the stack once (recursion counted once).
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const name = label(at);
        if (seen.has(name)) continue;
        seen.add(name);
        totalTime.set(name, (totalTime.get(name) ?? 0) + dt);
      }
    });
  }
  const rank = (m: Map<string, number>, skip: RegExp | null): ProfileEntry[] =>
    [...m.entries()]
      .filter(([name]) => !skip?.test(name))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name]) => ({
        name,
        selfShare: (selfTime.get(name) ?? 0) / all,
        totalShare: (totalTime.get(name) ?? 0) / all,
      }));
  return {
    self: rank(selfTime, null),
    // Inclusive time of the project's own code only: the framework plumbing every request passes
    // through (fastify hooks, microtask queue) says nothing.
    total: rank(totalTime, /^(?!.*\((dist\/)?(src|bench)\/)/),
  };
}

function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const inProject = relative(process.cwd(), path);
  return inProject.startsWith('..') ? path.replace(/^.*node_modules\//, '') : inProject;
}
