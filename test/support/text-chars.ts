/**
 * Characters of text in a value: a statement (its bound values, lists included), its parameters
 * or the rows it returned. What the large-args specs weigh a transaction's statements by.
 */
export function textChars(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + textChars(v), 0);
  if (value && typeof value === 'object') {
    const o = value as { values?: unknown[]; items?: unknown[] };
    if (o.values || o.items) return textChars(o.values ?? o.items);
    return Object.values(value).reduce((n: number, v) => n + textChars(v), 0);
  }
  return 0;
}
