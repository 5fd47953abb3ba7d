import { Injectable } from '@nestjs/common';
import { JobQueueService } from 'nestjs-sql-job-queue';
import type { PipelineRequest } from './pipeline-request.validator';
import { buildReportGraph, REPORT_REF } from './report.graph';

export interface StartedPipeline {
  tenant: string;
  /** The container's id: wait on this one to know the whole report is finished. */
  reportId: number;
  /** Job id per graph ref (`report`, `fetch:crm`, …, `notify`). */
  jobs: Record<string, number>;
}

/** Starts report pipelines: one graph per request, written in one transaction. */
@Injectable()
export class PipelineService {
  constructor(private readonly queue: JobQueueService) {}

  async start({ tenant, sources }: PipelineRequest): Promise<StartedPipeline> {
    const jobs = await this.queue.enqueueGraph(buildReportGraph(tenant, sources));
    return { tenant, reportId: jobs[REPORT_REF], jobs };
  }
}
