import { DataSource } from 'typeorm';
import type { TestDatabase } from './test-databases';

/**
 * Runs `work` while another MariaDB connection holds a consistent snapshot open, as
 * `mysqldump --single-transaction` or a long report does: purge then keeps every row version
 * newer than the snapshot, delete-marked index entries included.
 */
export async function withHeldSnapshot<T>(db: TestDatabase, work: () => Promise<T>): Promise<T> {
  const snapshot = new DataSource({ type: 'mysql', url: db.location, poolSize: 1 });
  await snapshot.initialize();
  const runner = snapshot.createQueryRunner();
  try {
    await runner.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
    await runner.query('SELECT COUNT(*) FROM jobs');
    return await work();
  } finally {
    await runner.query('COMMIT').catch(() => undefined);
    await runner.release();
    await snapshot.destroy();
  }
}
