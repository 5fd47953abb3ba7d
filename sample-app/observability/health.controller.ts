import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { JobQueueHealthIndicator } from 'nestjs-sql-job-queue/health';

/**
 * GET /health (terminus): 503 when the queue's database does not answer or this process has not
 * managed to claim or renew leases for a lease TTL; `degraded` (still 200) when the oldest ready
 * job has waited more than a minute.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly jobQueue: JobQueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.jobQueue.isHealthy('jobQueue', { maxOldestReadyAgeMs: 60_000 })]);
  }
}
