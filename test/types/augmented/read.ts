import type { JobQueueService } from 'nestjs-sql-job-queue';

export async function readFixtures(queue: JobQueueService): Promise<void> {
  const rendered = await queue.waitFor<'render'>(1);
  const url: string | undefined = rendered.result?.url;
  void url;

  const fetched = await queue.get<'fetch'>(2);
  const html: string | undefined = fetched?.result?.html;
  void html;
  // @ts-expect-error the fetch result has no url
  void fetched?.result?.url;

  // Without a type argument: a union of every declared type, narrowed by `type` (checked, not trusted).
  const any = await queue.get(3);
  if (any?.type === 'render') {
    const reportId: string = any.args.reportId;
    void reportId;
  }
  // @ts-expect-error not narrowed: args could be another type's
  void any?.args.reportId;

  // @ts-expect-error an undeclared type argument
  await queue.waitFor<'nope'>(4);

  // @ts-expect-error the loose explicit-generics form closes once JobTypes is declared
  await queue.get<{ a: number }, { b: string }>(5);
}
