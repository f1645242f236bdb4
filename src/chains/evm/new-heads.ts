/**
 * New-head notifications from a node's websocket: `eth_subscribe("newHeads")`. The indexer polls
 * the head once caught up; with a subscription it wakes the moment a block is mined instead of
 * at the next poll, and keeps polling as a fallback. A subscription fails in more ways than a
 * poll (a dropped socket, a proxy that idles it out, a node restart that forgets it while the
 * socket lives on), so it is never trusted to be complete: it only cuts the wait short, and it
 * reconnects with backoff whenever it looks dead.
 */
import WebSocket from 'ws';
import { backoffDelay } from '../../internal/async.js';
import { errorMessage, redactUrls } from '../../internal/errors.js';
import type { Logger } from '../../internal/logger.js';

/** What the indexer needs to hear of new blocks between polls (testable without a socket). */
export interface HeadNotifier {
  /**
   * Resolves once the node has announced a head above `known` that no earlier wait returned for
   * (at once when it already has), or after `timeoutMs`, or when `signal` aborts: the indexer's
   * sleep between polls, cut short by a new block. Never rejects.
   */
  waitForHead(known: number, timeoutMs: number, signal: AbortSignal): Promise<void>;
  /** The head the indexer's poll found: lets the notifier notice a subscription that went silent. */
  polled(head: number): void;
  /** True while the subscription is confirmed by the node. */
  readonly subscribed: boolean;
  /** Closes the connection for good; pending waits resolve. Idempotent. */
  close(): void;
}

/** Options of {@link createNewHeadsNotifier}. */
export interface NewHeadsOptions {
  /** `ws://` or `wss://` endpoint. May hold credentials (in the path for many providers): never logged. */
  url: string;
  logger: Logger;
  /** Aborting it closes the notifier. */
  signal: AbortSignal;
  /** Handshake and `eth_subscribe` answer, each. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** A ping every this often; no pong by the next one ends the connection. Default 15 000 ms. */
  pingIntervalMs?: number;
  /**
   * When the indexer's polls find a block the subscription has not announced, and it stays
   * silent this long, the subscription is taken as dead and made again. Default 30 000 ms.
   */
  staleAfterMs?: number;
  /** First reconnect delay; grows (with jitter) up to `retryMaxMs`. Default 500 ms. */
  retryBaseMs?: number;
  /** Default 30 000 ms. */
  retryMaxMs?: number;
}

const SUBSCRIBE_ID = 1;

/**
 * A {@link HeadNotifier} over a websocket subscription, connecting at once and reconnecting
 * until `signal` aborts. A failure is logged (a warning when the subscription is lost, then
 * quietly while it stays down) and never thrown: the indexer's polling carries on regardless.
 */
export function createNewHeadsNotifier(options: NewHeadsOptions): HeadNotifier {
  const { url, signal } = options;
  const logger = options.logger.child({ component: 'new-heads' });
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const pingIntervalMs = options.pingIntervalMs ?? 15_000;
  const staleAfterMs = options.staleAfterMs ?? 30_000;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const retryMaxMs = options.retryMaxMs ?? 30_000;

  /** Newest head announced, and the newest a wait has already returned for. */
  let announced = -1;
  let consumed = -1;
  /** Newest head the indexer polled, and when a polled head the subscription had not announced was first seen. */
  let lastPolled = -1;
  let polledAtSubscribe = -1;
  let unannouncedSince: number | null = null;
  let socket: WebSocket | null = null;
  let subscribed = false;
  let closed = false;
  /** Failed attempts since the subscription was last confirmed. */
  let failures = 0;
  /** Whether the current outage has been reported as a warning. */
  let outageReported = false;
  let retryTimer: NodeJS.Timeout | null = null;
  const waiters = new Set<{ known: number; done: () => void }>();

  /** Wakes the waits that a new head (or, with `all`, a fresh subscription) concerns. */
  function wake(all: boolean): void {
    for (const waiter of waiters) {
      if (all || announced > Math.max(waiter.known, consumed)) waiter.done();
    }
  }

  function connect(): void {
    if (closed) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, {
        handshakeTimeout: connectTimeoutMs,
        perMessageDeflate: false,
        // A header is well under 1 KiB; anything huge is not what was asked for.
        maxPayload: 1 << 20,
      });
    } catch (error) {
      // Only a URL `ws` cannot use at all throws here: retrying would not help.
      logger.warn(
        { err: redactEndpoint(errorMessage(error), url) },
        'new-head subscription impossible; polling only',
      );
      return;
    }
    socket = ws;
    let reason = 'connection closed';
    let subscribeTimer: NodeJS.Timeout | null = null;
    let pingTimer: NodeJS.Timeout | null = null;
    let awaitingPong = false;
    const end = (why: string): void => {
      reason = why;
      ws.terminate();
    };

    ws.on('open', () => {
      ws.send(
        JSON.stringify({ jsonrpc: '2.0', id: SUBSCRIBE_ID, method: 'eth_subscribe', params: ['newHeads'] }),
      );
      subscribeTimer = setTimeout(() => end('no answer to eth_subscribe'), connectTimeoutMs);
      pingTimer = setInterval(() => {
        if (awaitingPong) return end(`no pong within ${pingIntervalMs} ms`);
        awaitingPong = true;
        ws.ping();
      }, pingIntervalMs);
    });
    ws.on('pong', () => {
      awaitingPong = false;
    });
    ws.on('message', (data, isBinary) => {
      const message = parseMessage(isBinary ? null : String(data));
      if (message === null) {
        logger.debug('ignored a websocket message that is not a JSON-RPC answer or notification');
        return;
      }
      if (message.kind === 'subscribed') {
        if (subscribeTimer !== null) clearTimeout(subscribeTimer);
        subscribeTimer = null;
        onSubscribed();
      } else if (message.kind === 'refused') {
        end(`the node refused eth_subscribe: ${message.message}`);
      } else if (message.kind === 'head') {
        onHead(message.number);
      }
    });
    ws.on('error', (error) => {
      // Always followed by 'close'.
      reason = errorMessage(error);
    });
    ws.on('close', () => {
      if (subscribeTimer !== null) clearTimeout(subscribeTimer);
      if (pingTimer !== null) clearInterval(pingTimer);
      if (socket === ws) socket = null;
      const wasSubscribed = subscribed;
      subscribed = false;
      if (closed) return;
      failures++;
      const delay = Math.min(retryMaxMs, retryBaseMs + backoffDelay(failures - 1, retryBaseMs, retryMaxMs));
      // The message of `ws` may quote the URL (a bad handshake answer does): it is not logged.
      const err = redactEndpoint(reason, url);
      if (wasSubscribed || !outageReported) {
        outageReported = true;
        logger.warn(
          { err, retryInMs: Math.round(delay) },
          wasSubscribed
            ? 'new-head subscription lost; polling for new blocks until it is back'
            : 'new-head subscription failed; polling for new blocks until it works',
        );
      } else {
        logger.debug({ err, retryInMs: Math.round(delay) }, 'new-head subscription still down');
      }
      retryTimer = setTimeout(() => {
        retryTimer = null;
        connect();
      }, delay);
    });
  }

  function onSubscribed(): void {
    subscribed = true;
    failures = 0;
    polledAtSubscribe = Math.max(lastPolled, announced);
    unannouncedSince = null;
    logger.info(outageReported ? 'new-head subscription is back' : 'new-head subscription active');
    outageReported = false;
    // Blocks mined while the subscription was down were never announced: look now rather than
    // at the next poll.
    wake(true);
  }

  function onHead(number: number): void {
    unannouncedSince = null;
    if (number <= announced) return;
    announced = number;
    wake(false);
  }

  function polled(head: number): void {
    lastPolled = Math.max(lastPolled, head);
    if (!subscribed || head <= Math.max(announced, polledAtSubscribe)) return;
    unannouncedSince ??= Date.now();
    if (Date.now() - unannouncedSince < staleAfterMs) return;
    // The socket answers pings but the node no longer sends this subscription's heads (a
    // restarted node behind a proxy forgets it): subscribe afresh.
    unannouncedSince = null;
    logger.warn(
      { polledHead: head, announcedHead: announced },
      'new-head subscription silent while polling finds new blocks; reconnecting',
    );
    socket?.terminate();
  }

  function close(): void {
    if (closed) return;
    closed = true;
    subscribed = false;
    if (retryTimer !== null) clearTimeout(retryTimer);
    socket?.terminate();
    socket = null;
    for (const waiter of waiters) waiter.done();
  }

  if (signal.aborted) closed = true;
  else {
    signal.addEventListener('abort', close, { once: true });
    connect();
  }

  return {
    waitForHead(known, timeoutMs, waitSignal) {
      if (announced > Math.max(known, consumed)) {
        consumed = announced;
        return Promise.resolve();
      }
      if (closed || waitSignal.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const waiter = { known, done };
        const timer = setTimeout(done, timeoutMs);
        waitSignal.addEventListener('abort', done, { once: true });
        waiters.add(waiter);
        function done(): void {
          clearTimeout(timer);
          waitSignal.removeEventListener('abort', done);
          waiters.delete(waiter);
          consumed = Math.max(consumed, announced);
          resolve();
        }
      });
    },
    polled,
    get subscribed() {
      return subscribed;
    },
    close,
  };
}

type Message =
  | { kind: 'subscribed' }
  | { kind: 'refused'; message: string }
  | { kind: 'head'; number: number }
  | { kind: 'other' };

/**
 * The answer to `eth_subscribe` or a `newHeads` notification, validated; null for anything that
 * is not JSON-RPC. Only the block number is used: the indexer reads the block itself, by the
 * same path as a polled one, so a notification can never add data that a poll would not.
 */
function parseMessage(text: string | null): Message | null {
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof json !== 'object' || json === null) return null;
  const m = json as { id?: unknown; result?: unknown; error?: unknown; method?: unknown; params?: unknown };
  if (m.id === SUBSCRIBE_ID) {
    if (typeof m.result === 'string') return { kind: 'subscribed' };
    const error = m.error as { message?: unknown } | undefined;
    return { kind: 'refused', message: String(error?.message ?? 'no result').slice(0, 200) };
  }
  if (m.method !== 'eth_subscription') return { kind: 'other' };
  const number = (m.params as { result?: { number?: unknown } } | undefined)?.result?.number;
  if (typeof number !== 'string' || !/^0x[0-9a-fA-F]{1,13}$/.test(number)) return null;
  return { kind: 'head', number: Number.parseInt(number, 16) };
}

/** `text` with every occurrence of the endpoint (and its origin) removed. */
function redactEndpoint(text: string, url: string): string {
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch {
    // a URL config validation let through is always parseable; keep the whole text out anyway
  }
  return redactUrls(text.split(url).join('<ws endpoint>').split(origin).join('<ws endpoint>'));
}
