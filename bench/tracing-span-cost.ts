/**
 * `node dist/bench/tracing-span-cost.js [attempts]`: the Node CPU per attempt of tracing without a
 * database, to separate what the SDK itself costs from what the queue adds around it. The bench's
 * SDK (tracing-sdk.ts: BasicTracerProvider, BatchSpanProcessor at its defaults, a dropping
 * exporter, AsyncLocalStorage context manager, W3C propagator), every span recorded. Rows,
 * interleaved round by round, each attempt a no-op async handler run to its outcome:
 * - bare: the attempt alone (what an untraced worker runs);
 * - sdk span: the least a consumer span can be, startSpan (no attributes, no links) + end;
 * - sdk consumer span: a span as the issue asks for it (8 messaging attributes, one link, the
 *   handler run inside its context, an outcome attribute), written against the API directly;
 * - ours: OpenTelemetryJobQueueInstrumentation.runAttempt with a stored creation carrier, plus the
 *   completed attempt's carrier (what a traced worker does per attempt in Node, minus the SQL).
 */
import { context, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { OpenTelemetryJobQueueInstrumentation } from 'nestjs-sql-job-queue/tracing';
import type { RunOutcome } from '../lib/handlers/run-job';
import { installBenchTracing } from './lib/ours/tracing-sdk';

type Row = 'bare' | 'sdk span' | 'sdk consumer span' | 'ours';
// TRACING_ROWS=ours,bare narrows a run (e.g. for node --cpu-prof).
const ROWS = (['bare', 'sdk span', 'sdk consumer span', 'ours'] as Row[]).filter((r) => !process.env.TRACING_ROWS || process.env.TRACING_ROWS.split(',').includes(r));

async function handler(): Promise<RunOutcome> {
  await Promise.resolve();
  return { kind: 'done', resultJson: 'null' } as RunOutcome;
}

async function main(): Promise<void> {
  const attempts = Number(process.argv[2] ?? 100_000);
  const sdk = installBenchTracing();
  const tracer = trace.getTracer('bench');
  const ours = new OpenTelemetryJobQueueInstrumentation();
  // A creation carrier as an enqueue stores it.
  const producer = tracer.startSpan('create noop', { kind: SpanKind.PRODUCER });
  const created = JSON.stringify({ traceparent: `00-${producer.spanContext().traceId}-${producer.spanContext().spanId}-01` });
  producer.end();
  const job = { id: 1, type: 'noop', group: 'default', attempts: 1, maxAttempts: 3 };
  const stored = { created, upstream: [] };
  const link = { context: producer.spanContext(), attributes: { 'job_queue.link': 'created' } };

  const one: Record<Row, (i: number) => Promise<unknown>> = {
    bare: () => handler(),
    'sdk span': async () => {
      const span = tracer.startSpan('process noop');
      const outcome = await handler();
      span.end();
      return outcome;
    },
    'sdk consumer span': async (i) => {
      const span = tracer.startSpan(
        'process noop',
        {
          kind: SpanKind.CONSUMER,
          links: [link],
          attributes: {
            'messaging.system.name': 'nestjs-sql-job-queue',
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.destination.name': 'noop',
            'messaging.message.id': String(i),
            'job_queue.group': 'default',
            'job_queue.attempt': 1,
            'job_queue.max_attempts': 3,
          },
        },
        ROOT_CONTEXT,
      );
      const outcome = await context.with(trace.setSpan(ROOT_CONTEXT, span), handler);
      span.setAttribute('job_queue.outcome', 'done');
      span.end();
      return outcome;
    },
    ours: (i) => ours.runAttempt({ ...job, id: i }, stored, handler),
  };

  async function measure(row: Row, n: number): Promise<number> {
    const start = process.cpuUsage();
    for (let i = 0; i < n; i += 10) {
      // Ten in flight, as a worker at concurrency 10; a turn of the loop between, for the exporter.
      await Promise.all(Array.from({ length: 10 }, (_, k) => one[row](i + k)));
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    const used = process.cpuUsage(start);
    return (used.user + used.system) / n; // µs per attempt
  }

  for (const row of ROWS) await measure(row, 20_000); // warm-up
  const results: Record<Row, number[]> = { bare: [], 'sdk span': [], 'sdk consumer span': [], ours: [] };
  for (let round = 0; round < 5; round++) for (const row of ROWS) results[row].push(await measure(row, attempts));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const bare = results.bare.length ? median(results.bare) : 0;
  for (const row of ROWS) {
    if (!results[row].length) continue;
    const m = median(results[row]);
    console.log(`${row.padEnd(18)} ${m.toFixed(1).padStart(6)} µs/attempt (+${(m - bare).toFixed(1)} over bare)  rounds ${results[row].map((x) => x.toFixed(1)).join(', ')}`);
  }
  console.log(`exported ${sdk.exporter.exported} spans`);
  await sdk.uninstall();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
