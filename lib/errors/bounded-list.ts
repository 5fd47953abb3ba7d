/**
 * `items` shown by `show` and joined by `separator`, at most `max` of them: the rest are counted,
 * not listed. A message names what went wrong; a 100,000-node cycle or 100,000 missing ids made
 * one of 3.3 MB (1.2 MB), which every log line carrying the error repeated. The error's fields
 * keep them all. A path (`keepLast`) keeps its last item, so a cycle still ends where it began.
 */
export function boundedList<T>(items: readonly T[], separator: string, max: number, show: (item: T) => string = String, keepLast = false): string {
  if (items.length <= max) return items.map(show).join(separator);
  const head = items.slice(0, keepLast ? max - 1 : max).map(show);
  const rest = `… ${(items.length - max).toLocaleString('en')} more`;
  return [...head, rest, ...(keepLast ? [show(items[items.length - 1])] : [])].join(separator);
}
