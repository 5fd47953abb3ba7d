// No augmentation of JobTypes: everything stays as loose as before typed payloads.
import { JobContext, JobHandler, type GraphNode, type JobQueueService } from 'nestjs-sql-job-queue';

export class LooseHandlers {
  @JobHandler('anything')
  async run(args: { whatever: number }, ctx: JobContext): Promise<{ anything: boolean }> {
    const up = await ctx.upstream<{ a: { n: number } }>();
    void up.a.n;
    return { anything: args.whatever > 0 };
  }

  @JobHandler('other', { timeoutMs: 1000 })
  other(args: string): number {
    return args.length;
  }
}

export async function looseFixtures(queue: JobQueueService, dynamicType: string): Promise<void> {
  const job = await queue.enqueue({ type: dynamicType, args: { any: 'thing' } });
  const args: unknown = job.args;
  void args;
  await queue.enqueue({ type: 'x' });
  // As before typed payloads, the args type is inferred from what is passed.
  const inferred = await queue.enqueue({ type: 'x', args: { n: 1 } });
  const n1: number = inferred.args.n;
  void n1;
  // @ts-expect-error and checked: n is a number
  const s1: string = inferred.args.n;
  void s1;
  const typed = await queue.enqueue<{ n: number }, { m: string }>({ type: 'x', args: { n: 1 } });
  const n: number = typed.args.n;
  void n;
  const nodes: GraphNode[] = [{ ref: 'a', type: dynamicType, args: 1 }];
  await queue.enqueueGraph(nodes);
  const got = await queue.get<{ n: number }, { m: string }>(1);
  const m: string | undefined = got?.result?.m;
  void m;
  const waited = await queue.waitFor(1);
  const result: unknown = waited.result;
  void result;

  // @ts-expect-error still checked without augmentation: type must be a string
  await queue.enqueue({ type: 1 });
  // @ts-expect-error and options keep their types
  await queue.enqueue({ type: 'x', priority: 'high' });
}
