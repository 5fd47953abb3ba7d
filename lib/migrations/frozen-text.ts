/**
 * A migration that redefines a function takes the text an earlier migration shipped and changes
 * it by exact substitutions, instead of carrying a full copy to drift from. `text` with `from`
 * replaced by `to`; throws if `from` is not in it, so a frozen text that changed fails at load.
 */
export function swapText(migration: number, text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`migration ${migration}: text not found: ${from.slice(0, 60)}`);
  return text.replace(from, to);
}

/**
 * `text` with the span that begins at `start` and ends with the first `end` after it replaced by
 * `to`: for replacing a whole statement of a frozen text without quoting all of it again. Throws,
 * naming the migration, if either marker is missing.
 */
export function swapSpan(migration: number, text: string, start: string, end: string, to: string): string {
  const from = text.indexOf(start);
  if (from < 0) throw new Error(`migration ${migration}: text not found: ${start.slice(0, 60)}`);
  const until = text.indexOf(end, from + start.length);
  if (until < 0) throw new Error(`migration ${migration}: text not found after its start: ${end.slice(0, 60)}`);
  return text.slice(0, from) + to + text.slice(until + end.length);
}

/** `text` with every `from` replaced by `to`; throws unless `from` occurs exactly `times` times. */
export function swapEvery(migration: number, text: string, from: string, to: string, times: number): string {
  const found = text.split(from).length - 1;
  if (found !== times) throw new Error(`migration ${migration}: expected ${times} of ${from.slice(0, 60)}, found ${found}`);
  return text.split(from).join(to);
}
