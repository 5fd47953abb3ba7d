/**
 * Serializes async critical sections in one process. SQLite gives a DataSource one
 * connection, so two interleaved transactions on it would merge into one.
 */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
