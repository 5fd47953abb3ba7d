/** The longest `last_error` written; longer texts (deep stacks, huge messages) are cut. */
export const MAX_ERROR_LENGTH = 8_000;

// NUL, or a surrogate that is not half of a pair (with the `u` flag a pair is one code point).
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/gu;

/**
 * An attempt's error text as `last_error` stores it, the same on every dialect: at most
 * MAX_ERROR_LENGTH characters, never cut between the halves of a surrogate pair, NUL and unpaired
 * surrogates each replaced by U+FFFD. PostgreSQL's text refuses NUL: a whole finalize batch was
 * refused and split down to each such job (27x the transactions of a storm of them) and the
 * message was lost; drivers turned a lone surrogate into one U+FFFD (three on SQLite).
 */
export function storableErrorText(text: string): string {
  return storableText(text, MAX_ERROR_LENGTH);
}

/** `text` cut to at most `max` characters (never between the halves of a pair), NUL and unpaired surrogates replaced, as storableErrorText. */
export function storableText(text: string, max: number): string {
  let out = text;
  if (out.length > max) {
    const end = out.charCodeAt(max - 1);
    out = out.slice(0, end >= 0xd800 && end <= 0xdbff ? max - 1 : max);
  }
  return out.replace(UNSTORABLE, '\ufffd');
}
