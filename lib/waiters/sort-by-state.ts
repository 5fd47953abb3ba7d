import { TERMINAL_STATES, type JobState } from '../job.types';

export interface SortedByState<T> {
  /** Done, failed or cancelled. */
  settled: T[];
  /** Still waiting, ready, leased or running. */
  open: T[];
  /** Asked for, not found: never existed, or removed (retention, by hand). */
  missing: number[];
}

/** Sorts the rows read for `asked` ids into settled, open and missing ones. */
export function sortByState<T extends { id: number; state: string }>(asked: readonly number[], found: readonly T[]): SortedByState<T> {
  const out: SortedByState<T> = { settled: [], open: [], missing: [] };
  const seen = new Set<number>();
  for (const row of found) {
    seen.add(row.id);
    (TERMINAL_STATES.includes(row.state as JobState) ? out.settled : out.open).push(row);
  }
  for (const id of asked) if (!seen.has(id)) out.missing.push(id);
  return out;
}
