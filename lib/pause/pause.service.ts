import { Inject, Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { notifyInTransaction } from '../notify/notify.sql';
import { normalizePauseTarget, toPauseTarget } from './pause-target';
import { deletePause, insertPause, readPauses } from './pause.sql';
import { PausedWork } from './paused-work';

/**
 * Cluster-wide pause of a job type or a group, persisted in `job_queue_paused`. Workers read
 * the table every half poll interval (and at once on a PostgreSQL notification) and stop
 * claiming matching jobs; running jobs finish, enqueue goes on, paused jobs stay `ready`.
 */
@Injectable()
export class PauseService {
  constructor(
    @Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly db: JobQueueDatabase,
    private readonly paused: PausedWork,
  ) {}

  async pause(target: unknown): Promise<void> {
    const entry = normalizePauseTarget(target);
    await this.db.transaction(async (tx) => {
      await insertPause(tx, entry);
      if (this.options.listenNotify) await notifyInTransaction(tx, 'p');
    });
    await this.paused.refresh(); // this process at once, whatever the dialect
  }

  async resume(target: unknown): Promise<void> {
    const entry = normalizePauseTarget(target);
    await this.db.transaction(async (tx) => {
      await deletePause(tx, entry);
      if (this.options.listenNotify) await notifyInTransaction(tx, 'p');
    });
    await this.paused.refresh();
  }

  async listPaused(): Promise<Array<{ type?: string; group?: string }>> {
    return (await readPauses(this.db)).map(toPauseTarget);
  }
}
