import { swapSpan, swapText } from '../../lib/migrations/frozen-text';
import { jobQueueMigrations } from '../../lib/migrations';

describe('swapText (migrations derived from frozen texts)', () => {
  it('replaces the first occurrence and nothing else', () => {
    expect(swapText(99, 'a dep b dep', 'dep', 'DEP')).toBe('a DEP b dep');
  });

  it('throws, naming the migration, when the frozen text no longer contains what it replaces', () => {
    expect(() => swapText(22, 'CREATE FUNCTION f()', 'GROUP BY d.job_id),', 'x')).toThrow(/^migration 22: text not found: GROUP BY d\.job_id\),/);
  });

  it("gives PostgreSQL migration 22 the three completes with their dependents in id order, and takes them back", () => {
    const m22 = jobQueueMigrations('postgres').find((m) => m.version === 22) as unknown as { upSql: string[]; downSql: string[] };
    const names = (sql: string[]) => sql.map((s) => /FUNCTION (\w+\([^)]*\))/.exec(s)![1]);
    const functions = ['job_queue_complete(text, bigint[], text[], boolean)', 'job_queue_complete(text, bigint[], text[], boolean, text[])', 'job_queue_complete_views(text, bigint[], text[], boolean, text[])'];
    expect(names(m22.upSql)).toEqual(functions);
    expect(names(m22.downSql)).toEqual(functions);
    for (const up of m22.upSql) {
      expect(up).toMatch(/^CREATE OR REPLACE FUNCTION/);
      expect(up).toContain('dep AS MATERIALIZED (');
      expect(up).toContain('GROUP BY d.job_id ORDER BY d.job_id),');
    }
    for (const down of m22.downSql) {
      expect(down).toMatch(/^CREATE OR REPLACE FUNCTION/);
      expect(down).not.toContain('MATERIALIZED');
    }
  });
});

describe('swapSpan (a whole statement of a frozen text)', () => {
  it('replaces from the start marker through the first end marker after it', () => {
    expect(swapSpan(99, 'a; BEGIN x; y END; b END;', 'BEGIN', 'END;', 'Z;')).toBe('a; Z; b END;');
  });

  it('throws, naming the migration, when a marker is missing', () => {
    expect(() => swapSpan(26, 'a END b', 'BEGIN', 'END', 'x')).toThrow(/^migration 26: text not found: BEGIN/);
    expect(() => swapSpan(26, 'END a BEGIN b', 'BEGIN', 'END', 'x')).toThrow(/^migration 26: text not found after its start: END/);
  });

  it("gives PostgreSQL migration 26 a rotation claim that leases through job_queue_claim, and takes it back", () => {
    const m26 = jobQueueMigrations('postgres').find((m) => m.version === 26) as unknown as { upSql: string[]; downSql: string[] };
    const [up] = m26.upSql;
    expect(up).toMatch(/^CREATE OR REPLACE FUNCTION job_queue_claim_rotation\(/);
    expect(up).toContain('RETURN QUERY SELECT * FROM job_queue_claim($1, $2, v_q_groups, v_q_limits, 0, $4, $5);\n    END');
    expect(up).not.toContain('UPDATE jobs');
    expect(m26.downSql[0]).toContain('FOR UPDATE SKIP LOCKED');
    expect(m26.downSql[0]).toContain('RETURNING jobs.*;');
  });
});
