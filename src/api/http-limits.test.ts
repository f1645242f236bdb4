/**
 * The HTTP layer under hostile or broken clients, over raw sockets: answers the parser refuses
 * (414, 431, 400) never carry a body for HEAD, and slow or oversized requests cannot hold a
 * connection for ever (request, headers and idle timeouts, a connection cap, bounded discarding).
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiFixture, startApiFixture } from './testing/fixture.js';

let fx: ApiFixture;
before(async () => {
  fx = await startApiFixture();
});
after(async () => {
  await fx.close();
});

const HEADER_END = '\r\n\r\n';

interface Exchange {
  /** Everything the server sent, as text. */
  text: string;
  /** Whether the server closed the connection (rather than the wait running out). */
  closed: boolean;
  /** Milliseconds from connecting to the close (or to giving up). */
  ms: number;
}

function open(url: string): Socket {
  const { hostname, port } = new URL(url);
  return connect(Number(port), hostname);
}

/**
 * Writes `parts` to a fresh connection, `gapMs` apart, and collects what comes back until the
 * server closes, or until nothing more arrived for `quietMs` after the first bytes, or `maxMs`.
 */
function exchange(
  url: string,
  parts: string[],
  { gapMs = 20, quietMs = 300, maxMs = 5000 }: { gapMs?: number; quietMs?: number; maxMs?: number } = {},
): Promise<Exchange> {
  const started = Date.now();
  const socket = open(url);
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    let quiet: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(quiet);
      clearTimeout(limit);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, ms: Date.now() - started });
    };
    const limit = setTimeout(() => finish(false), maxMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      clearTimeout(quiet);
      quiet = setTimeout(() => finish(false), quietMs);
    });
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    void (async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        await sleep(gapMs);
      }
    })();
  });
}

/** The status line and what follows the first response's headers. */
function firstResponse(text: string): { status: number; head: string; rest: string } {
  const end = text.indexOf(HEADER_END);
  assert.ok(end !== -1, `a complete response head, got ${JSON.stringify(text.slice(0, 200))}`);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]),
    head: text.slice(0, end),
    rest: text.slice(end + HEADER_END.length),
  };
}

describe('HEAD answers carry no body, also when the HTTP layer refuses the request', () => {
  const longUrl = `/vipapi/eth/tokens/1/1?pad=${'p'.repeat(20_000)}`;
  const longHeader = `X-Pad: ${'h'.repeat(20_000)}`;
  /**
   * `unknown`: the method is not in the read that fails, so the server cannot tell a HEAD from a
   * GET and answers neither with a body (but always with a length that matches).
   */
  const cases: { name: string; parts: (method: string) => string[]; status: number; unknown?: true }[] = [
    {
      name: 'a URL beyond the header limit',
      parts: (method) => [`${method} ${longUrl} HTTP/1.1\r\nHost: x\r\n\r\n`],
      status: 431,
    },
    {
      name: 'a URL beyond the header limit, sent in pieces',
      parts: (method) => [
        `${method} /vipapi/eth/tokens/1/1?pad=`,
        'p'.repeat(10_000),
        'p'.repeat(10_000),
        ` HTTP/1.1\r\nHost: x\r\n\r\n`,
      ],
      status: 431,
      unknown: true,
    },
    {
      name: 'a header beyond the header limit',
      parts: (method) => [`${method} /healthz HTTP/1.1\r\nHost: x\r\n${longHeader}\r\n\r\n`],
      status: 431,
    },
    {
      name: 'a path segment beyond 8 KiB',
      parts: (method) => [`${method} /vipapi/eth/token/0x${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
      status: 414,
    },
    {
      name: 'a malformed header',
      parts: (method) => [`${method} /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`],
      status: 400,
    },
    {
      name: 'an overlong request after a good one on the same connection',
      parts: (method) => [
        `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n${method} ${longUrl} HTTP/1.1\r\nHost: x\r\n\r\n`,
      ],
      status: 431,
    },
  ];

  for (const { name, parts, status, unknown } of cases) {
    test(`${name}: HEAD gets ${status} with no body; GET gets the envelope`, async () => {
      const pipelined = name.includes('after a good one');
      const strip = (text: string) => {
        if (!pipelined) return text;
        // The first answer is /healthz's, with its body: skip past it.
        const first = firstResponse(text);
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(first.head)?.[1]);
        return first.rest.slice(length);
      };

      const head = firstResponse(strip((await exchange(fx.url, parts('HEAD'))).text));
      assert.equal(head.status, status, head.head);
      assert.equal(head.rest, '', 'no bytes after the head of a HEAD answer');

      const get = firstResponse(strip((await exchange(fx.url, parts('GET'))).text));
      assert.equal(get.status, status, get.head);
      assert.equal(Number(/\r\ncontent-length: (\d+)/i.exec(get.head)?.[1]), Buffer.byteLength(get.rest));
      if (unknown) assert.equal(get.rest, '');
      else assert.match(get.rest, /^\{"code":10001,"msg":"invalid parameter: [^"]+","data":null\}$/);
    });
  }
});

/**
 * Writes `head`, then `drip` every `everyMs` for as long as the connection stays open (at most
 * `maxMs`), and collects what the server sends.
 */
function trickle(url: string, head: string, drip: string, everyMs: number, maxMs = 5000): Promise<Exchange> {
  const started = Date.now();
  const socket = open(url);
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    const finish = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(limit);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, ms: Date.now() - started });
    };
    const limit = setTimeout(() => finish(false), maxMs);
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(drip);
    }, everyMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    socket.write(head);
  });
}

describe('slow and hostile clients', () => {
  const SMALL = { requestTimeoutMs: 600, headersTimeoutMs: 300, idleTimeoutMs: 400 };
  let small: ApiFixture;
  before(async () => {
    small = await startApiFixture({ httpLimits: SMALL });
  });
  after(async () => {
    await small.close();
  });

  test('a refused POST announcing a large body gets its 405 and the connection closes', async () => {
    // The defaults' server: the close does not wait for any timeout.
    const answer = await trickle(
      fx.url,
      'POST /vipapi/eth/tokens/1/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n',
      'x',
      50,
    );
    assert.ok(answer.closed, 'the server closed the connection');
    assert.ok(answer.ms < 2000, `closed after ${answer.ms} ms`);
    const { status, head } = firstResponse(answer.text);
    assert.equal(status, 405);
    assert.match(head, /\r\nconnection: close/i);
  });

  test('a GET with a never-ending chunked body gets its answer and the connection closes', async () => {
    const answer = await trickle(
      fx.url,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
      '1\r\nx\r\n',
      50,
    );
    assert.ok(answer.closed, 'the server closed the connection');
    assert.ok(answer.ms < 2000, `closed after ${answer.ms} ms`);
    const { status, head } = firstResponse(answer.text);
    assert.equal(status, 200);
    assert.match(head, /\r\nconnection: close/i);
  });

  test('a small body trickled after its answer is cut off at the request timeout', async () => {
    const answer = await trickle(
      small.url,
      'POST /vipapi/eth/tokens/1/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n',
      'x',
      50,
    );
    assert.ok(answer.closed, 'the server closed the connection');
    assert.ok(answer.ms >= 500 && answer.ms < 2500, `closed after ${answer.ms} ms`);
    // The 405, and nothing after it: the timeout is not answered a second time.
    const { status, head, rest } = firstResponse(answer.text);
    assert.equal(status, 405);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
    assert.equal(Buffer.byteLength(rest), length);
  });

  test('headers trickled a byte at a time are cut off at the headers timeout with 408', async () => {
    const answer = await trickle(small.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 'X', 50);
    assert.ok(answer.closed, 'the server closed the connection');
    assert.ok(answer.ms >= 250 && answer.ms < 2000, `closed after ${answer.ms} ms`);
    assert.equal(firstResponse(answer.text).status, 408);
  });

  test('a connection that sends nothing is closed at the headers timeout', async () => {
    const answer = await exchange(small.url, []);
    assert.ok(answer.closed, 'the server closed the connection');
    assert.ok(answer.ms < 2000, `closed after ${answer.ms} ms`);
  });

  test('an idle keep-alive connection is closed at the idle timeout', async () => {
    const answer = await exchange(small.url, ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], { quietMs: 5000 });
    assert.ok(answer.closed, 'the server closed the connection');
    assert.ok(answer.ms >= 350 && answer.ms < 2500, `closed after ${answer.ms} ms`);
    assert.equal(firstResponse(answer.text).status, 200);
  });

  test('connections beyond the cap are closed at once; freed places are taken again', async () => {
    const capped = await startApiFixture({ httpLimits: { maxConnections: 2 } });
    const sockets: Socket[] = [];
    try {
      /** A request on a new connection, left open: the status, or null when the server closed it unanswered. */
      const request = (): Promise<number | null> =>
        new Promise((resolve) => {
          const socket = open(capped.url);
          sockets.push(socket);
          let text = '';
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString('latin1');
            if (text.includes(HEADER_END)) resolve(Number(text.slice(9, 12)));
          });
          socket.on('error', () => {});
          socket.on('close', () => resolve(null));
          socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        });
      assert.equal(await request(), 200);
      assert.equal(await request(), 200);
      assert.equal(await request(), null);
      sockets[0]!.destroy();
      await sleep(100);
      assert.equal(await request(), 200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await capped.close();
    }
  });

  test('with the defaults, an ordinary slow client is unaffected', async () => {
    // Headers in pieces over a second, a small body, then a second request on the same connection
    // after a pause: all answered, and the connection stays open.
    const request = 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello';
    const pieces = request.match(/[\s\S]{1,12}/g)!;
    const answer = await exchange(fx.url, [...pieces, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], {
      gapMs: 1500 / pieces.length,
      quietMs: 1000,
    });
    assert.equal(answer.closed, false, 'the connection stays open');
    const answers = answer.text.match(/HTTP\/1\.1 \d{3} /g) ?? [];
    assert.deepEqual(answers, ['HTTP/1.1 200 ', 'HTTP/1.1 200 ']);
    assert.doesNotMatch(answer.text, /connection: close/i);
  });
});
