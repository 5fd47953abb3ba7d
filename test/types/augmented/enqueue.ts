import type { JobQueueService } from 'nestjs-sql-job-queue';

export async function enqueueFixtures(queue: JobQueueService): Promise<void> {
  const job = await queue.enqueue({ type: 'render', args: { reportId: 'r1' }, group: 'acme' });
  const reportId: string = job.args.reportId;
  const url: string | undefined = job.result?.url;
  void reportId;
  void url;

  await queue.enqueue({ type: 'ping' }); // args optional: the declared args accept undefined
  await queue.enqueue({ type: 'batch' });

  // @ts-expect-error wrong field type in args
  await queue.enqueue({ type: 'render', args: { reportId: 42 } });
  // @ts-expect-error missing required args
  await queue.enqueue({ type: 'render' });
  // @ts-expect-error args of another type
  await queue.enqueue({ type: 'render', args: { url: 'https://x' } });
  // @ts-expect-error a type that is not declared
  await queue.enqueue({ type: 'rendr', args: { reportId: 'r1' } });
  // @ts-expect-error result is typed: url is a string
  const n: number | undefined = job.result?.url;
  void n;

  const ids = await queue.enqueueGraph([
    { ref: 'fetch', type: 'fetch', args: { url: 'https://example.com' } },
    { ref: 'render', type: 'render', args: { reportId: 'r1' }, dependsOn: ['fetch'] },
    { ref: 'batch', type: 'batch' },
    { ref: 'ping', type: 'ping', parent: 'batch', dependsOn: ['render'] },
  ]);
  const renderId: number = ids.render;
  void renderId;

  await queue.enqueueGraph([
    { ref: 'fetch', type: 'fetch', args: { url: 'https://example.com' } },
    // @ts-expect-error each node's args are checked against its own type
    { ref: 'render', type: 'render', args: { url: 'https://example.com' }, dependsOn: ['fetch'] },
  ]);
  await queue.enqueueGraph([
    // @ts-expect-error an undeclared type in a graph
    { ref: 'x', type: 'unknown-type', args: {} },
  ]);
}
