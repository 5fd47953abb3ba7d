import { Injectable } from '@nestjs/common';
import { ClaimService, JobHandler, type GraphNode } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * A chain runs one job at a time: each link is finalize → promotion → claim. On SQLite and
 * MariaDB the finalize transaction ends with the worker's claim, after the promotion, so the
 * next link is taken in the same transaction; a tick that finds such a write queued leaves the
 * claim to it. Before, a link cost about three claims: one when the slot freed (nothing ready
 * yet), one on the promotion's wake, one after the result was written. On PostgreSQL the claim
 * is the last part of the complete's one statement, when the worker knows of nothing else ready
 * (between links). Counted: every claim the worker makes, by a tick (ClaimService.claim) or at
 * the end of a finalize (claimWithin, or PostgreSQL's ClaimService.oneCall).
 *
 * The poll is 5 s: a missed wake would stall a link until a poll, which the largest gap between
 * a link's end and the next one's start shows.
 */
const LINKS = 300;

/**
 * Claims per link, from measurements (300 links, one worker): 1.00 per link on every dialect in
 * every run (before: SQLite 3.00, MariaDB 2.10, PostgreSQL 2.00-2.37). Polls add a few more.
 */
const MAX_CLAIMS_PER_LINK = { sqlite: 1.3, mysql: 1.3, postgres: 1.3 } as const;

@Injectable()
class Handlers {
  @JobHandler('link')
  async link(): Promise<null> {
    return null;
  }
}

describeDialects('a chain claims about once per link', (db) => {
  let app: QueueApp;
  const counts = { tick: 0, finalize: 0 };

  beforeAll(async () => {
    app = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 5_000 }, [Handlers]);
    const service = app.module.get(ClaimService);
    const claim = service.claim.bind(service);
    const claimWithin = service.claimWithin.bind(service);
    service.claim = (request) => {
      counts.tick++;
      return claim(request);
    };
    service.claimWithin = (tx, request) => {
      counts.finalize++;
      return claimWithin(tx, request);
    };
    // PostgreSQL's one-statement complete ends with this call instead.
    const oneCall = service.oneCall.bind(service);
    service.oneCall = (request) => {
      const call = oneCall(request);
      if (call) counts.finalize++;
      return call;
    };
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  it(`runs a chain of ${LINKS} within ${MAX_CLAIMS_PER_LINK[db.dialect]} claims per link, never waiting for a poll`, async () => {
    const nodes: GraphNode[] = Array.from({ length: LINKS }, (_, i) => ({ ref: `l${i}`, type: 'link', dependsOn: i ? [`l${i - 1}`] : [] }));
    const ids = await app.queue.enqueueGraph(nodes);
    const started = Date.now();
    counts.tick = 0;
    counts.finalize = 0;
    // Timers must keep firing while the chain runs: with a synchronous driver (SQLite), finalize
    // → claim → run → finalize could chain in microtasks alone and hold heartbeats, job timeouts
    // and shutdown until the queue ran dry.
    let timerTicks = 0;
    const timer = setInterval(() => timerTicks++, 20);
    try {
      expect(await app.queue.waitFor(ids[`l${LINKS - 1}`], { timeoutMs: 120_000 })).toMatchObject({ state: 'done' });
    } finally {
      clearInterval(timer);
    }
    const elapsed = Date.now() - started;
    const claims = counts.tick + counts.finalize;
    expect(await app.count(`state <> 'done'`)).toBe(0);

    let maxGap = 0;
    let previous = await app.queue.get(ids.l0);
    for (let i = 1; i < LINKS; i++) {
      const link = await app.queue.get(ids[`l${i}`]);
      maxGap = Math.max(maxGap, link!.startedAt!.getTime() - previous!.finishedAt!.getTime());
      previous = link;
    }
    process.stdout.write(
      `[${db.dialect}] chain of ${LINKS}: ${claims} claims (${(claims / LINKS).toFixed(2)} per link; ${counts.tick} by ticks, ${counts.finalize} ending a finalize), ` +
        `${elapsed} ms, largest gap between links ${maxGap} ms (poll 5000 ms), a 20 ms timer fired ${timerTicks} times meanwhile\n`,
    );
    // Each poll may add a claim.
    expect(claims).toBeLessThanOrEqual(Math.ceil(MAX_CLAIMS_PER_LINK[db.dialect] * LINKS) + Math.ceil(elapsed / 5_000) + 2);
    expect(maxGap).toBeLessThan(2_500);
    expect(timerTicks).toBeGreaterThanOrEqual(Math.max(2, Math.floor(elapsed / 200)));
  }, 180_000);
});
