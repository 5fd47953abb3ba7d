/** Per reopened job with open upstream edges, read before the reset (`retryJobs`, step 3). */
export interface UpstreamCounts {
  id: number;
  /** Upstream jobs not done (or done but not yet counted down): its `pending_deps` after the reset. */
  open: number;
  /** Upstream jobs failed or cancelled before the reset, the reopened ones included. */
  bad: number;
}

export interface RetryPlan {
  /** `pending_deps` → the reopened jobs that get it, each in id order. */
  pending: Map<number, { ready: number[]; waiting: number[] }>;
  /** How many jobs the reset makes ready. */
  ready: number;
  /**
   * Jobs that may still depend on a failed or cancelled job that this retry does not reopen:
   * read again after the reset, and cancelled again if they do.
   */
  suspects: number[];
}

/**
 * Decides, from one read made before the reset, what every reopened job becomes, so the reset
 * writes each row once (not reset, recount, then promote: three new versions of every row).
 *
 * - The open count does not depend on the reset: a reopened upstream is failed or cancelled
 *   before it and waiting after it, not done either way.
 * - A job with no open upstream and no children to wait for becomes ready at once; a container
 *   waits for its children.
 * - The bad count does depend on it: a reopened upstream stops being bad. `reopenedUpstreams`
 *   holds, per job, the reopened upstreams the closure walk saw (each edge once). A job whose bad
 *   upstreams are all among them depends on nothing failed after the reset. The walk does not see
 *   every such edge (it follows only cancelled dependents), so a job it cannot clear is a suspect
 *   and gets an exact read after the reset.
 */
export function planRetry(
  ids: readonly number[],
  containers: ReadonlySet<number>,
  counts: readonly UpstreamCounts[],
  reopenedUpstreams: ReadonlyMap<number, number>,
): RetryPlan {
  const byId = new Map(counts.map((c) => [c.id, c]));
  const pending = new Map<number, { ready: number[]; waiting: number[] }>();
  const suspects: number[] = [];
  let ready = 0;
  for (const id of [...ids].sort((a, b) => a - b)) {
    const c = byId.get(id);
    const open = c?.open ?? 0;
    let slot = pending.get(open);
    if (!slot) pending.set(open, (slot = { ready: [], waiting: [] }));
    if (open === 0 && !containers.has(id)) {
      slot.ready.push(id);
      ready++;
    } else {
      slot.waiting.push(id);
    }
    if (c && c.bad > (reopenedUpstreams.get(id) ?? 0)) suspects.push(id);
  }
  return { pending, ready, suspects };
}
