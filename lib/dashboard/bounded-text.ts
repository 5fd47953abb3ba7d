/** A value shown as text, cut to a size the browser can take, saying so when it was cut. */
export interface BoundedText {
  text: string;
  truncated: boolean;
  /** Length of the whole text in characters (before truncation). */
  length: number;
}

/** Marker appended to every truncated text, so a cut value never passes for the whole one. */
export const TRUNCATION_MARKER = '… [truncated]';

/** `text` cut to `max` characters (pure). */
export function boundText(text: string, max: number): BoundedText {
  if (text.length <= max) return { text, truncated: false, length: text.length };
  return { text: text.slice(0, max) + TRUNCATION_MARKER, truncated: true, length: text.length };
}

/**
 * A JSON value as indented text, bounded. Large values are stringified once on the server so the
 * response stays bounded whatever the row holds (args may be megabytes).
 */
export function boundJson(value: unknown, max: number, indent = 2): BoundedText {
  let text: string;
  try {
    text = JSON.stringify(value, null, indent) ?? 'null';
  } catch {
    text = String(value);
  }
  return boundText(text, max);
}

/** One line for a table cell: compact JSON, cut short. */
export function previewJson(value: unknown, max: number): BoundedText {
  return boundJson(value, max, 0);
}

/**
 * The same from a text's first characters as SQL read them (`substr`, at least `max + 1` of them
 * when there are more) and its full length there: the whole value never leaves the database.
 */
export function boundHead(head: string, length: number, max: number): BoundedText {
  const chars = Array.from(head); // SQL counts code points: never cut a surrogate pair in two
  if (chars.length <= max) return { text: head, truncated: false, length: head.length };
  return { text: chars.slice(0, max).join('') + TRUNCATION_MARKER, truncated: true, length };
}
