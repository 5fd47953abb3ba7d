import { firstRetentionLimit, nextRetentionLimit, SQLITE_FIRST_RETENTION_LIMIT } from '../../lib/sweeps/retention-limit';
import { SQLITE_RETENTION_BATCH_BYTES } from '../../lib/sweeps/retention.sql';

const MB = 1024 * 1024;

describe('retention batch limits', () => {
  it('starts SQLite with a few rows, every other dialect with the batch size', () => {
    expect(firstRetentionLimit(true, 500)).toBe(SQLITE_FIRST_RETENTION_LIMIT);
    expect(firstRetentionLimit(true, 3)).toBe(3);
    expect(firstRetentionLimit(false, 500)).toBe(500);
  });

  it('looks next at as many rows as fit the byte budget at the last mean size', () => {
    expect(SQLITE_RETENTION_BATCH_BYTES).toBe(8 * MB);
    expect(nextRetentionLimit(500, 4, 8 * MB)).toBe(4); // 2 MB rows
    expect(nextRetentionLimit(500, 1, 40 * MB)).toBe(1); // one row over the budget: one at a time
    expect(nextRetentionLimit(500, 16, 16 * 1024)).toBe(500); // small rows: the batch size
    expect(nextRetentionLimit(50, 16, 16 * 1024)).toBe(50);
  });

  it('goes back to the batch size when nothing was measured', () => {
    expect(nextRetentionLimit(500, 0, 0)).toBe(500);
    expect(nextRetentionLimit(500, 500, 0)).toBe(500); // not SQLite
  });
});
