/** Which tokens need their supply read from the node, the same rule for both backends. */

/**
 * Tokens whose supply must be read again, at most `limit`: those marked dirty (oldest mark first,
 * as `readDirty` returns them), then, while room is left, those read before the stale bound
 * (`readStale`). Each reader takes how many rows it may return; `decode` gives a row's address.
 */
export async function dirtyThenStale<Row>(
  limit: number,
  readDirty: (limit: number) => Row[] | Promise<Row[]>,
  readStale: (limit: number) => Row[] | Promise<Row[]>,
  decode: (row: Row) => string,
): Promise<string[]> {
  const dirty = await readDirty(limit);
  const stale = dirty.length < limit ? await readStale(limit - dirty.length) : [];
  return [...dirty, ...stale].map(decode);
}
