import type { Dialect } from 'nestjs-sql-job-queue';
import type { Probe } from '../databases';

/** Placeholder `n` (1-based) in the dialect's raw SQL. */
export function ph(dialect: Dialect, n: number): string {
  return dialect === 'postgres' ? `$${n}` : '?';
}

/** An id range that covers a set of ids (enqueue hands out consecutive blocks). */
export function idRange(ids: readonly number[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const id of ids) {
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  return [lo, hi];
}

/**
 * Reads our `jobs` table through a raw connection. Queries are bounded by an id range so they
 * walk the primary key, not the whole table (which may hold a million filler rows).
 */
export class OurRows {
  constructor(
    private readonly probe: Probe,
    private readonly dialect: Dialect,
  ) {}

  /** Jobs in the range not yet done, failed or cancelled. */
  open([lo, hi]: [number, number], type = 'noop'): Promise<number> {
    const d = this.dialect;
    return this.probe.scalar(
      `SELECT COUNT(*) AS n FROM jobs WHERE id BETWEEN ${ph(d, 1)} AND ${ph(d, 2)} AND type = ${ph(d, 3)}
       AND state NOT IN ('done', 'failed', 'cancelled')`,
      [lo, hi, type],
    );
  }

  /** Count per state in the range. */
  async states([lo, hi]: [number, number], type = 'noop'): Promise<Record<string, number>> {
    const d = this.dialect;
    const rows = await this.probe.query<{ state: string; n: unknown }>(
      `SELECT state, COUNT(*) AS n FROM jobs WHERE id BETWEEN ${ph(d, 1)} AND ${ph(d, 2)} AND type = ${ph(d, 3)} GROUP BY state`,
      [lo, hi, type],
    );
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** Finalized (done) vs anything else, for the correctness check. */
  async finalization(range: [number, number], type = 'noop'): Promise<{ finalized: number; notFinalized: number; states: Record<string, number> }> {
    const states = await this.states(range, type);
    const total = Object.values(states).reduce((a, b) => a + b, 0);
    return { finalized: states.done ?? 0, notFinalized: total - (states.done ?? 0), states };
  }
}
