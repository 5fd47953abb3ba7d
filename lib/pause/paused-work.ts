import { EventEmitter } from 'node:events';
import { Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { readPauses } from './pause.sql';

/**
 * This process's copy of the paused types and groups, refreshed from the database by the
 * orchestrator (every half poll interval, at start-up, on a PostgreSQL notification) and by
 * `pause`/`resume` themselves. Emits `changed` when the sets differ from the last read.
 */
@Injectable()
export class PausedWork extends EventEmitter {
  types: ReadonlySet<string> = new Set();
  groups: ReadonlySet<string> = new Set();
  private refreshing: Promise<void> | undefined;
  private again = false;

  constructor(private readonly db: JobQueueDatabase) {
    super();
  }

  get any(): boolean {
    return this.types.size > 0 || this.groups.size > 0;
  }

  isPaused(job: { type: string; group: string }): boolean {
    return this.types.has(job.type) || this.groups.has(job.group);
  }

  /** Re-reads the table; calls made while a read is in flight get one more read after it. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false;
          const entries = await readPauses(this.db);
          const types = new Set(entries.filter((e) => e.kind === 'type').map((e) => e.name));
          const groups = new Set(entries.filter((e) => e.kind === 'group').map((e) => e.name));
          const changed = !sameSet(types, this.types) || !sameSet(groups, this.groups);
          this.types = types;
          this.groups = groups;
          if (changed) this.emit('changed');
        } while (this.again);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
