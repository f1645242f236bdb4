/**
 * The real Redis the rate-limit tests run against (127.0.0.1:6379, started by `.ci/run`), and
 * helpers to keep each test in its own key space.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

export const REDIS_URL = process.env.TOKENQUERY_TEST_REDIS ?? 'redis://127.0.0.1:6379';

const HOW_TO_START =
  "start it with `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no` " +
  '(`.ci/run` does this), or point TOKENQUERY_TEST_REDIS at another one';

/** Sends one inline command and returns the first reply line, or rejects after `timeoutMs`. */
export function redisCommand(url: string, command: string, timeoutMs = 2000): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port || 6379), hostname.replace(/^\[|\]$/g, ''));
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk) => {
      data += chunk.toString();
      const end = data.indexOf('\r\n');
      if (end !== -1) {
        clearTimeout(timer);
        socket.end();
        resolve(data.slice(0, end));
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(`${command}\r\n`);
  });
}

/**
 * Fails with one clear message when the test Redis is not there. Tests that need Redis call it
 * first: a missing Redis is a failure, never a skip.
 */
export async function requireRedis(): Promise<void> {
  let reply: string;
  try {
    reply = await redisCommand(REDIS_URL, 'PING');
  } catch (error) {
    throw new Error(`Redis is not reachable at ${REDIS_URL} (${(error as Error).message}); ${HOW_TO_START}`);
  }
  if (reply !== '+PONG')
    throw new Error(`Redis at ${REDIS_URL} answered PING with ${reply}; ${HOW_TO_START}`);
}

/** A key prefix no other test (or run) uses. */
export function randomPrefix(): string {
  return `tq-test:${randomBytes(8).toString('hex')}:`;
}
