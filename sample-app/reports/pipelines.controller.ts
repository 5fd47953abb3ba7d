import { BadRequestException, Body, Controller, Post } from '@nestjs/common';
import { PipelineService, type StartedPipeline } from './pipeline.service';
import { parsePipelineRequest, PipelineRequestError } from './pipeline-request.validator';

@Controller('pipelines')
export class PipelinesController {
  constructor(private readonly pipelines: PipelineService) {}

  /** `{ tenant, sources? }` → 201 with the job ids by ref; 400 with the reason for a bad body. */
  @Post()
  async create(@Body() body: unknown): Promise<StartedPipeline> {
    let request;
    try {
      request = parsePipelineRequest(body);
    } catch (err) {
      if (err instanceof PipelineRequestError) throw new BadRequestException(err.message);
      throw err;
    }
    return this.pipelines.start(request);
  }
}
