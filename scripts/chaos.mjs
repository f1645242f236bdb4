// `npm run chaos`: the long versions of the reliability scenarios (dist/src/**/*.chaos.test.js),
// one file at a time so they do not compete for the CPU, then their figures written into
// docs/reliability.md between the `<!-- chaos:<scenario>:begin/end -->` markers.
//
// Usage: npm run chaos [-- <substring filter> ...] [-- --no-write]
//   TOKENQUERY_CHAOS_SEED=<n>            replays a run (every scenario prints its seed)
//   TOKENQUERY_CHAOS_BACKENDS=sqlite,postgres with TOKENQUERY_CHAOS_POSTGRES_URL=postgres://...
//                                        also runs them on PostgreSQL (one fresh database each)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.chaos.test.js')) out.push(path);
  }
  return out;
}

const args = process.argv.slice(2);
const write = !args.includes('--no-write');
const filters = args.filter((a) => !a.startsWith('--'));
const files = walk('dist/src', []).filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error('no chaos scenario matched');
  process.exit(1);
}

const reportDir = mkdtempSync(join(tmpdir(), 'tokenquery-chaos-'));
const started = Date.now();
const result = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  {
    stdio: 'inherit',
    env: { ...process.env, TOKENQUERY_CHAOS: '1', TOKENQUERY_CHAOS_REPORT: reportDir },
  },
);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);

const results = readdirSync(reportDir)
  .filter((name) => name.endsWith('.json'))
  .map((name) => JSON.parse(readFileSync(join(reportDir, name), 'utf8')));
rmSync(reportDir, { recursive: true, force: true });
console.log(`\nchaos: ${results.length} scenario(s) passed and reported in ${minutes} min`);

const date = new Date().toISOString().slice(0, 10);
const machine = `Node ${process.version}, ${process.platform}/${process.arch}`;
// Per scenario: a table header and the row of one result.
const tables = {
  crash: [
    '| date | backend | seed | transfers | blocks | runs (episodes) | SIGKILLs mid-backfill | clean backfill |',
    (r) =>
      `| ${date} | ${r.backend} | ${r.seed} | ${r.transfers} | ${r.blocks} | ${r.runs} (${r.episodes}) | ${r.killsMidBackfill} | ${r.cleanBackfillMs} ms |`,
  ],
  reorg: [
    '| date | backend | seed | reorgs (depths) | transfers dropped by them | slowest convergence | transactions sent |',
    (r) =>
      `| ${date} | ${r.backend} | ${r.seed} | ${r.reorgs} (${[...new Set(r.depths)].join(', ')}) | ${r.droppedTransfers} | ${r.maxConvergeMs} ms | ${r.trafficSent} |`,
  ],
  'faulty-node': [
    '| date | backend | seed | requests | faults | kinds | lagging answers | max lag shown | catch-up after outage |',
    (r) =>
      `| ${date} | ${r.backend} | ${r.seed} | ${r.requests} | ${r.faults} | ${Object.keys(r.byFault).length} | ${r.lagged} | ${r.maxLagShown} | ${r.catchUpMs} ms |`,
  ],
  shutdown: [
    '| date | backend | seed | SIGTERMs | slowest exit | requests answered | answered after the signal |',
    (r) =>
      `| ${date} | ${r.backend} | ${r.seed} | ${r.stops} | ${r.maxExitMs} ms | ${r.answered} | ${r.answeredAfterSignal} |`,
  ],
  load: [
    '| date | backend | duration × connections | requests | req/s | p50 | p99 | max | errors / non-2xx | RSS before → peak (first third, last third) | blocks indexed meanwhile |',
    (r) =>
      `| ${date} | ${r.backend} | ${r.seconds} s × ${r.connections} | ${r.requests} | ${r.requestsPerSecond} | ${r.p50Ms} ms | **${r.p99Ms} ms** | ${r.maxMs} ms | ${r.errors} / ${r.non2xx} | ${r.rssBeforeMb} → ${r.rssPeakMb} MB (${r.rssFirstThirdPeakMb}, ${r.rssLastThirdPeakMb}) | ${r.blocksIndexedDuringLoad} |`,
  ],
  'disk-full': [
    '| date | backend | seed | transfers | blocks | disk filled at (size: checkpoint) | error shown | most retries logged per fill | caught up after growing |',
    (r) =>
      `| ${date} | ${r.backend} | ${r.seed} | ${r.transfers} | ${r.blocks} | ${r.fills.join(', ')} | \`${r.firstError}\` | ${r.maxRetriesLogged} | ${r.resumeMs} ms |`,
  ],
  'postgres-restart': [
    '| date | backend | seed | transfers | blocks | restarts (longest) | requests | 503 while down | 5xx outside the windows | indexer retries |',
    (r) =>
      `| ${date} | ${r.backend} | ${r.seed} | ${r.transfers} | ${r.blocks} | ${r.restarts} (${r.maxRestartMs} ms) | ${r.requests} | ${r.unavailable} | 0 | ${r.indexerRetries} |`,
  ],
  'redis-down': [
    '| date | seed | key limit | outages × phase | requests | allowed, Redis up (2 replicas) | allowed, Redis down | answers |',
    (r) =>
      `| ${date} | ${r.seed} | ${r.limit}/s | ${r.outages} × ${r.phaseSeconds} s | ${r.requests} | ${r.sharedRate}/s | ${r.downRate}/s | ${Object.entries(
        r.statuses,
      )
        .map(([s, n]) => `${n} × ${s}`)
        .join(', ')} |`,
  ],
  hostile: [
    '| date | duration | slow connections (peak, ended by the server) | random keys/s | flood answers | valid requests | valid p50 / p99, idle | valid p50 / p99, under attack |',
    (r) =>
      `| ${date} | ${r.seconds} s | ${r.slowConnections} (${r.slowPeak}, ${r.slowEndedByServer}) | ${r.floodRate} | ${Object.entries(
        r.flood,
      )
        .map(([s, n]) => `${n} × ${s}`)
        .join(
          ', ',
        )} | ${r.validRequests} | ${r.idleP50} / ${r.idleP99} ms | ${r.attackP50} / **${r.attackP99} ms** |`,
  ],
};

if (write && results.length > 0) {
  const path = 'docs/reliability.md';
  let doc = readFileSync(path, 'utf8');
  const byScenario = new Map();
  for (const r of results) byScenario.set(r.scenario, [...(byScenario.get(r.scenario) ?? []), r]);
  for (const [scenario, list] of byScenario) {
    const table = tables[scenario];
    if (table === undefined) continue;
    const [header, row] = table;
    const separator = header.replace(/[^|]+/g, '---');
    const block = [header, separator, ...list.map(row)].join('\n');
    const re = new RegExp(
      `(<!-- chaos:${scenario}:begin -->\\n)([\\s\\S]*?)(<!-- chaos:${scenario}:end -->)`,
    );
    if (!re.test(doc)) {
      console.error(`docs/reliability.md has no chaos:${scenario} markers; not recorded`);
      continue;
    }
    doc = doc.replace(re, (_m, begin, _old, end) => `${begin}${block}\n${end}`);
  }
  doc = doc.replace(
    /(<!-- chaos:run:begin -->\n)[\s\S]*?(<!-- chaos:run:end -->)/,
    (_m, begin, end) =>
      `${begin}Last \`npm run chaos\`: ${date}, ${minutes} min, ${machine}, ${results.length} scenario(s) recorded.\n${end}`,
  );
  writeFileSync(path, doc);
  console.log(`chaos: figures written to ${path}`);
}
process.exit(result.status ?? 1);
