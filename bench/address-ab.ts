// `npm run bench -- address-ab <git-ref> [--address-rows N] [--reps N] [--wrk-seconds S]`: Address
// Token Balances of the address holding 10,000 tokens (issue #16's one missed read target), with the
// response cache off, from this tree's API against another commit's, beside a bare `node:http`
// server answering the same body; on the address-ops benchmark's store. The three servers run side
// by side and take turns in each round (order rotated), so a drift of the shared machine's speed
// favours none of them. Prints a table; writes nothing into docs/benchmarks.md.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createSyntheticExport } from '../src/importer/testing/synthetic-export.js';
import { buildOf } from './ab.js';
import { fetchBody, settle } from './address-ops.js';
import { cpuSecondsOf } from './api.js';
import type { ApiServerChildInput, ApiServerChildReady } from './api-server-child.js';
import { type ChildHandle, fixed, int, median, startChild } from './common.js';
import { readThrough } from './growth-servers.js';
import { cachedStore, type StoreShape } from './growth-store.js';
import { runWrk } from './wrk.js';

export interface AddressAbOptions {
  /** The other build: any commit `git worktree add` accepts. */
  ref: string;
  shape: StoreShape;
  /** Rounds; in each, every server runs once at 1 connection. */
  reps: number;
  /** Seconds of each wrk run. */
  seconds: number;
  workDir: string;
}

interface Side {
  name: string;
  /** `http://127.0.0.1:port`. */
  url: string;
  /** The path and query wrk requests. */
  request: string;
  pid: number;
  p50: number[];
  p99: number[];
  /** Server CPU (user + system) per request, µs. */
  cpu: number[];
}

export async function runAddressAb(options: AddressAbOptions, log: (line: string) => void): Promise<string> {
  const store = await cachedStore(options.shape, log);
  // Into the OS page cache before anything is timed, as address-ops does.
  await readThrough(store.path);
  const { wallet } = createSyntheticExport(options.shape).spotlight;
  const path = `/vipapi/eth/address/tokenbalance/${wallet}`;
  const other = buildOf(options.ref, log);
  const children: ChildHandle<ApiServerChildReady>[] = [];
  try {
    const start = async (file: string, input: ApiServerChildInput) => {
      const child = await startChild<ApiServerChildReady>(file, input);
      children.push(child);
      return child;
    };
    const input: ApiServerChildInput = { mode: 'tokenquery', dbPath: store.path, cache: false };
    const tokenquery = [
      { name: 'this tree', child: await start('./api-server-child.js', input) },
      { name: options.ref, child: await start(other.childUrl('api-server-child.js'), input) },
    ];
    const sides: Side[] = [];
    const bodies: string[] = [];
    for (const { name, child } of tokenquery) {
      const request = `${path}?apikey=${child.value.apiKey!}`;
      bodies.push(await fetchBody(child.value.url + request));
      sides.push({ name, url: child.value.url, request, pid: child.pid, p50: [], p99: [], cpu: [] });
    }
    if (bodies[0] !== bodies[1]) throw new Error(`address-ab: ${options.ref} answers ${path} differently`);
    const bodiesPath = join(options.workDir, 'address-ab-bodies.json');
    writeFileSync(bodiesPath, JSON.stringify({ [path]: bodies[0] }));
    const bare = await start('./api-server-child.js', { mode: 'baseline', bodiesPath });
    sides.push({
      name: 'bare `node:http`',
      url: bare.value.url,
      request: path,
      pid: bare.pid,
      p50: [],
      p99: [],
      cpu: [],
    });
    log(`address-ab: ${path}: ${int(Buffer.byteLength(bodies[0]!))} B from both builds`);

    const wrk = (side: Side, seconds: number) =>
      runWrk({ url: side.url, paths: [side.request], connections: 1, seconds, workDir: options.workDir });
    for (const side of sides) {
      await wrk(side, 1);
      await settle(side.pid, log);
    }
    const loads: number[] = [];
    for (let round = 0; round < options.reps; round++) {
      loads.push(loadavg()[0] ?? 0);
      const order = [...sides.slice(round % 3), ...sides.slice(0, round % 3)];
      for (const side of order) {
        const before = cpuSecondsOf(side.pid);
        const run = await wrk(side, options.seconds);
        // The request in flight when wrk stops is still answered (so + 1).
        await settle(side.pid, log);
        side.cpu.push(((cpuSecondsOf(side.pid) - before) * 1e6) / (run.requests + 1));
        side.p50.push(run.p50Ms);
        side.p99.push(run.p99Ms);
        log(
          `address-ab round ${round + 1}/${options.reps}, ${side.name}: p50 ${fixed(run.p50Ms)} ms, CPU ${int(side.cpu.at(-1)!)} µs per request`,
        );
      }
    }
    loads.push(loadavg()[0] ?? 0);
    const range = (values: number[], format: (n: number) => string = fixed): string =>
      `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
    const bareSide = sides[2]!;
    const ratio = (side: Side) => median(side.p50.map((p, i) => p / bareSide.p50[i]!));
    return [
      `Address Token Balances of the address holding ${int(options.shape.spotlight?.walletTokens ?? 0)} tokens, ` +
        `${int(Buffer.byteLength(bodies[0]!))} B, response cache off; ${int(options.shape.transfers)}-transfer store ` +
        `(${store.path}); ${options.reps} rounds of ${options.seconds} s at 1 connection, servers in turn. ` +
        `Load average at the start of each round and at the end: ${loads.map((l) => fixed(l, 1)).join(', ')}.`,
      '',
      '| server | p50 ms (median, range) | p99 ms (median) | CPU per request µs (median, range) | p50 ÷ bare (median of rounds) |',
      '|---|---|---|---|---|',
      ...sides.map(
        (side) =>
          `| ${side.name} | ${range(side.p50)} | ${fixed(median(side.p99))} | ${range(side.cpu, int)} | ${side === bareSide ? '' : fixed(ratio(side), 1)} |`,
      ),
    ].join('\n');
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    other.remove();
  }
}
