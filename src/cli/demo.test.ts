/**
 * `tokenquery demo` as a user runs it: a banner with curl lines and a key, an API that answers,
 * and Ctrl-C (SIGINT) that ends everything, its anvil included.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  type CliProcess,
  eventually,
  freePort,
  getJson,
  lines,
  removeTempDirs,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

let demo: CliProcess | undefined;
after(async () => {
  await demo?.stop('SIGKILL');
  removeTempDirs();
});

/** Child processes of `pid` with their command names, from /proc (Linux). */
function childrenOf(pid: number): { pid: number; name: string }[] {
  const out: { pid: number; name: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces, so split after the closing parenthesis.
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      if (ppid === pid) out.push({ pid: Number(entry), name: stat.slice(stat.indexOf('(') + 1, close) });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** True while `pid` exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('demo', { skip: !existsSync('/proc/self/stat') && 'needs /proc to find the anvil child' }, () => {
  test('prints a banner whose curl lines answer, and SIGINT stops it and its anvil', async () => {
    const dir = tempDir();
    const db = join(dir, 'demo.sqlite');
    const port = await freePort();
    demo = spawnCli(['demo', '--db', db], {
      // The port comes from the environment; variables meant for a real deployment must not reach the demo.
      env: {
        TOKENQUERY_PORT: String(port),
        TOKENQUERY_RPC: 'eth=http://127.0.0.1:1',
        TOKENQUERY_FROM_BLOCK: 'eth=99999999',
        TOKENQUERY_DB: join(dir, 'production.sqlite'),
      },
    });
    await demo.waitFor((out) => /shown once\):\n\S+\n/.test(out), 30_000, 'the banner with the key');

    const out = lines(demo.stdout());
    const key = out.at(-1)!;
    assert.match(key, /^\S{32,}$/);
    const curls = out
      .map((line) => /^\s*curl '([^']+)'$/.exec(line)?.[1])
      .filter((u): u is string => u !== undefined);
    assert.ok(curls.length >= 6, demo.stdout());
    for (const url of curls.filter((u) => u.includes('/vipapi/')))
      assert.ok(url.endsWith(`apikey=${key}`), url);
    assert.ok(curls.some((u) => u.endsWith('/status')));
    assert.ok(demo.stdout().includes(db), 'the banner names the store');
    assert.ok(
      curls.every((u) => u.startsWith(`http://127.0.0.1:${port}/`)),
      demo.stdout(),
    );

    const tokenInfo = curls.find((u) => /\/vipapi\/eth\/token\/0x[0-9a-f]{40}\?/.test(u))!;
    assert.ok(tokenInfo, demo.stdout());
    const answer = await eventually(
      async () => {
        const a = await getJson(tokenInfo);
        return a.body.code === 1 ? a : undefined;
      },
      20_000,
      'Token Info code 1 from the demo',
    );
    assert.equal(answer.status, 200);

    const anvils = childrenOf(demo.child.pid!).filter((c) => c.name === 'anvil');
    assert.equal(anvils.length, 1, JSON.stringify(childrenOf(demo.child.pid!)));

    const signalled = Date.now();
    const result = await demo.stop('SIGINT');
    const ms = Date.now() - signalled;
    assert.equal(result.code, 0, `exit ${result.code} ${result.signal} after ${ms} ms\n${result.stderr}`);
    assert.ok(ms < 5000, `stopping took ${ms} ms`);
    await eventually(
      async () => (alive(anvils[0]!.pid) ? undefined : true),
      3000,
      'the anvil process ending',
    );
    assert.ok(!existsSync(join(dir, 'production.sqlite')), 'the demo wrote to TOKENQUERY_DB');
  });
});
