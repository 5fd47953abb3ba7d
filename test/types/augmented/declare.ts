// The augmentation an application writes once. Global for the whole program, hence its own tsconfig.
import 'nestjs-sql-job-queue';

declare module 'nestjs-sql-job-queue' {
  interface JobTypes {
    fetch: { args: { url: string }; result: { html: string } };
    render: { args: { reportId: string }; result: { url: string }; upstream: { fetch: 'fetch' } };
    ping: { args?: { note?: string }; result: null };
    batch: { result: null };
  }
}
