import { ClaimService } from '../../lib';
import { postgresClaimStatement } from '../../lib/claim/postgres.claim';
import type { ClaimRequest } from '../../lib/claim/claim-request';
import { sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { numbers } from '../support/number-rows';
import { mysqlRowsRead } from '../support/plan-reads';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { placeRotationCursor } from '../support/rotation-cursor';

/** 100,000 tenants with one ready job each, as a drain of one-job groups starts. */
const GROUPS = 100_000;
const SLOTS = 20;

/**
 * A rotation claim at 100,000 one-job groups costs what its slots cost, never what the groups
 * cost: counted in statements (every dialect), in rows read (MariaDB: Handler_read_*) and in
 * shared buffers (PostgreSQL's claim function, EXPLAIN ANALYZE), not timed, so that it holds on a
 * loaded machine. A plan that read every group, or a walk a statement per group passed over,
 * reads ~100,000 rows where these read a few hundred. Two positions of the cursor: mid-way, and
 * at the end with the first half drained, so that the walk wraps round over the drained groups'
 * left-over index entries (InnoDB's delete-marked ones, PostgreSQL's dead ones). With and
 * without per-group caps, which take the rotation through claimUnderLimits.
 */
describeDialects(`rotation claims at ${GROUPS.toLocaleString('en')} one-job groups`, (db) => {
  let app: QueueApp;
  let claims: ClaimService;
  const key = (i: number) => `g${String(i).padStart(6, '0')}`;

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
    claims = app.module.get(ClaimService);
    const d = app.db.dialect.name;
    const now = d === 'postgres' ? 'now()' : d === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
    const group = d === 'postgres' ? `'g' || lpad((i + ?)::text, 6, '0')` : d === 'mysql' ? `CONCAT('g', LPAD(i + ?, 6, '0'))` : `'g' || substr('000000' || CAST(i + ? AS INTEGER), -6)`;
    // numbers() goes to 99,999: two halves of 50,000 (keys g000000 to g099999).
    for (const offset of [-1, 49_999]) {
      const text = `INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, max_attempts, created_at, updated_at)
        SELECT 't', '{}', 'ready', ${group}, 1, 0, ${now}, 3, ${now}, ${now} FROM `;
      const from = numbers(app, 50_000).render(d).text;
      await app.rows(d === 'postgres' ? `${text.replace('?', '$1')}${from}` : `${text}${from}`, [offset]);
    }
    await app.rows(d === 'sqlite' ? 'ANALYZE' : d === 'mysql' ? 'ANALYZE TABLE jobs' : 'ANALYZE jobs');
    expect(await app.count(`state = 'ready'`)).toBe(GROUPS);
  }, 300_000);
  afterAll(() => app?.close());

  /** Statements and rows read by one rotation claim of SLOTS, in a transaction rolled back. */
  async function measure(cursor: string, extra: Partial<ClaimRequest>): Promise<{ claimed: string[]; statements: number; read: number | undefined; buffers?: number }> {
    await placeRotationCursor(app.db, ['t'], cursor, 1);
    const request: ClaimRequest = { owner: 'w1', types: ['t'], quotas: [], rotation: SLOTS, leaseTtlMs: 30_000, ...extra };
    let statements = 0;
    const counting = (tx: SqlExecutor): SqlExecutor => ({ dialect: tx.dialect, run: (s) => (statements++, tx.run(s)) });
    const rollback = new Error('rollback');
    let claimed: string[] = [];
    let read: number | undefined;
    const claim = async (tx: SqlExecutor) => (claimed = (await claims.claimWithin(counting(tx), request, true)).map((j) => j.group));
    if (db.dialect === 'mysql') {
      // One connection, its session counters; the claim's writes are rolled back.
      const runner = await mysqlRowsRead(app, async (tx) => {
        await tx.run(sql`START TRANSACTION`);
        try {
          await claim(tx);
        } finally {
          await tx.run(sql`ROLLBACK`);
        }
      });
      read = runner.read;
    } else {
      await app.db
        .transaction(async (tx) => {
          await claim(tx);
          throw rollback;
        }, { retries: 0 })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
    }
    // Under caps PostgreSQL claims in several statements, counted above; the buffers are the function's.
    return { claimed, statements, read, buffers: extra.limits ? undefined : await pgBuffers(request) };
  }

  /**
   * PostgreSQL without caps: the shared buffers the claim function's call reads, nested statements
   * included (dead index entries of drained groups count here, not among the tuples fetched).
   */
  async function pgBuffers(request: ClaimRequest): Promise<number | undefined> {
    const call = db.dialect === 'postgres' ? postgresClaimStatement(request) : null;
    if (!call) return undefined;
    const { text, params } = call.render('postgres');
    const qr = app.dataSource.createQueryRunner();
    try {
      await qr.startTransaction();
      const [row] = (await qr.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params)) as Array<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>;
      const plan = row['QUERY PLAN'][0].Plan;
      return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
  }

  // Bounds well above what a claim of SLOTS costs here (MariaDB reads ~10-20 rows per group it
  // takes; SQLite probes a group in 2-3 statements) and far below one read per group.
  const STATEMENTS = { postgres: 12, mysql: 10, sqlite: 4 * (SLOTS + 1) + 10 };
  const READ = 60 * SLOTS;
  const BUFFERS = 60 * SLOTS;

  it.each([
    ['no caps', {}],
    ['per-group caps', { limits: { groups: { g000007: 1, elsewhere: 2 } } }],
  ])('costs what its slots cost, whatever the groups (%s)', async (_label, extra) => {
    const mid = await measure(key(GROUPS / 2), extra);
    expect(mid.claimed).toHaveLength(SLOTS);
    expect(mid.claimed[0] > key(GROUPS / 2)).toBe(true);
    expect(mid.statements).toBeLessThanOrEqual(STATEMENTS[db.dialect]);
    if (mid.read !== undefined) expect(mid.read).toBeLessThan(READ);

    // The first half drained (its index entries left behind), the cursor near the end: the walk
    // takes the last groups and wraps round past the drained ones to the first still ready.
    await app.rows(`UPDATE jobs SET state = 'done' WHERE group_key < '${key(GROUPS / 2)}'`);
    try {
      const end = await measure(key(GROUPS - 5), extra);
      expect(end.claimed).toHaveLength(SLOTS);
      expect(end.claimed).toContain(key(GROUPS / 2));
      expect(end.statements).toBeLessThanOrEqual(STATEMENTS[db.dialect]);
      if (end.read !== undefined) expect(end.read).toBeLessThan(READ);
      if (mid.buffers !== undefined) expect(mid.buffers).toBeLessThan(BUFFERS);
      // Not bounded: PostgreSQL's wrapped walk steps over the drained groups' dead index entries
      // until vacuum removes them (~1,700 buffers and 55-85 ms for 50,000 here, once a round).
      process.stdout.write(
        `[${db.dialect}] ${_label}: mid ${mid.statements} statements, ${mid.read ?? 'n/a'} rows read, ${mid.buffers ?? 'n/a'} buffers; ` +
          `wrapped ${end.statements}, ${end.read ?? 'n/a'}, ${end.buffers ?? 'n/a'}\n`,
      );
    } finally {
      await app.rows(`UPDATE jobs SET state = 'ready' WHERE group_key < '${key(GROUPS / 2)}'`);
    }
  }, 120_000);
});
