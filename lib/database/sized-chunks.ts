/**
 * `items` cut into consecutive chunks of at most `maxItems` items and about `maxSize` in all
 * (pure): an item that would take a chunk past `maxSize` starts the next one, and an item larger
 * than `maxSize` gets a chunk of its own. For multi-row statements bounded by parameters and bytes.
 */
export function sizedChunks<T>(items: readonly T[], maxItems: number, maxSize: number, sizeOf: (item: T) => number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const item of items) {
    const itemSize = sizeOf(item);
    if (current.length && (current.length >= maxItems || size + itemSize > maxSize)) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += itemSize;
  }
  if (current.length) out.push(current);
  return out;
}
