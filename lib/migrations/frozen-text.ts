/**
 * A migration that redefines a function takes the text an earlier migration shipped and changes
 * it by exact substitutions, instead of carrying a full copy to drift from. `text` with `from`
 * replaced by `to`; throws if `from` is not in it, so a frozen text that changed fails at load.
 */
export function swapText(migration: number, text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`migration ${migration}: text not found: ${from.slice(0, 60)}`);
  return text.replace(from, to);
}
