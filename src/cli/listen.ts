import { createServer } from 'node:net';
import { UserError } from '../internal/errors.js';

/**
 * Turns a failed `listen` into one line the user can act on. `option` names the flag that sets
 * the address when it is not --host and --port (`--operator-listen`).
 */
export function explainListenError(error: unknown, host: string, port: number, option?: string): unknown {
  const code = (error as { code?: string } | null)?.code;
  if (code === 'EADDRINUSE')
    return new UserError(
      `port ${port} on ${host} is already in use; choose another with ${option ?? '--port'}`,
    );
  if (code === 'EACCES')
    return new UserError(
      `not allowed to listen on ${host}:${port}; choose a port above 1023 with ${option ?? '--port'}`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new UserError(`cannot listen on ${host}: no such local address (${option ?? '--host'})`);
  return error;
}

/**
 * Binds and releases `host:port` before anything else starts, so that a port in use is one clear
 * line instead of a node check, a migrated store and a started indexer followed by the error.
 * The real `listen` still reports a port taken in between the two.
 */
export async function assertCanListen(host: string, port: number, option?: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(explainListenError(error, host, port, option)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
