/**
 * Span names and attributes, after the OpenTelemetry messaging conventions. The queue is the
 * "messaging system" `nestjs-sql-job-queue`; a job type is its destination, a job id its message id.
 */
export const MESSAGING_SYSTEM = 'nestjs-sql-job-queue';

export const ATTR = {
  system: 'messaging.system.name',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  batchCount: 'messaging.batch.message_count',
  /** Ours: the job's group (tenant), attempt number, attempt budget, graph ref and outcome. */
  group: 'job_queue.group',
  attempt: 'job_queue.attempt',
  maxAttempts: 'job_queue.max_attempts',
  ref: 'job_queue.ref',
  outcome: 'job_queue.outcome',
  abortReason: 'job_queue.abort_reason',
  /** A snoozed attempt's delay before the job runs again, in ms. */
  snoozeMs: 'job_queue.snooze_ms',
  /** On a consumer span's links: `created` (the enqueue) or `upstream` (a dependency's attempt). */
  link: 'job_queue.link',
} as const;

/** `create <type>`, or `create` for one span over a graph of several types. */
export function producerSpanName(types: readonly string[]): string {
  const first = types[0];
  return types.every((t) => t === first) && first !== undefined ? `create ${first}` : 'create';
}

export function consumerSpanName(type: string): string {
  return `process ${type}`;
}

/**
 * What a finished attempt means for the job: `done`, `retrying` (another attempt follows),
 * `failed` (for good), `snoozed` (runs again later, the attempt given back) or `aborted`
 * (cancelled, lease lost, shutdown: nothing was recorded).
 */
export function attemptOutcome(
  outcome: { kind: 'done' } | { kind: 'failed'; final: boolean } | { kind: 'snoozed' } | { kind: 'aborted' },
  attempt: number,
  maxAttempts: number,
): 'done' | 'retrying' | 'failed' | 'snoozed' | 'aborted' {
  if (outcome.kind !== 'failed') return outcome.kind;
  return outcome.final || attempt >= maxAttempts ? 'failed' : 'retrying';
}
