import { Injectable } from '@nestjs/common';
import { JobHandler } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

@Injectable()
class Quick {
  @JobHandler('quick')
  quick(): null {
    return null;
  }
}

/**
 * An idle worker claims a woken job at once, whatever groups it served last. The poll is 5 s,
 * so a start within a second means the wake-up (a local enqueue, or a PostgreSQL notification)
 * was acted on. Two ways it used to wait for the poll instead: the rotation claim gave nothing
 * to a lone group whose visit was complete (the second job of a group an idle worker served by
 * the rotation), and a worker that last saw groups a and b, woken for group c, claimed for a and
 * b only and did not look again.
 */
describeDialects('idle wake-up across groups', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { pollIntervalMs: 5_000, concurrency: 4, externalTypes: ['unhandled'] }, [Quick]);
  });
  afterAll(() => app?.close());

  it('starts each woken job within a second, after serving one group, then two others', async () => {
    await resetTables(app);
    const latencies: number[] = [];
    const runAndTime = async (group: string) => {
      const job = await app.queue.enqueue({ type: 'quick', group });
      const done = await app.queue.waitFor(job.id, { timeoutMs: 4_000 });
      latencies.push(done.startedAt!.getTime() - done.createdAt.getTime());
    };
    for (let round = 0; round < 4; round++) {
      await runAndTime('solo'); // an idle worker that sees no group claims by the rotation: the cursor sits at 'solo'
      await new Promise((r) => setTimeout(r, 300)); // its list of groups is stale now
      await app.queue.enqueue({ type: 'unhandled' }); // a wake that finds no group of its types: the list is fresh and empty
      await new Promise((r) => setTimeout(r, 100));
      await runAndTime('solo'); // the rotation again, with the cursor's visit of 'solo' complete
      await Promise.all([runAndTime(`a${round}`), runAndTime(`b${round}`)]);
      await runAndTime(`c${round}`); // a group the worker has not seen, after it saw two
    }
    latencies.sort((a, b) => a - b);
    process.stdout.write(`[${db.dialect}] idle wake across groups: median ${latencies[latencies.length >> 1]} ms, max ${latencies[latencies.length - 1]} ms (poll 5000 ms)\n`);
    expect(latencies[latencies.length - 1]).toBeLessThan(1_000);
  });
});
