import { z } from 'zod';
import { JobContext, JobHandler } from 'nestjs-sql-job-queue';

export class GoodHandlers {
  @JobHandler('fetch', { maxAttempts: 3 })
  async fetch(args: { url: string }): Promise<{ html: string }> {
    return { html: args.url };
  }

  @JobHandler('render')
  async render(args: { reportId: string }, ctx: JobContext<'render'>): Promise<{ url: string }> {
    const upstream = await ctx.upstream();
    const html: string = upstream.fetch.html; // typed from JobTypes.render.upstream
    // @ts-expect-error no such upstream ref declared
    void upstream.other;
    return { url: `${args.reportId}:${html.length}` };
  }

  @JobHandler('ping')
  ping(): null {
    return null; // sync handlers and handlers that ignore their args are fine
  }

  @JobHandler('batch')
  async batch(_args: undefined, ctx: JobContext): Promise<null> {
    void ctx.id; // the untyped JobContext is accepted too
    return null;
  }
}

export class SchemaHandlers {
  @JobHandler('fetch', { schema: z.object({ url: z.string().url() }) })
  async fetch(args: { url: string }): Promise<{ html: string }> {
    return { html: args.url };
  }

  // @ts-expect-error the schema's output does not match JobTypes.fetch.args
  @JobHandler('fetch', { schema: z.object({ url: z.number() }) })
  async wrongSchema(args: { url: string }): Promise<{ html: string }> {
    return { html: args.url };
  }
}

export class BadHandlers {
  // @ts-expect-error the parameter type does not match JobTypes.render.args
  @JobHandler('render')
  async wrongArgs(args: { reportId: number }): Promise<{ url: string }> {
    return { url: String(args.reportId) };
  }

  // @ts-expect-error the return type does not match JobTypes.render.result
  @JobHandler('render')
  async wrongResult(args: { reportId: string }): Promise<{ href: string }> {
    return { href: args.reportId };
  }

  // @ts-expect-error an undeclared job type
  @JobHandler('rendr')
  async typo(): Promise<null> {
    return null;
  }
}
