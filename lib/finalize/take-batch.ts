/**
 * Removes and returns the next batch from the front of `queue`: at most `maxItems` items whose
 * sizes add up to at most `maxBytes`, and always at least one item (an item larger than the
 * budget goes alone). Bounding the bytes keeps one transaction's statement within what the
 * server accepts (MySQL's `max_allowed_packet`) however large the individual results are.
 */
export function takeBatch<T>(queue: T[], maxItems: number, maxBytes: number, sizeOf: (item: T) => number): T[] {
  let n = 0;
  let bytes = 0;
  while (n < queue.length && n < maxItems) {
    const size = sizeOf(queue[n]);
    if (n > 0 && bytes + size > maxBytes) break;
    bytes += size;
    n++;
  }
  return queue.splice(0, n);
}
