import { EventEmitter } from 'node:events';
import { Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import type { PausedEntry } from './pause-target';
import { readPausesIfChanged, type PausedStamp } from './pause.sql';

/**
 * This process's copy of the paused types and groups, refreshed from the database by the
 * orchestrator (every half poll interval, at start-up, on a PostgreSQL notification) and by
 * `pause`/`resume` themselves. Emits `changed` when the sets differ from the last read.
 *
 * A refresh returns the entries only when their version (bumped by every pause and resume, in
 * its transaction) moved since the last read, in the same statement (readPausesIfChanged): 40,000
 * paused groups were 40 ms and 48 ms of Node CPU per read on PostgreSQL, twice a second in every
 * worker. Writes that bypass `pause`/`resume` (an INSERT by hand, a process of an older version
 * during a rolling upgrade) are seen by the full read every `fullReadEveryMs`.
 */
@Injectable()
export class PausedWork extends EventEmitter {
  /**
   * The sets are changed in place by this process's own pause/resume (applyOwn) and replaced by a
   * read. A copy per call, so that a reader across an await kept the set it took, cost 68-375 ms
   * of the event loop per call at 400,000 paused groups (pausing one more: O(n) each, O(n²) for
   * n one at a time); readers (the planner, a rotation walk) see the change a moment sooner,
   * as after a refresh. Claims name `groupList`, a snapshot.
   */
  get types(): ReadonlySet<string> {
    return this.typeSet;
  }
  get groups(): ReadonlySet<string> {
    return this.groupSet;
  }
  /**
   * `groups` as a list, the same array until the groups change, built when first asked for after
   * a change: what claims name as the groups to step over (ClaimRequest.excludeGroups). A copy
   * per claim of 40,000 paused groups took a busy worker to a third of its throughput.
   */
  get groupList(): readonly string[] {
    return (this.groupArray ??= [...this.groupSet]);
  }
  private typeSet = new Set<string>();
  private groupSet = new Set<string>();
  private groupArray: readonly string[] | null = [];
  /** At most this long between two reads of the entries, whatever their version says. */
  fullReadEveryMs = 30_000;
  private reading: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  /** The version of the entries held, and when they were read. */
  private version: number | null = null;
  /** The count of writes to the table as of the entries held (see applyOwn). */
  private writes: number | null = null;
  private readAt = 0;

  constructor(private readonly db: JobQueueDatabase) {
    super();
  }

  get any(): boolean {
    return this.types.size > 0 || this.groups.size > 0;
  }

  isPaused(job: { type: string; group: string }): boolean {
    return this.types.has(job.type) || this.groups.has(job.group);
  }

  /**
   * `jobs` split by one look at the sets: [paused, not paused]. Two looks with an await between
   * them can disagree (a refresh lands in between), and a job then falls on both sides.
   */
  split<T extends { type: string; group: string }>(jobs: readonly T[]): [T[], T[]] {
    const paused: T[] = [];
    const free: T[] = [];
    for (const job of jobs) (this.isPaused(job) ? paused : free).push(job);
    return [paused, free];
  }

  /**
   * Re-reads the table. A caller waits for a read that starts after its call (one in flight may
   * predate its change), and for no more: callers during a read share the one read after it.
   * Waiting until no caller wanted another read starved `pause()` when the half-poll refreshes
   * came faster than a read of many paused groups took.
   */
  refresh(): Promise<void> {
    if (!this.reading) {
      this.reading = this.readOnce().finally(() => (this.reading = undefined));
      return this.reading;
    }
    this.queued ??= this.reading.then(this.startQueued, this.startQueued);
    return this.queued;
  }

  /**
   * A read is queued behind the one in flight: a caller that only needs some read after now (the
   * half-poll timer) has one already. Timer ticks queued behind a read the server never answered
   * each heard its failure: 48 warnings for one failed read in a 1.2 s outage.
   */
  get readQueued(): boolean {
    return this.queued !== undefined;
  }

  /**
   * This process's own pause (`paused`) or resume of `entry`, committed as `stamp`: applied to the
   * sets held when it is the only change since they were read, with no read in flight (its older
   * snapshot could land after it); otherwise a refresh. Each call reading every entry made
   * pausing 2,000 groups one call at a time read 2 million rows. The only change: the version
   * moved by one, and the table's writes by this call's row alone (rows written by hand move no
   * version, only the writes; a count of the entries, which caught most of them, was 35-40 ms of
   * the server's time a call at 400,000 paused groups, and is still what MySQL/MariaDB read).
   */
  applyOwn(entry: PausedEntry, paused: boolean, stamp: PausedStamp): Promise<void> {
    if (stamp.version === null || this.version === null || stamp.version !== this.version + 1 || this.reading) return this.refresh();
    const held = entry.kind === 'type' ? this.typeSet : this.groupSet;
    const changes = held.has(entry.name) !== paused;
    if (stamp.count !== undefined) {
      // MySQL/MariaDB (no triggers, see pausedStamp): the sets then hold as many entries as the table.
      const size = held.size + (changes ? (paused ? 1 : -1) : 0);
      const others = entry.kind === 'type' ? this.groupSet.size : this.typeSet.size;
      if (size + others !== stamp.count) return this.refresh(); // rows written by hand
    } else if (stamp.writes === null || this.writes === null || stamp.writes !== this.writes + (changes ? 1 : 0)) {
      return this.refresh();
    }
    this.version = stamp.version;
    this.writes = stamp.writes;
    if (!changes) return Promise.resolve();
    if (paused) held.add(entry.name);
    else held.delete(entry.name);
    if (entry.kind === 'group') this.groupArray = null;
    this.emit('changed');
    return Promise.resolve();
  }

  /**
   * Resolves once no read is in flight or queued, whatever they end in. The shutdown waits for it
   * before the connection closes: a read the half-poll timer had started just before failed
   * against the closed connection and logged a warning at every such shutdown.
   */
  async idle(): Promise<void> {
    for (let pending = this.queued ?? this.reading; pending; pending = this.queued ?? this.reading) await pending.catch(() => undefined);
  }

  private readonly startQueued = (): Promise<void> => {
    this.queued = undefined;
    return this.refresh();
  };

  private async readOnce(): Promise<void> {
    const readAt = Date.now();
    const held = readAt - this.readAt < this.fullReadEveryMs ? this.version : null;
    const { version, writes, entries } = await readPausesIfChanged(this.db, held);
    this.version = version;
    if (!entries) return;
    this.writes = writes; // as of these entries; unread writes since then keep it behind, and applyOwn reads
    this.readAt = readAt;
    const types = new Set(entries.filter((e) => e.kind === 'type').map((e) => e.name));
    const groups = new Set(entries.filter((e) => e.kind === 'group').map((e) => e.name));
    const groupsChanged = !sameSet(groups, this.groupSet);
    const changed = groupsChanged || !sameSet(types, this.typeSet);
    this.typeSet = types;
    this.groupSet = groups;
    if (groupsChanged) this.groupArray = null;
    if (changed) this.emit('changed');
  }
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
