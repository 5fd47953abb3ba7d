import type { ExecutionSnapshot } from './execution-log';

/**
 * The check every measured run must pass, or its figures do not count: every enqueued job ran
 * at least once (handler executions counted per id), nothing ran that was not enqueued, and the
 * database shows every job finalized exactly once (one terminal success per job, nothing left
 * open or failed). Re-executions are allowed by at-least-once delivery but are reported.
 */
export interface CorrectnessInput {
  expectedIds: ReadonlyArray<string | number>;
  executions: ExecutionSnapshot;
  /** Jobs the database shows as successfully finalized (done / completed / deleted-on-success). */
  finalized: number;
  /** Jobs the database shows as anything else (open, failed, cancelled). */
  notFinalized: number;
}

export interface Verdict {
  ok: boolean;
  problems: string[];
  /** Handler executions beyond one per job. */
  duplicates: number;
}

export function checkRun(input: CorrectnessInput): Verdict {
  const expected = new Set(input.expectedIds.map(String));
  const problems: string[] = [];
  const executed = new Map(input.executions.counts);
  let missing = 0;
  for (const id of expected) if (!executed.has(id)) missing++;
  let unexpected = 0;
  let duplicates = 0;
  for (const [id, n] of executed) {
    if (!expected.has(id)) unexpected++;
    duplicates += n - 1;
  }
  if (expected.size !== input.expectedIds.length) problems.push(`${input.expectedIds.length - expected.size} duplicate ids returned by enqueue`);
  if (missing) problems.push(`${missing} of ${expected.size} jobs never executed`);
  if (unexpected) problems.push(`${unexpected} executed ids were never enqueued`);
  if (input.finalized !== expected.size) problems.push(`${input.finalized} finalized in the database, expected ${expected.size}`);
  if (input.notFinalized) problems.push(`${input.notFinalized} jobs not finalized as success in the database`);
  return { ok: problems.length === 0, problems, duplicates };
}

/** Records failed runs of a scenario for its report. */
export class FailureLog {
  readonly entries: string[] = [];

  add(what: string, problems: string[]): void {
    const line = `FAILED ${what}: ${problems.join('; ')}`;
    this.entries.push(line);
    console.log(`  ${line}`);
  }
}
