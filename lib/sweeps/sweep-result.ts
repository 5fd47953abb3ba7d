import { sql, type Sql } from '../database/sql';
import type { SettledJob } from '../finalize/settled-job';

export interface SweepResult {
  /** Back to `ready` for another attempt. */
  retried: number[];
  /** Now terminal (failed, plus anything the cascade settled). */
  settled: SettledJob[];
  promoted: number;
}

/** Which of a sweep's candidate rows one transaction may take. */
export interface SweepScope {
  /** Rows the database refused earlier in this run: left alone, so the run goes on past them. */
  skip: readonly number[];
  /** Only these rows (a half of a refused batch, while isolating the row at fault). */
  only?: readonly number[];
}

/** `AND …` restricting a sweep's candidate query to its scope. */
export function scopeFilter(scope: SweepScope | undefined): Sql {
  if (!scope) return sql``;
  const skip = scope.skip.length ? sql` AND id NOT IN (${sql.list(scope.skip)})` : sql``;
  return scope.only ? sql`${skip} AND id IN (${sql.list(scope.only)})` : skip;
}
