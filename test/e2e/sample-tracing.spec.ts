import { Test } from '@nestjs/testing';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../../sample-app/app.module';
import { startSampleTracing } from '../../sample-app/observability/sample-tracing';
import { describeDialects } from '../support/describe-dialects';
import { isFinished, SampleAppClient } from './sample-app.client';

interface SpanLine {
  name: string;
  kind: number;
  spanId: string;
  attributes: Record<string, unknown>;
  links: Array<{ spanId: string; attributes: Record<string, unknown> }>;
}

/**
 * The sample app with SAMPLE_TRACING=file:<path>, as main.ts boots it: a pipeline's spans reach
 * the file by the app's shutdown, the attempts linked to their creation and along the DAG.
 */
describeDialects('sample app with tracing', (db) => {
  it('writes a producer span per enqueue and a consumer span per attempt, linked along the pipeline', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jq-sample-spans-'));
    const path = join(dir, 'spans.jsonl');
    const saved = { DATABASE_URL: process.env.DATABASE_URL, SAMPLE_DEMO: process.env.SAMPLE_DEMO };
    Object.assign(process.env, { DATABASE_URL: db.dialect === 'sqlite' ? `sqlite:${db.location}` : db.location, SAMPLE_DEMO: '0' });
    const tracing = await startSampleTracing({ exporter: 'file', path });
    try {
      const module = await Test.createTestingModule({ imports: [tracing.module(AppModule)] }).compile();
      const app = module.createNestApplication({ logger: ['error'] });
      await app.listen(0, '127.0.0.1');
      let ids: Record<string, number>;
      try {
        const http = new SampleAppClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
        const created = await http.post('/pipelines', { tenant: 'acme', sources: ['crm'] });
        expect(created.status).toBe(201);
        ids = created.body.jobs;
        expect(await http.until(ids.report, isFinished, undefined, 30_000)).toMatchObject({ state: 'done' });
      } finally {
        await app.close(); // the root module's shutdown hook ends the SDK: batched spans are written
      }
      const spans: SpanLine[] = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const producer = spans.find((s) => s.kind === 3 && s.attributes['messaging.batch.message_count'] === Object.keys(ids).length - 1)!;
      expect(producer).toBeDefined(); // one span for the pipeline's enqueueGraph (the container gets none)
      const attempt = (ref: string) => spans.find((s) => s.kind === 4 && s.attributes['messaging.message.id'] === String(ids[ref]))!;
      expect(attempt('render')).toMatchObject({ name: 'process render', attributes: { 'job_queue.outcome': 'done', 'job_queue.group': 'acme' } });
      expect(attempt('render').links).toEqual([
        { traceId: expect.any(String), spanId: producer.spanId, attributes: { 'job_queue.link': 'created' } },
        { traceId: expect.any(String), spanId: attempt('aggregate').spanId, attributes: { 'job_queue.link': 'upstream', 'messaging.message.id': String(ids.aggregate) } },
      ]);
    } finally {
      await tracing.shutdown();
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
