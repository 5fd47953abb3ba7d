import type { JobState, JobView } from 'nestjs-sql-job-queue';

/** What `GET /jobs/:id` shows: the fields a client polls on, without the scheduling internals. */
export interface JobResponse {
  id: number;
  ref: string | null;
  type: string;
  group: string;
  state: JobState;
  progress: number;
  stage: string | null;
  attempts: number;
  maxAttempts: number;
  /** Runs that ended with ctx.snooze (they spent no attempt). */
  snoozes: number;
  result: unknown;
  error: string | null;
  parentId: number | null;
  isContainer: boolean;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export function toJobResponse(job: JobView): JobResponse {
  return {
    id: job.id,
    ref: job.ref,
    type: job.type,
    group: job.group,
    state: job.state,
    progress: job.progress,
    stage: job.currentStage,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    snoozes: job.snoozes,
    result: job.result,
    error: job.lastError,
    parentId: job.parentId,
    isContainer: job.isContainer,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
  };
}
