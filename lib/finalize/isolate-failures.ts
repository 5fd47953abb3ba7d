/** What to do after a batch write failed. */
export type WriteErrorAction =
  /** Write the same items again (the caller has waited as it sees fit). */
  | 'retry'
  /** The database refused something in the batch: halve it until the item at fault is alone. */
  | 'split'
  /** Leave these items unwritten (their leases expire and the reclaim sweep takes them). */
  | 'give-up';

export interface IsolatedWriter<T, R> {
  /** Writes `items` in one transaction, all or nothing. */
  write(items: T[]): Promise<R>;
  /** Classifies a failed write of `items`; `attempt` counts failures of this same set, from 0. */
  onError(err: unknown, items: T[], attempt: number): Promise<WriteErrorAction> | WriteErrorAction;
  /** Called after each successful write, in order, so callers can settle those items at once. */
  onWritten?(items: T[], result: R): void;
}

export interface IsolationOutcome<T> {
  /** Items the database refused on their own: each with the error of its last write. */
  refused: Array<{ item: T; error: unknown }>;
  /** Items left unwritten after a `give-up`. */
  abandoned: Array<{ items: T[]; error: unknown }>;
  /** Transactions issued, the first included. */
  writes: number;
}

/**
 * Writes a batch so that one item the database refuses (a row a trigger or constraint rejects,
 * a value over a server limit) fails alone: a refused write is halved, and each half written
 * again, until the refused item stands alone. One bad item among n costs about 2·log2(n) more
 * transactions, and every other item is written exactly once, in the same pass. Transient
 * errors are the caller's to retry (`onError` → `retry`), on the same items.
 */
export async function writeIsolatingFailures<T, R>(items: T[], writer: IsolatedWriter<T, R>): Promise<IsolationOutcome<T>> {
  const outcome: IsolationOutcome<T> = { refused: [], abandoned: [], writes: 0 };
  // A stack of sets still to write; the left half is written first, so items keep their order.
  const todo: T[][] = items.length ? [items] : [];
  while (todo.length) {
    const set = todo.pop()!;
    for (let attempt = 0; ; attempt++) {
      outcome.writes++;
      try {
        const result = await writer.write(set);
        writer.onWritten?.(set, result);
        break;
      } catch (err) {
        const action = await writer.onError(err, set, attempt);
        if (action === 'retry') continue;
        if (action === 'give-up') outcome.abandoned.push({ items: set, error: err });
        else if (set.length === 1) outcome.refused.push({ item: set[0], error: err });
        else {
          const mid = Math.ceil(set.length / 2);
          todo.push(set.slice(mid), set.slice(0, mid));
        }
        break;
      }
    }
  }
  return outcome;
}
