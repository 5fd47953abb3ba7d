/**
 * Whether every database can store and compare this text (pure). PostgreSQL refuses NUL in text
 * and `\u0000` in JSON (the statement fails), and an unpaired surrogate has no UTF-8 form: drivers
 * turn it into U+FFFD, each in its own way, so it would match other text or nothing. Filter and
 * pause names holding either are refused up front, with the same typed error on every dialect.
 */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** NUL, or a surrogate that is not half of a pair (with the `u` flag a pair is one code point). */
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/** What the typed errors say is expected of such text. */
export const STORABLE_TEXT = 'without NUL characters or unpaired surrogates';
