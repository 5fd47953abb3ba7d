import { InvalidJobError } from '../errors/job.errors';
import { MAX_INT } from '../enqueue/normalize-job';
import { isStorableTime, STORABLE_TIME } from '../options/storable-time';

/** What `reschedule` may change on a job that has not started: when it may start, and its priority. */
export interface RescheduleInput {
  /** The earliest start (a time in the past means now). */
  runAfter?: Date;
  /** Higher runs first, as at enqueue (0 to 2,147,483,647). */
  priority?: number;
}

const FIELDS = ['runAfter', 'priority'];

/** Checks a reschedule's input: a plain object with one or both fields, each as enqueue takes it. Throws InvalidJobError. */
export function normalizeReschedule(input: unknown): { runAfter: Date | null; priority: number | null } {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || Object.getPrototypeOf(input) !== Object.prototype) {
    throw new InvalidJobError('reschedule', 'a plain object { runAfter?, priority? }', input);
  }
  const unknown = Object.keys(input).filter((k) => !FIELDS.includes(k));
  if (unknown.length) throw new InvalidJobError(unknown[0], `absent: reschedule changes only ${FIELDS.join(' and ')}`, (input as Record<string, unknown>)[unknown[0]]);
  const { runAfter, priority } = input as { runAfter?: unknown; priority?: unknown };
  if (runAfter === undefined && priority === undefined) throw new InvalidJobError('reschedule', `at least one of ${FIELDS.join(', ')}`, input);
  if (runAfter !== undefined && (!(runAfter instanceof Date) || isNaN(runAfter.getTime()) || !isStorableTime(runAfter))) {
    throw new InvalidJobError('runAfter', `a valid Date ${STORABLE_TIME}`, runAfter);
  }
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > MAX_INT)) {
    throw new InvalidJobError('priority', `an integer from 0 to ${MAX_INT}`, priority);
  }
  return { runAfter: (runAfter as Date | undefined) ?? null, priority: (priority as number | undefined) ?? null };
}
