import { jest } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { JobQueueModule } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { sql, type Sql } from '../../lib/database/sql';
import { HEALTH_AGE_MIN_MS, HEALTH_AGE_PACE } from '../../lib/health/job-queue.health';
import { JobQueueHealthIndicator, JobQueueHealthModule } from 'nestjs-sql-job-queue/health';
import { describeDialects } from '../support/describe-dialects';
import { numbers } from '../support/number-rows';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually } from '../support/wait';

const TYPES = 100;
const PRIORITIES = 2;
const OLDEST_MS = 3_600_000;

/** A statement of the oldest ready age read (on MySQL one per level, on SQLite one per 32 levels). */
const isAgeStatement = (text: string) => text.includes('RECURSIVE lv') || text.includes('FORCE INDEX (jobs_ready_idx)');
/** The first statement of a read: PostgreSQL's only one, SQLite's first slice, MySQL's first level. */
const isReadStart = (text: string) =>
  text.includes('WITH RECURSIVE lv (type, priority) AS') ||
  text.includes('SELECT * FROM (SELECT type, priority, 1 FROM jobs INDEXED BY jobs_ready_idx') ||
  text.startsWith('SELECT type, neg_priority FROM jobs FORCE INDEX (jobs_ready_idx)');

/** The pace's ttl for a read that took `tookMs` (see CachedRead). */
const ttlFor = (tookMs: number) => Math.max(HEALTH_AGE_MIN_MS, Math.min(HEALTH_AGE_PACE.factor * tookMs, HEALTH_AGE_PACE.maxMs));
/** Until a read is stale: its ttl from its start (its time as the spy saw it, plus the clock's ms rounding), and a margin. */
const staleAfter = (read: { at: number; lastEnd: number }) => Math.max(0, read.at + ttlFor(read.lastEnd - read.at + 2) + 100 - performance.now());

/**
 * The health check read the oldest ready age on every check: a few index probes per (type,
 * priority) of the ready jobs, on MySQL a statement each, 2.5-3.5 s with 5,000 types on MariaDB.
 * A probe every few seconds on each replica kept a connection and the server busy most of the
 * time for one number. Now the read is paced like the metrics gauge's (kept 20 times as long as
 * it took, at least 1 s, at most 60 s), and a check between reads only pings the database, so a
 * database that stops answering is still `down` within timeoutMs.
 */
describeDialects('health checks pace the oldest ready age read', (db) => {
  let proxy: TcpProxy | undefined;
  let moduleRef: TestingModule;
  let health: JobQueueHealthIndicator;
  /** Start times (performance.now()) of the reads, and when each read's last statement ended. */
  const reads: Array<{ at: number; lastEnd: number }> = [];
  let ageStatements = 0;
  /** SQLite has no server to freeze: statements wait on this gate instead. */
  let gate: Promise<void> | undefined;
  let openGate: (() => void) | undefined;
  const freeze = () => (proxy ? proxy.freeze() : (gate = new Promise((r) => (openGate = r))));
  const thaw = () => (proxy ? proxy.thaw() : (openGate?.(), (gate = undefined)));

  beforeAll(async () => {
    if (db.dialect !== 'sqlite') {
      proxy = new TcpProxy('127.0.0.1', Number(new URL(db.location).port));
      await proxy.start();
    }
    moduleRef = await Test.createTestingModule({
      imports: [TerminusModule, JobQueueModule.forRoot(db.options({ worker: false, ...(proxy ? { url: proxy.url(db.location) } : {}) })), JobQueueHealthModule],
    }).compile();
    await moduleRef.init();
    health = moduleRef.get(JobQueueHealthIndicator);
    const database = moduleRef.get(JobQueueDatabase);
    const d = database.dialect;
    const at = (ms: string) => d.addMs(d.now(), sql`${sql.raw(`(${ms})`)}`);
    const type = sql.raw(d.name === 'mysql' ? "CONCAT('t', i)" : "'t' || i");
    // TYPES x PRIORITIES levels of ready jobs, due a minute or so ago; one job an hour ago.
    for (let p = 0; p < PRIORITIES; p++) {
      await database.run(sql`INSERT INTO jobs (type, args, state, priority, run_after, created_at, updated_at)
        SELECT ${type}, '{}', 'ready', ${p}, ${at('-60000 - i')}, ${at('-60000 - i')}, ${at('-60000 - i')} FROM ${numbers({ db: database } as never, TYPES)}`);
    }
    await database.run(sql`INSERT INTO jobs (type, args, state, priority, run_after, created_at, updated_at)
      VALUES ('t7', '{}', 'ready', 1, ${at(`-${OLDEST_MS}`)}, ${at(`-${OLDEST_MS}`)}, ${at(`-${OLDEST_MS}`)})`);
    const run = database.run.bind(database);
    jest.spyOn(database, 'run').mockImplementation(async (statement: Sql) => {
      if (gate) await gate;
      const text = statement.render(d.name).text;
      if (isReadStart(text)) reads.push({ at: performance.now(), lastEnd: 0 });
      try {
        return await run(statement);
      } finally {
        if (isAgeStatement(text)) {
          ageStatements++;
          reads[reads.length - 1].lastEnd = performance.now();
        }
      }
    });
  });
  afterAll(async () => {
    thaw();
    await moduleRef?.close();
    await proxy?.stop();
  });

  it('20 checks back to back read the age once (a read each before), the others ping', async () => {
    const N = 20;
    const started = performance.now();
    const ages: unknown[] = [];
    const measured: unknown[] = [];
    for (let i = 0; i < N; i++) {
      // A long timeout: the check that reads waits for it however loaded the machine.
      const check = (await health.isHealthy('q', { maxOldestReadyAgeMs: 2 * OLDEST_MS, timeoutMs: 20_000 })).q;
      expect(check.status).toBe('up');
      ages.push(check.oldestReadyAgeMs);
      measured.push(check.oldestReadyAgeMeasuredAt);
    }
    const elapsed = performance.now() - started;
    expect(ages[0]).toBeGreaterThanOrEqual(OLDEST_MS);
    // A read is fresh for at least HEALTH_AGE_MIN_MS from its start: one per that much time, at most.
    // Before: 20 reads (the MySQL one's statements: 20 x 201).
    expect(reads.length).toBeLessThanOrEqual(1 + Math.floor(elapsed / HEALTH_AGE_MIN_MS));
    expect(reads.length).toBeLessThan(N / 4);
    if (reads.length === 1) expect(new Set(ages).size).toBe(1);
    // Each check says when its age was read: one time per read, from before the first check on.
    expect(new Set(measured).size).toBe(reads.length);
    for (const at of measured) expect(Date.parse(String(at))).toBeGreaterThanOrEqual(performance.timeOrigin + started - 50);
    process.stdout.write(`[${db.dialect}] ${N} checks in ${Math.round(elapsed)} ms: ${reads.length} read(s), ${ageStatements} read statements\n`);
  }, 60_000);

  it('a fresh age once the pace has passed, the same one until then', async () => {
    // Past the last read's pace: a check reads. The pace is 20 times the read as CachedRead timed
    // it, to its promise's end: a loaded machine's few ms between the spy's last statement and
    // that end are 20 times as many here, so the checks go on until one reads (CI, SQLite).
    await new Promise((r) => setTimeout(r, staleAfter(reads[reads.length - 1])));
    const before = reads.length;
    // A long timeout: the check that reads waits for it (with 3 s, a read slower than 1.5 s on a
    // loaded machine gave the last age, the ping's answer).
    const timeoutMs = 20_000;
    let first = (await health.isHealthy('q', { timeoutMs })).q;
    for (const until = performance.now() + HEALTH_AGE_PACE.maxMs; reads.length === before && performance.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50));
      first = (await health.isHealthy('q', { timeoutMs })).q;
    }
    expect(reads.length).toBe(before + 1);
    const read = reads[reads.length - 1];
    const firstEnd = performance.now();
    const pacedMs = ttlFor(read.lastEnd - read.at);
    const seen: unknown[] = [];
    const seenAt: unknown[] = [];
    let next: typeof first | undefined;
    while (reads.length === before + 1) {
      if (performance.now() - read.at > ttlFor(firstEnd - read.at) + 2_000) throw new Error(`no new read ${Math.round(performance.now() - read.at)} ms after the last`);
      await new Promise((r) => setTimeout(r, 100));
      const check = (await health.isHealthy('q', { timeoutMs })).q;
      if (reads.length === before + 1) seen.push(check.oldestReadyAgeMs), seenAt.push(check.oldestReadyAgeMeasuredAt);
      else next = check;
    }
    // Until then, every check gave the age that read gave (before: a new read, a new age, each check).
    expect(new Set(seen)).toEqual(new Set([first.oldestReadyAgeMs]));
    // And said so: the time of that one read (before, the details had no time, and a kept age
    // looked like a fresh one), when the read started as the spy saw it.
    expect(new Set(seenAt)).toEqual(new Set([first.oldestReadyAgeMeasuredAt]));
    const firstAt = Date.parse(String(first.oldestReadyAgeMeasuredAt));
    expect(Math.abs(firstAt - (performance.timeOrigin + read.at))).toBeLessThanOrEqual(read.lastEnd - read.at + 250);
    expect(seen.length).toBeGreaterThanOrEqual(Math.floor(HEALTH_AGE_MIN_MS / 200));
    const second = reads[reads.length - 1];
    const gap = second.at - read.at;
    // Not before the pace (20 times the read, at least 1 s), and soon after it (checks 100 ms apart).
    expect(gap).toBeGreaterThanOrEqual(pacedMs - 20);
    expect(gap).toBeLessThanOrEqual(ttlFor(firstEnd - read.at) + 1_000);
    // The new read's age: the hour-old job has waited about `gap` longer.
    const grew = Number(next!.oldestReadyAgeMs) - Number(first.oldestReadyAgeMs);
    const slack = read.lastEnd - read.at + (second.lastEnd - second.at) + 250;
    expect(Math.abs(grew - gap)).toBeLessThanOrEqual(slack);
    // Its time moved with it: an age and its time differ from the first's by the same span.
    const moved = Date.parse(String(next!.oldestReadyAgeMeasuredAt)) - firstAt;
    expect(Math.abs(moved - gap)).toBeLessThanOrEqual(slack);
    expect(Math.abs(grew - moved)).toBeLessThanOrEqual(slack);
  }, 120_000);

  it('a database that stops answering is down within timeoutMs, though the age is fresh; up again after', async () => {
    expect((await health.isHealthy('q')).q.status).toBe('up'); // the age read is fresh now, or read by this check
    freeze();
    try {
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const check = (await health.isHealthy('q', { timeoutMs: 300 })).q;
        expect(check).toMatchObject({ status: 'down', message: 'database unreachable: no answer within 300 ms', oldestReadyAgeMs: null, oldestReadyAgeMeasuredAt: null });
        expect(performance.now() - started).toBeLessThan(300 + 1_000);
      }
      // Past the pace too: the read, then the ping, neither answered.
      await new Promise((r) => setTimeout(r, staleAfter(reads[reads.length - 1])));
      const check = (await health.isHealthy('q', { timeoutMs: 300 })).q;
      expect(check).toMatchObject({ status: 'down', message: 'database unreachable: no answer within 300 ms' });
    } finally {
      thaw();
    }
    const up = await eventually('up again', async () => {
      const check = (await health.isHealthy('q', { timeoutMs: 2_000 })).q;
      return check.status === 'up' ? check : undefined;
    }, 30_000, 100);
    expect(up.oldestReadyAgeMs).toBeGreaterThanOrEqual(OLDEST_MS);
  }, 120_000);
});
