/**
 * setTimeout's ceiling (2^31 − 1 ms, 24.8 days). A longer delay is not refused by Node: it
 * fires after 1 ms, with a TimeoutOverflowWarning, so every timeout given in ms is checked
 * against it up front.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Whether `ms` is an integer number of milliseconds from `min` that a timer can wait (pure). */
export function isTimerMs(ms: unknown, min = 0): ms is number {
  return typeof ms === 'number' && Number.isInteger(ms) && ms >= min && ms <= MAX_TIMER_MS;
}
