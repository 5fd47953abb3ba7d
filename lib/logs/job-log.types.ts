/** One line a handler wrote with `ctx.log()`. */
export interface JobLogLine {
  /** The attempt that wrote it (1-based). */
  attempt: number;
  /** When the handler called `ctx.log()`, by the worker's clock. */
  at: Date;
  message: string;
}

export interface JobLogQuery {
  /** Only this attempt's lines. */
  attempt?: number;
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
