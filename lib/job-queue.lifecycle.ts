import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { JobQueueConnection } from './database/job-queue.connection';

/** Closes the queue's own DataSource after every `beforeApplicationShutdown` hook has drained. */
@Injectable()
export class JobQueueLifecycle implements OnApplicationShutdown {
  constructor(private readonly connection: JobQueueConnection) {}

  async onApplicationShutdown(): Promise<void> {
    await this.connection.close();
  }
}
