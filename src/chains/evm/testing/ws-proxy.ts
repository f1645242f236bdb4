/**
 * A TCP relay in front of a real node's websocket, for tests of what happens when the
 * connection breaks: it can cut every open connection, refuse new ones (accept and close at
 * once, as a restarting proxy does), or go mute (keep the connection but drop everything the node
 * sends, as a subscription that died without its socket does).
 */
import { connect, createServer, type Socket } from 'node:net';

export type WsProxyMode = 'pass' | 'refuse' | 'mute';

export interface WsProxy {
  /** `ws://127.0.0.1:<port>` of the relay. */
  readonly url: string;
  /** Connections accepted and relayed so far (refused ones not counted). */
  readonly relayed: number;
  setMode(mode: WsProxyMode): void;
  /** Destroys every open connection, both sides. */
  cut(): void;
  close(): Promise<void>;
}

/** Relays 127.0.0.1:<free port> to `targetPort` on 127.0.0.1. */
export async function startWsProxy(targetPort: number): Promise<WsProxy> {
  let mode: WsProxyMode = 'pass';
  let relayed = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    if (mode === 'refuse') {
      client.destroy();
      return;
    }
    relayed++;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (mode !== 'mute') client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const cut = (): void => {
    for (const socket of open) socket.destroy();
    open.clear();
  };
  return {
    url: `ws://127.0.0.1:${port}`,
    get relayed() {
      return relayed;
    },
    setMode(next) {
      mode = next;
    },
    cut,
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
