/**
 * The order every claimer locks cap and rate-window rows in: `global`, then the types', then the
 * groups', by name within each. A rotation claim learns which groups it reaches only after it
 * has locked the rotation cursor and walked; it locks the global and type rows before the cursor
 * and the groups' after, so every claimer must take the groups' last.
 */
export function inLockOrder(names: Iterable<string>): string[] {
  const rank = (n: string) => (n === 'global' ? 0 : n.startsWith('type:') ? 1 : 2);
  return [...names].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
