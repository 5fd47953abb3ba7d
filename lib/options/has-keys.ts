/**
 * Whether the object has an own enumerable key. Constant time, where `Object.keys(o).length`
 * copies every key: the claim asks this of `limits.groups` and `rateLimits.groups`, which may
 * name thousands of tenants, several times per claim.
 */
export function hasKeys(o: object | undefined): boolean {
  if (!o) return false;
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}
