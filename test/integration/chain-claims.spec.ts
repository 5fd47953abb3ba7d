import { Injectable } from '@nestjs/common';
import { ClaimService, JobHandler, type GraphNode } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * A chain runs one job at a time: each link is finalize → promotion → claim. A free slot does
 * not make anything ready, so once a claim of the whole queue came back short the worker claims
 * again only when woken (the promotion, a notification, the poll). Before, every link cost up
 * to three claims: one when the slot freed (before the result was written: nothing ready yet),
 * one on the promotion's wake, and one more after the result was written. The poll interval is
 * long here, so a missed wake would show as a stall of about a second per link.
 */
const LINKS = 300;

@Injectable()
class Handlers {
  @JobHandler('link')
  async link(): Promise<null> {
    return null;
  }
}

describeDialects('a chain claims about once per link', (db) => {
  let app: QueueApp;
  let claims = 0;

  beforeAll(async () => {
    app = await startQueueApp(db, { concurrency: 10, pollIntervalMs: 2_000 }, [Handlers]);
    const service = app.module.get(ClaimService);
    const claim = service.claim.bind(service);
    service.claim = (request) => {
      claims++;
      return claim(request);
    };
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  it(`runs a chain of ${LINKS} with at most one claim per link (PostgreSQL: two, the NOTIFY wakes it too)`, async () => {
    const nodes: GraphNode[] = Array.from({ length: LINKS }, (_, i) => ({ ref: `l${i}`, type: 'link', dependsOn: i ? [`l${i - 1}`] : [] }));
    const started = Date.now();
    claims = 0;
    const ids = await app.queue.enqueueGraph(nodes);
    expect(await app.queue.waitFor(ids[`l${LINKS - 1}`], { timeoutMs: 120_000 })).toMatchObject({ state: 'done' });
    const elapsed = Date.now() - started;
    process.stdout.write(`[${db.dialect}] chain of ${LINKS}: ${claims} claims, ${elapsed} ms\n`);
    expect(await app.count(`state <> 'done'`)).toBe(0);
    // A few polls (every 2 s) may add a claim each; a missed wake would stall a link until one.
    const perLink = db.dialect === 'postgres' ? 2 : 1;
    expect(claims).toBeLessThanOrEqual(perLink * LINKS + Math.ceil(elapsed / 2_000) + 5);
    expect(elapsed).toBeLessThan(LINKS * 200);
  }, 180_000);
});
