import type { JobView } from 'nestjs-sql-job-queue';

/** One tenant's pipeline as the live view sees it at one instant: the container and its steps. */
export interface PipelineSnapshot {
  tenant: string;
  report: JobView;
  steps: JobView[];
}
