/** A value shown as text, cut to a size the browser can take, saying so when it was cut. */
export interface BoundedText {
  text: string;
  truncated: boolean;
  /**
   * Length of the whole text (before truncation) in characters, i.e. Unicode code points: an
   * emoji counts one, as SQL's `char_length` counts it (JavaScript's `String.length` counts two).
   */
  length: number;
}

/** Marker appended to every truncated text, so a cut value never passes for the whole one. */
export const TRUNCATION_MARKER = '… [truncated]';

/**
 * `text` cut to `max` characters (code points, so a cut never splits a surrogate pair; pure).
 * The count of a long text is one pass over its UTF-16 units, not an array of its characters.
 */
export function boundText(text: string, max: number): BoundedText {
  const end = codePointOffset(text, max);
  if (end >= text.length) return { text, truncated: false, length: codePoints(text) };
  return { text: text.slice(0, end) + TRUNCATION_MARKER, truncated: true, length: codePoints(text) };
}

/** Code points in `text`: its UTF-16 units less one per surrogate pair (a lone surrogate counts one). */
export function codePoints(text: string): number {
  let pairs = 0;
  for (let i = 0; i + 1 < text.length; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** The UTF-16 offset after the first `n` code points of `text` (its length if it has fewer). */
function codePointOffset(text: string, n: number): number {
  let i = 0;
  for (let k = 0; k < n && i < text.length; k++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    i += pair ? 2 : 1;
  }
  return i;
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
 * when there are more) and its full length there (`char_length`, code points, as `boundText`
 * counts): the whole value never leaves the database.
 */
export function boundHead(head: string, length: number, max: number): BoundedText {
  const end = codePointOffset(head, max);
  if (end >= head.length) return { text: head, truncated: false, length: codePoints(head) };
  return { text: head.slice(0, end) + TRUNCATION_MARKER, truncated: true, length };
}
