/**
 * Cuts sized ids into slices, in order, each of at most `maxIds` ids and `maxBytes` bytes; a
 * slice always takes its first id, so an id larger than `maxBytes` is a slice of its own.
 */
export function sliceBySize(items: ReadonlyArray<{ id: number; bytes: number }>, maxBytes: number, maxIds: number): number[][] {
  const slices: number[][] = [];
  let slice: number[] = [];
  let bytes = 0;
  for (const item of items) {
    if (slice.length && (slice.length === maxIds || bytes + item.bytes > maxBytes)) {
      slices.push(slice);
      slice = [];
      bytes = 0;
    }
    slice.push(item.id);
    bytes += item.bytes;
  }
  if (slice.length) slices.push(slice);
  return slices;
}
