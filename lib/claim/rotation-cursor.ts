import { createHash } from 'node:crypto';
import type { ClaimRequest } from './claim-request';

/**
 * The name of the rotation cursor (a row of `job_queue_rotation`) that the workers of these
 * types share: one cursor per set of types. With one cursor for all, two services on one
 * database (disjoint types) each moved it to their own groups, and the other's next walk began
 * wherever that left it, skipping its groups in between: 120–386 of a service's 1,000 groups
 * first started after another of its groups had its third slot. Workers of the same types still
 * share theirs, so their concurrent claims take successive groups. A hash of the sorted set, so
 * the order and repeats of the list do not matter and any set fits the name's 64 characters.
 */
export function rotationCursorName(types: readonly string[]): string {
  const set = [...new Set(types)].sort();
  return `fair-share:${createHash('sha256').update(JSON.stringify(set)).digest('hex').slice(0, 40)}`;
}

/** The cursor a rotation claim follows: the worker's (see ClaimRequest.rotationCursor), else that of the claim's types. */
export function rotationCursorOf(request: ClaimRequest): string {
  return request.rotationCursor ?? rotationCursorName(request.types);
}
