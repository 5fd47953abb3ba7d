import { EventEmitter } from 'node:events';
import { Injectable } from '@nestjs/common';
import type { SettledJob } from '../finalize/settled-job';

/**
 * In-process signals between the services:
 * - `wake`: ready work may exist (an enqueue or a promotion in this process), claim now;
 * - `settled`: jobs reached a terminal state in a transaction this process committed;
 * - `cancelled`: jobs were cancelled while running (their handlers must stop).
 */
@Injectable()
export class JobQueueEvents extends EventEmitter {
  constructor() {
    super();
    this.setMaxListeners(0); // services and test harnesses subscribe freely (waitFor shares one listener)
  }

  wake(): void {
    this.emit('wake');
  }

  settled(jobs: SettledJob[]): void {
    if (jobs.length) this.emit('settled', jobs);
  }

  cancelled(ids: number[]): void {
    if (ids.length) this.emit('cancelled', ids);
  }
}
