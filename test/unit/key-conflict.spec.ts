import { KeyConflictError } from '../../lib';
import { keyConflict } from '../../lib/enqueue/key-conflict';
import type { PreparedGraph } from '../../lib/enqueue/graph-enqueuer';

const graphOf = (keys: Array<string | null>) => ({ jobs: keys.map((key) => ({ key })) }) as unknown as PreparedGraph;
const pgUnique = Object.assign(new Error('duplicate key value violates unique constraint "jobs_job_key_uq"'), { code: '23505' });

describe('keyConflict', () => {
  it('a unique violation of a graph with keys: KeyConflictError naming them, the driver error as cause', () => {
    const err = keyConflict(pgUnique, graphOf(['a', null, 'b', 'c', 'd', 'e']));
    expect(err).toBeInstanceOf(KeyConflictError);
    expect(err).toMatchObject({ code: 'KEY_CONFLICT', keys: ['a', 'b', 'c', 'd', 'e'], cause: pgUnique });
    expect((err as Error).message).toMatch(/key "a", "b", "c" \(or one of 2 more\) was enqueued by a concurrent transaction/);
  });

  it('MySQL and SQLite unique violations too', () => {
    const mysql = Object.assign(new Error('Duplicate entry'), { errno: 1062 });
    const sqlite = Object.assign(new Error('UNIQUE constraint failed: jobs.job_key'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    for (const e of [mysql, { driverError: sqlite }]) expect(keyConflict(e, graphOf(['k']))).toBeInstanceOf(KeyConflictError);
  });

  it('other errors, and unique violations of a graph without keys, stay as they are', () => {
    const other = new Error('connection reset');
    expect(keyConflict(other, graphOf(['k']))).toBe(other);
    expect(keyConflict(pgUnique, graphOf([null, null]))).toBe(pgUnique);
  });
});
