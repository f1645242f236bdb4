// The address operations benchmark's section of docs/benchmarks.md (measured in address-ops.ts).
import type { AddressOpsReport, Measured, ServerName } from './address-ops.js';
import { spread } from './address-ops.js';
import { fixed, int, median } from './common.js';

/** Issue #16's target for every operation, uncached, on the 10M store. */
const TARGET_P50_MS = 2;

const SERVER_LABEL: Record<ServerName, string> = {
  bare: 'bare `node:http`',
  cached: '`serve`, cached',
  uncached: 'uncached',
};

export function renderAddressOps(r: AddressOpsReport, machineLine: string): string {
  const o = r.options;
  const spot = o.shape.spotlight ?? {};
  const f = r.store.facts;
  const perTransfer = (bytes: number) => bytes / o.shape.transfers;
  // A run in which no request was answered has no percentiles: slower than the run itself.
  const ms = (n: number) => (Number.isFinite(n) ? fixed(n, 2) : `> ${o.seconds * 1000}`);
  const ratio = (n: number) => (Number.isFinite(n) ? fixed(n) : '∞');
  const unanswered = (n: number) => (Number.isNaN(n) ? Number.POSITIVE_INFINITY : n);
  const range = (values: number[], format: (n: number) => string) => {
    const s = spread(values);
    return `${format(s.min)}–${format(s.max)}`;
  };
  const rows: string[] = [];
  let worstUncached = 0;
  for (const c of r.cases) {
    const bare = c.servers.bare;
    for (const which of ['bare', 'cached', 'uncached'] as const) {
      const m: Measured = c.servers[which];
      const p50 = m.latency.map((x) => unanswered(x.p50Ms));
      const p99 = m.latency.map((x) => unanswered(x.p99Ms));
      const rps = m.throughput.map((x) => x.requestsPerSecond);
      const p50Ratio = median(p50.map((v, i) => v / unanswered(bare.latency[i]!.p50Ms)));
      const rpsRatio = median(rps.map((v, i) => v / bare.throughput[i]!.requestsPerSecond));
      const p50Cell = which === 'uncached' ? `**${ms(median(p50))}**` : ms(median(p50));
      if (which === 'uncached') worstUncached = Math.max(worstUncached, median(p50));
      rows.push(
        `| ${which === 'bare' ? `${c.name} (${c.holds})` : ''} | ${which === 'bare' ? `${int(c.bodyBytes)} B` : ''} | ${SERVER_LABEL[which]} | ` +
          `${p50Cell} / ${ms(median(p99))} ms | ${range(p50, ms)} | ${int(median(rps))} | ${range(rps, int)} | ` +
          `${fixed(median(m.cpuMicros), 0)} µs | ${which === 'bare' ? '' : ratio(p50Ratio)} | ${which === 'bare' ? '' : ratio(rpsRatio)} |`,
      );
    }
  }
  const met = worstUncached <= TARGET_P50_MS ? 'met' : 'missed';
  const objects = (facts: typeof f) => new Map(facts.objects.map((x) => [x.name, x.bytes] as const));
  const after = objects(f);
  const beforeObjects = r.before ? objects(r.before.facts) : new Map<string, number>();
  const added = new Set(r.newObjects);
  const names = [...after.keys()].filter((name) => perTransfer(after.get(name)!) >= 0.5 || added.has(name));
  const addedBytes = [...added].reduce((sum, name) => sum + (after.get(name) ?? 0), 0);
  const storeLines = [
    `Store: ${int(o.shape.transfers)} SYNTHETIC transfers (\`src/importer/testing/synthetic-export.ts\`, seed ${o.shape.seed}) of ` +
      `${int(o.shape.tokens)} tokens among ${int(o.shape.holders)} holders, 100 per block, with the generator's spotlight: ` +
      `an address that receives one transfer of each of ${int(spot.walletTokens ?? 0)} tokens, an address in ` +
      `${int(spot.busyTransfers ?? 0)} transfers (recipient of two in three), token 0 minted once to each of ` +
      `${int(spot.tokenHolders ?? 0)} fresh addresses; these rows spread evenly over the history. Built by ` +
      `\`tokenquery import - --sorted\` in ${fixed(f.importSeconds / 60, 1)} min (${f.builtAt}; ` +
      `${r.store.reused ? 'reused from' : 'kept in'} \`${r.store.path.replace(/\/store\.sqlite$/, '')}\`).`,
    '',
    r.before
      ? `| SQLite file, bytes per transfer | this schema: **${fixed(perTransfer(r.bytes), 1)}** | the schema before (same export, its own import, ${fixed(r.before.facts.importSeconds / 60, 1)} min): ${fixed(perTransfer(r.beforeBytes), 1)} | ratio ${fixed(r.bytes / r.beforeBytes)} |`
      : `| SQLite file, bytes per transfer | **${fixed(perTransfer(r.bytes), 1)}** | (no store of the schema before cached) | |`,
    '|---|---|---|---|',
    ...names.map(
      (name) =>
        `| of which \`${name}\`${added.has(name) ? ` (new in \`${r.newestMigration}\`)` : ''} | ${fixed(perTransfer(after.get(name)!), 1)} | ${beforeObjects.has(name) ? fixed(perTransfer(beforeObjects.get(name)!), 1) : ''} | |`,
    ),
    `| all that \`${r.newestMigration}\` creates | ${fixed(perTransfer(addedBytes), 1)} | | |`,
    `| \`balances\` rows | ${int(f.balanceRows)} (${fixed(f.balanceRows / o.shape.transfers, 2)} per transfer) | ${r.before ? int(r.before.facts.balanceRows) : ''} | |`,
  ];
  return [
    `${machineLine} Load average at the start of each round: ${r.loads
      .slice(0, -1)
      .map((l) => fixed(l, 1))
      .join(', ')}; at the end ${fixed(r.loads.at(-1)!, 1)}.`,
    '',
    ...storeLines,
    '',
    `wrk (\`bench/wrk.ts\`), one URL repeated per run, ${o.seconds} s per run: **latency** at 1 connection (a ` +
      `request's own time, nothing queued), **throughput** at ${o.connections} connections; ${o.warmupSeconds} s of warm-up ` +
      `per server and operation, then ${o.reps} rounds in which the three servers take turns (order rotated) on each ` +
      'operation. Figures: median of the rounds, with the range of the rounds beside them; ratios: median of the ' +
      'per-round ratios to the bare server. **bare**: a `node:http` server answering the exact body tokenquery ' +
      'answers for that URL. **cached**: the real `tokenquery serve`; the second and later requests come from its ' +
      'response cache. **uncached**: `startApiServer` with `responseCache: false` (`bench/api-server-child.ts`), ' +
      'every answer read from the store. CPU: user + system time of the server process per request in the ' +
      'latency run. A server still busy with the requests a run left queued is waited for before the next run.',
    '',
    `| operation (answer) | body | server | p50 / p99 at 1 connection | p50 range | req/s at ${o.connections} connections | req/s range | CPU/req | p50 ÷ bare | req/s ÷ bare |`,
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Target uncached p50 ≤ ${TARGET_P50_MS} ms on every operation: worst ${ms(worstUncached)} ms, **${met}**. Errors (non-2xx, socket): ${r.errors}.`,
  ].join('\n');
}
