/**
 * Splits `items` into consecutive slices whose lengths are powers of two, largest first
 * (700 items: 512, 128, 32, 16, 8, 4). A multi-row statement per slice has one of a few texts
 * whatever the batch sizes: SQLite compiles a statement per distinct text, at 40-90 bytes of
 * native memory per character (1.6 MB for a 1,000-row insert), which V8 does not see and frees
 * only when it happens to collect the statement.
 */
export function binarySlices<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  let at = 0;
  while (at < items.length) {
    const size = 2 ** Math.floor(Math.log2(items.length - at));
    out.push(items.slice(at, at + size));
    at += size;
  }
  return out;
}
