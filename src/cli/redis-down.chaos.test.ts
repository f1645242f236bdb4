/**
 * Reliability, Redis down and back: two API replicas (`tokenquery serve` ×2 on one store) share
 * their rate limits through a private `redis-server` (`--redis`), while loops on both replicas
 * request as fast as they are answered with one key limited to `RATE`/s. Redis is killed
 * (SIGKILL), then started again (empty, as after a crash without persistence). Pass:
 *
 * - no 5xx and no failed request at any time; every refusal is a 429 with `Retry-After`;
 * - while Redis is up, the combined allowed rate of both replicas is about the key's limit
 *   (shared buckets); while it is down, about twice the limit (each replica keeps its own bucket,
 *   as docs/api-keys.md says); once it is back, about the limit again, without any restart;
 * - each replica logs one warning when Redis goes and one info line when it is back.
 *
 * Rates are measured over each phase minus its first second (a fresh bucket's burst).
 *
 * CI: 4 s per phase, one outage. `npm run chaos`: 12 s per phase, three outages.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { chaosSeed, recordResult, scaled } from '../indexer/testing/chaos.js';
import { waitFor } from '../internal/testing/wait.js';
import {
  apiUrl,
  type CliProcess,
  freePort,
  lines,
  logLines,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

const RATE = 20;
const SIZE = scaled({ phaseMs: 4_000, outages: 1, loops: 4 }, { phaseMs: 12_000, outages: 3, loops: 8 });
/** The start of a phase left out of its rate: a fresh bucket allows its burst at once. */
const SETTLE_MS = 1_000;
const dir = tempDir('tq-redis-down-');

let redis: ChildProcess | undefined;

after(async () => {
  await stopRedis();
  removeTempDirs();
});

async function startRedis(port: number): Promise<void> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('error', (error) =>
      reject(new Error(`the redis-down scenario needs redis-server on the PATH: ${error.message}`)),
    );
    child.once('spawn', () => resolve());
  });
  await spawned;
  redis = child;
  await waitFor(
    'redis-server to accept connections',
    () => output.includes('Ready to accept connections'),
    10_000,
    20,
  );
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = undefined;
  if (child === undefined || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

interface Answer {
  at: number;
  replica: number;
  status: number;
  retryAfter: string | null;
}

/** `loops` loops per replica, each requesting `path` as fast as it is answered, until stopped. */
function startLoad(bases: readonly string[], path: string, loops: number) {
  const answers: Answer[] = [];
  const failures: string[] = [];
  let stopped = false;
  const all = bases.flatMap((base, replica) =>
    Array.from({ length: loops }, async () => {
      while (!stopped) {
        try {
          const response = await fetch(base + path, { signal: AbortSignal.timeout(10_000) });
          await response.arrayBuffer();
          answers.push({
            at: Date.now(),
            replica,
            status: response.status,
            retryAfter: response.headers.get('retry-after'),
          });
        } catch (error) {
          failures.push(`replica ${replica}: ${String(error)}`);
        }
      }
    }),
  );
  return {
    answers,
    failures,
    async stop() {
      stopped = true;
      await Promise.all(all);
    },
  };
}

describe('Redis down and back (shared rate limits)', () => {
  test('two replicas: the limit is shared while Redis is up, per replica while it is down, and shared again', async () => {
    const seed = chaosSeed('redis-down');
    const location = `${dir}/store.sqlite`;
    const created = await runCli([
      'keys',
      'create',
      '--label',
      'redis-down',
      '--db',
      location,
      '--rate',
      `${RATE}/s`,
    ]);
    assert.equal(created.code, 0, created.stderr);
    const key = lines(created.stdout).at(-1)!;
    const port = await freePort();
    await startRedis(port);

    const replicas: CliProcess[] = [];
    let load: ReturnType<typeof startLoad> | undefined;
    try {
      for (let i = 0; i < 2; i++)
        replicas.push(
          spawnCli([
            'serve',
            '--db',
            location,
            '--port',
            '0',
            '--redis',
            `redis://127.0.0.1:${port}`,
            '--log-level',
            'info',
          ]),
        );
      const bases: string[] = [];
      for (const replica of replicas) bases.push(await apiUrl(replica, 'tokenquery serving', 30_000));
      for (const replica of replicas)
        assert.ok(
          logLines(replica.stderr()).some((l) => l.msg === 'rate-limit buckets are shared through Redis'),
          'a replica did not connect to Redis',
        );

      const logged = (replica: CliProcess, msg: string) =>
        logLines(replica.stderr()).filter((l) => l.msg === msg).length;
      const DOWN = 'Redis rate-limit store unreachable: limits are kept per process until it is back';
      const BACK = 'Redis rate-limit store reachable again: limits are shared';

      load = startLoad(bases, `/vipapi/eth/tokens/1/50?apikey=${key}`, SIZE.loops);
      const phases: { kind: 'shared' | 'down'; from: number; to: number }[] = [];
      const phase = async (kind: 'shared' | 'down') => {
        const from = Date.now();
        await new Promise((resolve) => setTimeout(resolve, SIZE.phaseMs));
        phases.push({ kind, from, to: Date.now() });
      };

      await phase('shared');
      for (let outage = 1; outage <= SIZE.outages; outage++) {
        await stopRedis();
        // Each replica notices on its next request (a failed command) and warns once.
        await waitFor(
          'both replicas to notice Redis is down',
          () => replicas.every((r) => logged(r, DOWN) >= outage),
          10_000,
          20,
        );
        await phase('down');
        await startRedis(port);
        // ioredis reconnects within 2 s (its retry strategy).
        await waitFor(
          'both replicas to reconnect to Redis',
          () => replicas.every((r) => logged(r, BACK) >= outage),
          10_000,
          20,
        );
        await phase('shared');
      }
      await load.stop();

      // No 5xx, no failure, every refusal a 429 with Retry-After.
      const statuses: Record<number, number> = {};
      for (const a of load.answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      assert.deepEqual(load.failures.slice(0, 5), [], 'requests that got no answer');
      assert.deepEqual(
        Object.keys(statuses)
          .map(Number)
          .filter((s) => s !== 200 && s !== 429),
        [],
        `answers other than 200 and 429: ${JSON.stringify(statuses)}`,
      );
      assert.ok(
        load.answers.every((a) => a.status !== 429 || a.retryAfter !== null),
        'a 429 without Retry-After',
      );

      // The combined allowed rate per phase, and what each replica let through.
      const measured = phases.map((p) => {
        const from = p.from + SETTLE_MS;
        const seconds = (p.to - from) / 1000;
        const inPhase = load!.answers.filter((a) => a.at >= from && a.at < p.to);
        const allowed = inPhase.filter((a) => a.status === 200);
        return {
          kind: p.kind,
          seconds,
          requests: inPhase.length,
          rate: allowed.length / seconds,
          perReplica: [0, 1].map((r) => allowed.filter((a) => a.replica === r).length / seconds),
        };
      });
      const detail = JSON.stringify(measured);
      for (const m of measured) {
        // The load must be far above the limit, or the figures say nothing.
        assert.ok(m.requests / m.seconds > 4 * RATE, `too little load to measure: ${detail}`);
        if (m.kind === 'shared')
          assert.ok(
            m.rate >= 0.75 * RATE && m.rate <= 1.25 * RATE,
            `shared phase not ≈ ${RATE}/s: ${detail}`,
          );
        else {
          assert.ok(
            m.rate >= 1.6 * RATE && m.rate <= 2.4 * RATE,
            `Redis down not ≈ ${2 * RATE}/s: ${detail}`,
          );
          for (const r of m.perReplica)
            assert.ok(r >= 0.75 * RATE && r <= 1.25 * RATE, `a replica not ≈ ${RATE}/s alone: ${detail}`);
        }
      }
      for (const replica of replicas) {
        const result = await replica.stop('SIGTERM');
        assert.equal(result.code, 0, `serve exited ${result.code}: ${result.stderr.slice(-2000)}`);
        const errors = logLines(result.stderr).filter((l) => typeof l.level === 'number' && l.level >= 50);
        assert.deepEqual(errors, [], 'error log lines');
        // One warning per outage (the interval is 30 s, longer than a phase).
        assert.equal(logged(replica, DOWN), SIZE.outages, 'Redis warnings');
      }

      const mean = (kind: string) => {
        const list = measured.filter((m) => m.kind === kind);
        return Math.round((list.reduce((n, m) => n + m.rate, 0) / list.length) * 10) / 10;
      };
      recordResult('redis-down', {
        backend: 'sqlite',
        seed,
        limit: RATE,
        outages: SIZE.outages,
        phaseSeconds: SIZE.phaseMs / 1000,
        requests: load.answers.length,
        statuses,
        sharedRate: mean('shared'),
        downRate: mean('down'),
        phases: measured.map((m) => `${m.kind} ${m.rate.toFixed(1)}/s`),
      });
    } finally {
      await load?.stop();
      for (const replica of replicas) await replica.stop('SIGKILL');
    }
  });
});
