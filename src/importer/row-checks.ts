/**
 * The import's checks of an export against what it is run with: without a node, the columns the
 * node would otherwise supply must be there; every row must lie within --from-block/--to-block and
 * at or below the node's head.
 */
import { type Column, ImportInputError, type ImportRow } from './columns.js';
import { NodeMismatchError } from './node-reader.js';

/** Refuses an export file without a node that lacks block times or transaction positions. */
export function checkColumns(columns: ReadonlySet<Column>, name: string, rpcHint: string): void {
  for (const [column, what] of [
    ['block_timestamp', 'block times'],
    ['transaction_index', 'transaction positions'],
  ] as const) {
    if (!columns.has(column)) {
      throw new ImportInputError(
        `${name}: the export has no ${column} column: ${what} come from a node; ${rpcHint}`,
      );
    }
  }
}

/** A check of one row, throwing an `ImportInputError` or a `NodeMismatchError` naming its line. */
export function createRowCheck(options: {
  /** Whether a node supplies what rows lack. */
  node: boolean;
  nodeHead: number | null;
  fromBlock: number | undefined;
  toBlock: number | undefined;
  where: (file: number, line: number) => string;
  rpcHint: string;
}): (row: ImportRow) => void {
  const { node, nodeHead, fromBlock, toBlock, where, rpcHint } = options;
  return (row) => {
    const b = row.blockNumber;
    if (!node && (row.time === null || row.txIndex === null)) {
      const [column, what] =
        row.time === null
          ? ['block_timestamp', 'block times']
          : ['transaction_index', 'transaction positions'];
      throw new ImportInputError(
        `${where(row.file, row.line)}: column ${column} is missing: ${what} come from a node; ${rpcHint}`,
      );
    }
    if (fromBlock !== undefined && b < fromBlock) {
      throw new ImportInputError(
        `${where(row.file, row.line)}: block ${b} is below --from-block ${fromBlock}`,
      );
    }
    if (toBlock !== undefined && b > toBlock) {
      throw new ImportInputError(`${where(row.file, row.line)}: block ${b} is above --to-block ${toBlock}`);
    }
    if (nodeHead !== null && b > nodeHead) {
      throw new NodeMismatchError(
        `${where(row.file, row.line)}: block ${b} is above the node's head ${nodeHead}: is the node synced, and on the same chain?`,
      );
    }
  };
}
