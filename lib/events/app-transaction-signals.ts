import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import type { JobSignal } from './job-signal';

interface Held {
  /** The runner's transaction depth when the jobs were written (1 = outermost, more = a savepoint). */
  depth: number;
  signals: JobSignal[];
}

type Runner = Omit<QueryRunner, 'transactionDepth'> & { transactionDepth?: number };

/**
 * `enqueue(…, { manager })` writes inside the application's transaction, whose commit we do not
 * see. The signals wait here, keyed by the transaction's QueryRunner, and are released by a
 * TypeORM transaction subscriber when the outermost transaction commits; a rollback (of the
 * transaction, or of the savepoint they were written in) drops them. A manager outside any
 * transaction has committed already (autocommit): its signals go at once.
 */
export class AppTransactionSignals implements EntitySubscriberInterface {
  private readonly held = new WeakMap<QueryRunner, Held[]>();
  private readonly attached = new Set<DataSource>();

  constructor(private readonly release: (signals: JobSignal[]) => void) {}

  hold(manager: EntityManager, signals: JobSignal[]): void {
    const runner = manager.queryRunner as Runner | undefined;
    if (!runner?.isTransactionActive) return this.release(signals);
    this.attach(runner.dataSource);
    const list = this.held.get(runner) ?? [];
    list.push({ depth: runner.transactionDepth ?? 1, signals });
    this.held.set(runner, list);
  }

  afterTransactionCommit(event: { queryRunner: QueryRunner }): void {
    const runner = event.queryRunner as Runner;
    const list = this.held.get(runner);
    if (!list) return;
    if (runner.isTransactionActive) {
      // A savepoint was released: its writes now belong to the enclosing level.
      const depth = runner.transactionDepth ?? 1;
      for (const h of list) h.depth = Math.min(h.depth, depth);
      return;
    }
    this.held.delete(runner);
    this.release(list.flatMap((h) => h.signals));
  }

  afterTransactionRollback(event: { queryRunner: QueryRunner }): void {
    const runner = event.queryRunner as Runner;
    const list = this.held.get(runner);
    if (!list) return;
    if (!runner.isTransactionActive) {
      this.held.delete(runner);
      return;
    }
    const depth = runner.transactionDepth ?? 1; // after the savepoint's rollback
    this.held.set(runner, list.filter((h) => h.depth <= depth));
  }

  /**
   * Off every DataSource it was attached to (at shutdown): an application's DataSource outlives
   * the module, and kept each closed module's subscriber, and the closed module with it.
   * Signals still held (a transaction open across the shutdown) are dropped: at most once.
   */
  detach(): void {
    for (const dataSource of this.attached) {
      const at = dataSource.subscribers.indexOf(this);
      if (at >= 0) dataSource.subscribers.splice(at, 1);
    }
    this.attached.clear();
  }

  private attach(dataSource: DataSource): void {
    if (this.attached.has(dataSource)) return;
    this.attached.add(dataSource);
    dataSource.subscribers.push(this);
  }
}
