/** `info`: a line a handler wrote with `ctx.log()`; `error`: the error an attempt failed with. */
export type JobLogLevel = 'info' | 'error';

export const JOB_LOG_LEVELS: readonly JobLogLevel[] = ['info', 'error'];

/** One line of a job's log: written by its handler with `ctx.log()`, or the error of a failed attempt. */
export interface JobLogLine {
  /** The attempt that wrote it, or that failed (1-based). */
  attempt: number;
  /** When the handler called `ctx.log()` (the worker's clock), or when the failure was recorded (the database's). */
  at: Date;
  /**
   * `info` for `ctx.log()` lines; `error` for the line written with each failed attempt (its
   * error's first 2,000 characters, stack included): the job's error history, one per attempt,
   * where `lastError` keeps only the latest.
   */
  level: JobLogLevel;
  message: string;
}

export interface JobLogQuery {
  /** Only this attempt's lines. */
  attempt?: number;
  /** Only lines of this level: `'error'` reads the job's error history. */
  level?: JobLogLevel;
  /** Lines per page, 1–1,000. Default 100. */
  limit?: number;
  /** `nextCursor` of the previous page of the same job (and attempt). */
  cursor?: string | null;
}

export interface JobLogPage {
  /** In the order written (after a `retry()`, whose attempts start over at 1, its lines follow the earlier ones). */
  logs: JobLogLine[];
  /** Pass back as `cursor` for the next page; null after the last one. */
  nextCursor: string | null;
}
