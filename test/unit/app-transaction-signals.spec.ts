import type { EntityManager } from 'typeorm';
import { AppTransactionSignals } from '../../lib/events/app-transaction-signals';
import type { JobSignal } from '../../lib/events/job-signal';

/** A QueryRunner as TypeORM drives it: depth counts nested transactions (savepoints above 1). */
function fakeRunner() {
  const dataSource = { subscribers: [] as unknown[] };
  return { dataSource, isTransactionActive: true, transactionDepth: 1 };
}

const signal = (id: number): JobSignal => ({ event: 'enqueued', id, at: 0 });

describe('AppTransactionSignals', () => {
  it('releases on the outermost commit, drops on rollback, and goes at once without a transaction', () => {
    const released: number[][] = [];
    const held = new AppTransactionSignals((s) => released.push(s.map((x) => x.id)));
    const runner = fakeRunner();
    held.hold({ queryRunner: runner } as unknown as EntityManager, [signal(1)]);
    expect(runner.dataSource.subscribers).toEqual([held]);
    expect(released).toEqual([]);
    runner.isTransactionActive = false;
    runner.transactionDepth = 0;
    held.afterTransactionCommit({ queryRunner: runner as never });
    expect(released).toEqual([[1]]);

    const other = fakeRunner();
    held.hold({ queryRunner: other } as unknown as EntityManager, [signal(2)]);
    other.isTransactionActive = false;
    held.afterTransactionRollback({ queryRunner: other as never });
    expect(released).toEqual([[1]]);

    held.hold({ queryRunner: undefined } as unknown as EntityManager, [signal(3)]);
    expect(released).toEqual([[1], [3]]);
  });

  it('detach takes it off every DataSource it was attached to', () => {
    const released: number[] = [];
    const held = new AppTransactionSignals((s) => released.push(...s.map((x) => x.id)));
    const r = fakeRunner();
    r.dataSource.subscribers.push('the app subscriber');
    held.hold({ queryRunner: r } as unknown as EntityManager, [signal(1)]);
    expect(r.dataSource.subscribers).toEqual(['the app subscriber', held]);
    held.detach();
    expect(r.dataSource.subscribers).toEqual(['the app subscriber']);
    held.detach();
    expect(r.dataSource.subscribers).toEqual(['the app subscriber']);
  });

  it('a rolled-back savepoint drops only what was written inside it; a released one keeps it', () => {
    const released: number[] = [];
    const held = new AppTransactionSignals((s) => released.push(...s.map((x) => x.id)));
    const r = fakeRunner();
    const manager = { queryRunner: r } as unknown as EntityManager;
    held.hold(manager, [signal(1)]); // depth 1
    r.transactionDepth = 2; // SAVEPOINT
    held.hold(manager, [signal(2)]);
    r.transactionDepth = 1; // RELEASE SAVEPOINT
    held.afterTransactionCommit({ queryRunner: r as never });
    r.transactionDepth = 2; // another SAVEPOINT
    held.hold(manager, [signal(3)]);
    r.transactionDepth = 1; // ROLLBACK TO SAVEPOINT
    held.afterTransactionRollback({ queryRunner: r as never });
    r.transactionDepth = 0;
    r.isTransactionActive = false; // COMMIT
    held.afterTransactionCommit({ queryRunner: r as never });
    expect(released).toEqual([1, 2]);
  });
});
