/**
 * `COPY … FROM STDIN` through node-postgres, which has no COPY of its own: `client.query()` also
 * takes any object with a `submit(connection)` method (a "submittable", as pg-cursor and
 * pg-copy-streams are) and then hands it the protocol messages of its turn on the connection.
 *
 * This one writes the statement (a simple Query), the data as CopyData messages and CopyDone all
 * at once in `submit`, without waiting for the server's CopyInResponse: the server reads them in
 * order, so it copies while this thread goes on encoding the batch's next statement (the data is
 * whole in memory already: copy-binary.ts builds one buffer per table and batch, bounded by the
 * batch). When the COPY fails early, the server answers its error and ignores the CopyData and
 * CopyDone still on their way, as the protocol specifies ("accept but ignore"), so the connection
 * stays in step for the ROLLBACK that follows. It answers the row count of the server's `COPY n`
 * at ReadyForQuery, or the server's error.
 */
import type pg from 'pg';

/** The parts of pg's internal `Connection` a submittable is handed. */
interface Connection {
  stream: NodeJS.WritableStream & { cork?(): void; uncork?(): void };
  query(text: string): void;
  endCopyFrom(): void;
}

/** Bytes per CopyData message (the server takes up to 1 GB in one; any size works). */
const MESSAGE_BYTES = 1 << 20;

class CopyFromQuery {
  /** Set by pg's `query()` when given (unused: the promise below is the result). */
  callback?: (error: Error | null, rows?: number) => void;
  private rowCount = 0;
  private settled = false;

  constructor(
    private readonly text: string,
    private readonly data: Buffer,
    private readonly resolve: (rows: number) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  submit(connection: Connection): void {
    const { stream } = connection;
    stream.cork?.();
    try {
      connection.query(this.text);
      for (let at = 0; at < this.data.length; at += MESSAGE_BYTES) {
        const chunk = this.data.subarray(at, Math.min(at + MESSAGE_BYTES, this.data.length));
        const header = Buffer.allocUnsafe(5);
        header[0] = 0x64; // 'd': CopyData
        header.writeUInt32BE(chunk.length + 4, 1);
        stream.write(header);
        stream.write(chunk);
      }
      connection.endCopyFrom();
    } finally {
      stream.uncork?.();
    }
  }

  /** The data went with the statement (see above). */
  handleCopyInResponse(): void {}

  handleCommandComplete(message: { text?: string }): void {
    const match = /^COPY (\d+)/.exec(message.text ?? '');
    if (match) this.rowCount = Number(match[1]);
  }

  handleReadyForQuery(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(this.rowCount);
  }

  handleError(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(error);
  }

  // Not sent for COPY FROM; present because pg calls whatever message arrives on the active query.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}

/**
 * Runs `COPY … FROM STDIN` (`text`) on `client` with `data` (for `FORMAT binary`, from
 * copy-binary.ts); answers the rows the server copied. In a transaction, a failed COPY fails the
 * transaction like any failed statement.
 */
export function copyFrom(client: pg.ClientBase, text: string, data: Buffer): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const query = new CopyFromQuery(text, data, resolve, reject);
    (client as unknown as { query(submittable: CopyFromQuery): unknown }).query(query);
  });
}
