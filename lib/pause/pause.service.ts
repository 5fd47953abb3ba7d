import { Inject, Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { notifyInTransaction } from '../notify/notify.sql';
import { decodeKeyCursor, encodeKeyCursor } from '../query/find-cursor';
import { normalizePageOptions, type FindOptions } from '../query/job-filter';
import { InvalidCursorError } from '../errors/query.errors';
import { normalizePauseTarget, toPauseTarget } from './pause-target';
import { bumpPausedVersion, deletePause, insertPause, pausedPage, pausedStamp, readPauses } from './pause.sql';
import { fromPausedKey, normalizePausedFilter, pausedFilterText, pausedKey, type FindPausedResult } from './paused-filter';
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
    const stamp = await this.db.transaction(async (tx) => {
      await insertPause(tx, entry);
      await bumpPausedVersion(tx);
      if (this.options.listenNotify) await notifyInTransaction(tx, 'p');
      return pausedStamp(tx);
    });
    await this.paused.applyOwn(entry, true, stamp); // this process at once, whatever the dialect
  }

  async resume(target: unknown): Promise<void> {
    const entry = normalizePauseTarget(target);
    const stamp = await this.db.transaction(async (tx) => {
      await deletePause(tx, entry);
      await bumpPausedVersion(tx);
      if (this.options.listenNotify) await notifyInTransaction(tx, 'p');
      return pausedStamp(tx);
    });
    await this.paused.applyOwn(entry, false, stamp);
  }

  async listPaused(): Promise<Array<{ type?: string; group?: string }>> {
    return (await readPauses(this.db)).map(toPauseTarget);
  }

  /** A page of pauses, groups then types by name (see `JobQueueService.findPaused`). */
  async findPaused(filter?: unknown, options?: FindOptions): Promise<FindPausedResult> {
    const f = normalizePausedFilter(filter);
    const { limit, cursor } = normalizePageOptions(options);
    const text = pausedFilterText(f);
    let after = null;
    if (cursor !== null) {
      after = fromPausedKey(decodeKeyCursor(cursor, text));
      if (!after) throw new InvalidCursorError(cursor, 'not a cursor');
    }
    const rows = await pausedPage(this.db, f.kind, after, limit);
    const page = rows.slice(0, limit);
    const paused = page.map((e) => ({ ...toPauseTarget(e), pausedAt: e.pausedAt }));
    return { paused, nextCursor: rows.length > limit ? encodeKeyCursor(pausedKey(page[page.length - 1]), text) : null };
  }
}
