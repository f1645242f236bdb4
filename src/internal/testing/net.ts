import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (bound, then released): nothing listens on it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface LocalHttpServer {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** Stops listening and ends every open connection. */
  close(): Promise<void>;
}

/**
 * An HTTP server for tests on 127.0.0.1 (random free port) that hands `handle` each request with
 * its whole body. A client that gives up or aborts mid-request must not crash the test process.
 */
export async function startLocalHttpServer(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<LocalHttpServer> {
  const server = createHttpServer((req, res) => {
    res.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
