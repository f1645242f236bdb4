/**
 * `serve`'s slow-client options through the real binary: they reach the server, and bad values
 * are one line.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  apiUrl,
  assertOneLineError,
  removeTempDirs,
  runCli,
  spawnCli,
  tempDir,
} from './testing/cli-process.js';

after(removeTempDirs);

test('serve applies --headers-timeout and --max-connections', async () => {
  const db = join(tempDir(), 'http.sqlite');
  // `serve` refuses a store that does not exist: `keys list` creates it.
  assert.equal((await runCli(['keys', 'list', '--db', db])).code, 0);
  const server = spawnCli(
    [
      'serve',
      '--port',
      '0',
      '--db',
      db,
      '--headers-timeout',
      '300',
      '--request-timeout',
      '400',
      '--max-connections',
      '1',
    ],
    { env: { TOKENQUERY_LOG_LEVEL: 'info' } },
  );
  try {
    const { hostname, port } = new URL(await apiUrl(server, 'tokenquery serving'));
    // One connection that never finishes its headers: answered 408 and closed at the timeout.
    const started = Date.now();
    const first = connect(Number(port), hostname);
    first.write('GET /healthz HTTP/1.1\r\n');
    let text = '';
    first.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    // Meanwhile a second connection is over the cap: closed unanswered.
    await new Promise((resolve) => first.once('connect', resolve));
    const second = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), hostname);
      let got = '';
      socket.on('data', (chunk: Buffer) => {
        got += chunk.toString('latin1');
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(got));
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    assert.equal(second, '');
    await new Promise((resolve) => first.once('close', resolve));
    assert.ok(Date.now() - started < 3000, `closed after ${Date.now() - started} ms`);
    assert.match(text, /^HTTP\/1\.1 408 /);
  } finally {
    await server.stop();
  }
});

test('bad slow-client values are one clear line', async () => {
  assertOneLineError(
    await runCli(['serve', '--idle-timeout', 'soon']),
    /--idle-timeout must be a whole number, got "soon"/,
  );
  assertOneLineError(
    await runCli(['serve', '--headers-timeout', '5000', '--request-timeout', '1000']),
    /--headers-timeout \(5000 ms\) must not exceed --request-timeout \(1000 ms\)/,
  );
});
