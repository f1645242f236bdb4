// `npm run bench -- api-ab <git-ref> [--reps N] [--duration S] [--connections N]`: the API
// benchmark's cached operations (bench/api.ts) from this tree, this tree with its fast path off,
// and another commit, beside the bare `node:http` baseline answering the same bodies. The servers
// run side by side and take turns in each round (order rotated), so a drift of the shared machine's
// speed favours none of them. Prints a table; writes nothing into docs/benchmarks.md.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { buildOf } from './ab.js';
import { apiCaseSpecs, captureBodies, load, type Slice, type Target, wrkScriptDir } from './api.js';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import { type ChildHandle, fixed, int, median, startChild } from './common.js';

export interface ApiAbOptions {
  /** The other build: any commit `git worktree add` accepts. */
  ref: string;
  /** The filled SQLite store to serve. */
  dbPath: string;
  token: string;
  /** Rounds; in each, every server runs once per operation. */
  reps: number;
  /** Seconds of each wrk run. */
  seconds: number;
  connections: number;
}

interface Side {
  name: string;
  child: ChildHandle<ApiServerChildReady>;
  /** Whether requests carry the key (tokenquery) or not (the baseline). */
  keyed: boolean;
}

export async function runApiAb(options: ApiAbOptions, log: (line: string) => void): Promise<string> {
  const specs = apiCaseSpecs(options.token, 50, 50);
  const other = buildOf(options.ref, log);
  const children: ChildHandle<ApiServerChildReady>[] = [];
  try {
    const start = async (file: string, input: ApiServerChildInput) => {
      const child = await startChild<ApiServerChildReady>(file, input);
      children.push(child);
      return child;
    };
    const cached = { mode: 'tokenquery', dbPath: options.dbPath, cache: true } as const;
    const sides: Side[] = [
      { name: 'this tree', child: await start('./api-server-child.js', cached), keyed: true },
      {
        name: 'this tree, fast path off',
        child: await start('./api-server-child.js', { ...cached, fastPath: false }),
        keyed: true,
      },
      { name: options.ref, child: await start(other.childUrl('api-server-child.js'), cached), keyed: true },
    ];
    const bodies = await captureBodies(
      specs,
      sides.map((side) => side.child),
    );
    const bodiesPath = join(wrkScriptDir(), 'api-ab-bodies.json');
    writeFileSync(bodiesPath, JSON.stringify(bodies));
    const bare = await start('./api-server-child.js', { mode: 'baseline', bodiesPath });
    sides.push({ name: 'bare `node:http`', child: bare, keyed: false });
    const target = (side: Side, paths: string[]): Target => ({
      url: side.child.value.url,
      paths: side.keyed ? paths.map((path) => `${path}?apikey=${side.child.value.apiKey!}`) : paths,
      pid: side.child.pid,
    });

    const lines: string[] = [];
    const loads: number[] = [];
    for (const spec of specs) {
      // Fills every cache (an answer is kept the second time it is asked for).
      for (const side of sides) await load(target(side, spec.paths), 2, options.connections);
      const slices = new Map<Side, Slice[]>(sides.map((side) => [side, []]));
      for (let round = 0; round < options.reps; round++) {
        loads.push(loadavg()[0] ?? 0);
        const order = [...sides.slice(round % sides.length), ...sides.slice(0, round % sides.length)];
        for (const side of order) {
          slices.get(side)!.push(await load(target(side, spec.paths), options.seconds, options.connections));
        }
      }
      const bareSlices = slices.get(sides[3]!)!;
      for (const side of sides) {
        const own = slices.get(side)!;
        const perSecond = own.map((s) => s.perSecond);
        const cpu = own.map((s) => (s.cpuSeconds * 1e6) / s.requests);
        const ratios = own.map((s, i) => s.perSecond / bareSlices[i]!.perSecond);
        const range = (values: number[], format: (n: number) => string) =>
          `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
        lines.push(
          `| ${spec.name} | ${side.name} | ${range(perSecond, int)} | ${range(cpu, int)} | ${
            side.keyed ? range(ratios, (n) => fixed(n, 2)) : ''
          } |`,
        );
        log(`api-ab ${spec.name}, ${side.name}: ${lines.at(-1)}`);
      }
    }
    loads.push(loadavg()[0] ?? 0);
    return [
      `Cached operations, ${options.connections} connections, ${options.reps} rounds of ${options.seconds} s per server ` +
        `and operation, servers in turn (order rotated), after 2 s of warm-up each. Median (range) over the rounds; ` +
        `ratio: requests/s ÷ the bare server's in the same round. Load average at each round's start and at the end: ` +
        `${loads.map((l) => fixed(l, 1)).join(', ')}.`,
      '',
      '| operation | server | requests/s | server CPU µs per request | ratio to bare |',
      '|---|---|---|---|---|',
      ...lines,
    ].join('\n');
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    other.remove();
  }
}
