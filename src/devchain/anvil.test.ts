import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { startAnvil } from './anvil.js';
import { getAccounts, getBlock, getBlockNumber } from './chain.js';
import { DevchainError, rpc } from './rpc.js';

/** True while the process exists and is not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  const stat = `/proc/${pid}/stat`;
  if (existsSync(stat)) {
    // Field 3 is the state; it follows the command name in parentheses.
    const text = readFileSync(stat, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) !== 'Z';
  }
  return true;
}

async function waitUntilGone(pid: number, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/**
 * Runs a node process that starts anvil, prints its pid, then runs `then` (source text).
 * Resolves with the anvil pid and the child's exit.
 */
function runParent(then: string): {
  /** Resolves with anvil's pid and cache directory. */
  pid: Promise<{ pid: number; cacheDir: string }>;
  child: ReturnType<typeof spawn>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const anvilModule = new URL('./anvil.js', import.meta.url).href;
  const source = `
    const { startAnvil } = await import(${JSON.stringify(anvilModule)});
    const anvil = await startAnvil();
    process.stdout.write(anvil.pid + ' ' + anvil.cacheDir + '\\n');
    ${then}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const pid = new Promise<{ pid: number; cacheDir: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const [pid, cacheDir] = (out.split('\n')[0] ?? '').split(' ');
      if (out.includes('\n') && pid && cacheDir) resolve({ pid: Number(pid), cacheDir });
    });
    void exit.then(() => reject(new Error(`parent exited before printing a pid: ${out}`)));
  });
  return { pid, child, exit };
}

describe('anvil process', () => {
  test('starts on 127.0.0.1 and answers with the configured chain id and accounts', async () => {
    const anvil = await startAnvil({ chainId: 4242, accounts: 3, gasLimit: 123_456_789n });
    try {
      assert.match(anvil.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(anvil.url, `http://127.0.0.1:${anvil.port}`);
      assert.notEqual(anvil.port, 8545);
      assert.equal(await rpc(anvil.url, 'eth_chainId'), '0x1092');
      assert.equal((await getAccounts(anvil.url)).length, 3);
      assert.equal((await getBlock(anvil.url, 'latest'))!.gasLimit, 123_456_789n);
    } finally {
      await anvil.stop();
    }
  });

  test('two instances run side by side on different ports', async () => {
    const [a, b] = await Promise.all([startAnvil(), startAnvil()]);
    try {
      assert.notEqual(a.port, b.port);
      await rpc(a.url, 'anvil_mine', ['0x2']);
      assert.equal(await getBlockNumber(a.url), 2);
      assert.equal(await getBlockNumber(b.url), 0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  test('interval mining produces blocks without transactions', async () => {
    const anvil = await startAnvil({ blockTime: 1 });
    try {
      const deadline = Date.now() + 5000;
      while ((await getBlockNumber(anvil.url)) < 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      assert.ok((await getBlockNumber(anvil.url)) >= 2);
    } finally {
      await anvil.stop();
    }
  });

  test('stop() ends the process, frees the port, removes its cache directory, and can be called twice', async () => {
    const anvil = await startAnvil();
    assert.ok(isAlive(anvil.pid));
    assert.ok(existsSync(anvil.cacheDir));
    await anvil.stop();
    assert.equal(isAlive(anvil.pid), false);
    assert.equal(existsSync(anvil.cacheDir), false, 'anvil leaves its states directory; stop removes it');
    await anvil.stop();
    await assert.rejects(rpc(anvil.url, 'eth_chainId'), DevchainError);
  });

  test('a missing binary is reported as such', async () => {
    await assert.rejects(startAnvil({ binary: '/nonexistent/anvil' }), (error: unknown) => {
      assert.ok(error instanceof DevchainError);
      assert.match(error.shortMessage, /cannot run anvil at \/nonexistent\/anvil/);
      return true;
    });
  });

  test('bad arguments surface anvil’s own message', async () => {
    await assert.rejects(startAnvil({ args: ['--no-such-flag'] }), (error: unknown) => {
      assert.ok(error instanceof DevchainError);
      assert.match(error.shortMessage, /anvil exited during start-up/);
      assert.match(error.details ?? '', /no-such-flag/);
      return true;
    });
  });
});

describe('no orphaned anvil', () => {
  test('anvil dies when its parent exits normally', async () => {
    const parent = runParent('process.exit(0);');
    const { pid, cacheDir } = await parent.pid;
    assert.deepEqual(await parent.exit, { code: 0, signal: null });
    assert.ok(await waitUntilGone(pid), `anvil ${pid} outlived its parent`);
    assert.equal(existsSync(cacheDir), false, 'its cache directory was left behind');
  });

  test('anvil dies when its parent is terminated by SIGTERM, which still ends the parent', async () => {
    const parent = runParent('setInterval(() => {}, 1000);');
    const { pid, cacheDir } = await parent.pid;
    assert.ok(isAlive(pid));
    parent.child.kill('SIGTERM');
    assert.deepEqual(await parent.exit, { code: null, signal: 'SIGTERM' });
    assert.ok(await waitUntilGone(pid), `anvil ${pid} outlived its parent`);
    assert.equal(existsSync(cacheDir), false, 'its cache directory was left behind');
  });
});
