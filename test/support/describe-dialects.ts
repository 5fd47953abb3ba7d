import type { Dialect } from '../../lib';
import { TestDatabase, availableDialects, wantedDialects } from './test-databases';

/**
 * Declares the same specs once per dialect, each against a database of its own, titled
 * `[postgres] …`, `[mysql] …`, `[sqlite] …` (the reporter counts by that prefix). A dialect
 * whose server global-setup could not reach is skipped, loudly; under CI=true global-setup
 * fails the run instead.
 */
export function describeDialects(
  title: string,
  body: (db: TestDatabase) => void,
  only: readonly Dialect[] = ['postgres', 'mysql', 'sqlite'],
): void {
  for (const dialect of wantedDialects().filter((d) => only.includes(d))) {
    const run = availableDialects().includes(dialect);
    (run ? describe : describe.skip)(`[${dialect}] ${title}`, () => {
      const db = new TestDatabase(dialect);
      beforeAll(() => db.create());
      body(db);
      // After the body's own afterAll hooks: Jest runs a block's afterAll hooks in the order they
      // were declared, so declared first, the drop came before the spec closed its apps, which
      // then shut down against a database gone (PostgreSQL's FORCE ends their connections).
      afterAll(() => db.drop());
    });
  }
}
