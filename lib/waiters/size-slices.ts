import { takeBatch } from '../finalize/take-batch';

/**
 * Cuts sized ids into slices, in order, each of at most `maxIds` ids and `maxBytes` bytes; a
 * slice always takes its first id, so an id larger than `maxBytes` is a slice of its own.
 */
export function sliceBySize(items: ReadonlyArray<{ id: number; bytes: number }>, maxBytes: number, maxIds: number): number[][] {
  const slices: number[][] = [];
  for (const left = [...items]; left.length; ) slices.push(takeBatch(left, maxIds, maxBytes, (item) => item.bytes).map((item) => item.id));
  return slices;
}
