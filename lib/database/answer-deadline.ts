import { DatabaseNoAnswerError } from '../errors';

/**
 * `answer`, unless it takes longer than `timeoutMs`: then `close` is called (it closes the
 * connection's socket, so the statement in flight fails and the pool drops the connection) and
 * this rejects with DatabaseNoAnswerError. `timeoutMs` 0: no deadline.
 */
export async function withinDeadline<T>(answer: Promise<T>, timeoutMs: number, close: () => void): Promise<T> {
  if (timeoutMs <= 0) return answer;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // First, so that this settles the race even when closing fails the statement at once;
      // the statement's own failure is then this one's.
      reject(new DatabaseNoAnswerError(timeoutMs));
      answer.catch(() => undefined);
      try {
        close();
      } catch {
        // A timer's throw would end the process; the connection is the pool's to drop then.
      }
    }, timeoutMs);
  });
  try {
    return await Promise.race([answer, expired]);
  } finally {
    clearTimeout(timer);
  }
}
