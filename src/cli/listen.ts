import { UserError } from '../internal/errors.js';

/** Turns a failed `listen` into one line the user can act on. */
export function explainListenError(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: string } | null)?.code;
  if (code === 'EADDRINUSE') return new UserError(`port ${port} on ${host} is already in use; choose another with --port`);
  if (code === 'EACCES') return new UserError(`not allowed to listen on ${host}:${port}; choose a port above 1023 with --port`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new UserError(`cannot listen on ${host}: no such local address (--host)`);
  return error;
}
