/** Answers per object: the options' maps are resolved once at start-up and never change. */
const known = new WeakMap<object, boolean>();

/**
 * Whether the object has an own enumerable key. The claim asks this of `limits.groups` and
 * `rateLimits.groups`, which may name thousands of tenants, several times per claim: both
 * `Object.keys` and `for…in` enumerate every key of such an object first (a third of a
 * worker's CPU at 2,000 named groups), so each object is looked at once.
 */
export function hasKeys(o: object | undefined): boolean {
  if (!o) return false;
  let answer = known.get(o);
  if (answer === undefined) {
    answer = Object.keys(o).length > 0;
    known.set(o, answer);
  }
  return answer;
}
