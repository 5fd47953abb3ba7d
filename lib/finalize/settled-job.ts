/** A job that has just reached a terminal state inside the current transaction. */
export interface SettledJob {
  id: number;
  parentId: number | null;
  outcome: 'done' | 'failed' | 'cancelled';
  /** The job whose failure started a cancellation cascade (for the message dependents get). */
  cause?: number;
  /** PostgreSQL: the settling statement already announced it on the settled channel. */
  notified?: boolean;
  /** The outcome of an attempt this process ran (the scheduler reports its lifecycle event itself). */
  ownAttempt?: boolean;
}

export function toSettled(row: Record<string, unknown>, outcome: SettledJob['outcome'], cause?: number): SettledJob {
  return { id: Number(row.id), parentId: row.parent_id == null ? null : Number(row.parent_id), outcome, cause };
}

/** What a finalize transaction changed besides its own rows: for wake-ups and waiters. */
export interface CascadeResult {
  settled: SettledJob[];
  /** Waiting jobs made ready (`-1` = some may have been: MySQL cannot say without another read). */
  promoted: number;
  /** Done jobs whose dependents are left to SlicedPromotions (lib/finalize/sliced-promotions.ts). */
  sliced?: number;
}
