'use strict';
/**
 * narrow-queue-ceiling.cjs — the SQL ceiling of our PostgreSQL schema against prototypes of a
 * narrow queue table (issue 15; bench/HISTORY.md "Prototype: a narrow queue table, measured").
 *
 * What it measures. For each variant and batch size: a fresh scratch database
 * (jq_proto_<variant>_<pid>, dropped afterwards), N no-op jobs enqueued in chunks of 1,000
 * (one transaction each, like enqueueGraph), then ONE connection runs the loop of
 * bench/lib/ours/ceiling-subject.ts with the same statement text for every variant:
 *   SELECT id FROM job_queue_claim($owner, '{noop}', '{}', '{}', B, 30000, true)   -- lease + start
 *   SELECT kind, job FROM job_queue_complete($owner, ids, results, false)           -- guarded complete
 * until a claim comes back empty. Each variant defines its own job_queue_claim/job_queue_complete
 * (plpgsql, same planner settings and CTE shapes as the shipped ones). Reported per run:
 *   - jobs/s: N ÷ (first claim sent → last complete returned);
 *   - PG CPU µs/job: utime+stime (/proc/<pid>/stat) of the loop's backend, delta over the loop
 *     (and per quarter of the jobs); the same for the enqueue on its own connection;
 *   - bench-style CPU µs/job: whole CPU of every backend of the database at the end (migrations,
 *     enqueue and loop), which is what bench/workers/db-cpu-sampler.ts counts for pg-ceiling;
 *   - WAL bytes/job of the enqueue and of the loop: pg_current_wal_lsn() after − before. The LSN
 *     is cluster-wide, so other sessions' WAL lands in it: the minimum over runs is the clean
 *     figure (it matches --waldump's);
 *   - the loop's non-HOT updates / HOT updates / deletes / inserts per job (pg_stat_user_tables)
 *     and index bytes per job after the run (autovacuum is off on the dev machines).
 * Checks every run: all N jobs done (state 'done' in jobs), none refused, none left in the queue.
 *
 * Variants (see VARIANTS below):
 *   current        the shipped schema (the project's migrations from dist/) and functions
 *   current-nofind the shipped schema minus the 4 find indexes and jobs_finished_idx
 *   current-noargs the shipped schema minus jobs_find_args_idx (GIN over args)
 *   current-ff50   the shipped schema with jobs at fillfactor 50 (updates can stay on their page)
 *   narrow         a narrow job_queue table (id, type, group, priority, run_after, state, lease…)
 *                  takes the ready/in-flight indexes and the claim; the wide jobs row (args,
 *                  find indexes as today) is inserted at enqueue and updated once at completion
 *   narrow-hot     narrow, and the wide row's indexes do not mention state or finished_at
 *                  (find by type/group/args over all rows, fillfactor 40), so the completion
 *                  update is HOT: no index entries at all after enqueue
 *   history        the open row lives in job_queue (all columns, ready/in-flight indexes);
 *                  completion deletes it and inserts the finished row into jobs (find indexes)
 *
 * Run (after `npm run build`, from the repository root):
 *   node bench/prototypes/narrow-queue-ceiling.cjs [--variants=current,narrow,...] [--batches=500,10]
 *        [--rounds=3] [--jobs=20000] [--json=/tmp/out.json]
 *   node bench/prototypes/narrow-queue-ceiling.cjs --profile [--variants=current] [--batches=10,500]
 * Rounds alternate: for each round, for each batch, every variant once, in order.
 * --profile runs one loop per variant/batch with auto_explain (log_analyze, buffers, wal,
 * nested statements) sent to the client as NOTICEs and prints per-statement WAL/buffers per job
 * (with --plans, also the plans of the first inner claim and complete) (timed figures of a profile run are not
 * comparable: instrumentation costs).
 *   node bench/prototypes/narrow-queue-ceiling.cjs --waldump [--variants=…] [--batches=…]
 * --waldump runs one loop per variant/batch and reads the loop's WAL back with pg_waldump (root
 * or postgres on the database host; PG_WAL_DIR, PG_WALDUMP override the Debian paths): records
 * and bytes per job by relation and record type, and index entries written per job, for the
 * enqueue and for the loop. Exact per database even on a shared server, unlike the LSN
 * difference of the timed runs. Use --jobs=5000: a checkpoint recycles the WAL segments of a
 * longer run before they are read (min_wal_size is 80 MB here); retry if a segment is gone.
 *   node bench/prototypes/narrow-queue-ceiling.cjs --validate [--rounds=3]
 * --validate alternates the bench's own pg-ceiling measurement of the loop (dist/bench:
 * ceilingSubject through measureThroughput) with this harness's `current`, to check the harness.
 *   node bench/prototypes/narrow-queue-ceiling.cjs --table=/tmp/out.json --variants=…   (reprint a saved run)
 * Env: PG_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
const fs = require('node:fs');
const path = require('node:path');
const pg = require('pg');

const { jobQueueMigrations } = require(path.join(__dirname, '..', '..', 'dist', 'lib', 'migrations', 'index.js'));

const PG_URL = process.env.PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v === undefined ? true : v];
  }),
);
const N = Number(args.jobs || 20000);
const ROUNDS = Number(args.rounds || 3);
const BATCHES = String(args.batches || '500,10').split(',').map(Number);
const TICK_US = 1e6 / 100; // USER_HZ

function urlFor(db) {
  const u = new URL(PG_URL);
  u.pathname = `/${db}`;
  return u.toString();
}

async function admin(sql) {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

function cpuOf(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

async function migrate(c) {
  const qr = { query: (s, p) => c.query(s, p).then((r) => r.rows) };
  await c.query('BEGIN');
  for (const m of jobQueueMigrations('postgres')) await m.up(qr);
  await c.query('COMMIT');
}

// ---------------------------------------------------------------------------------------------
// The claim: the shipped job_queue_claim's body (1768800000001 / 1767900000001), with the table
// it reads and the statement that leases the picked rows as parameters.
const CLAIM_SETTINGS = `LANGUAGE plpgsql
  SET enable_bitmapscan TO 'off' SET enable_sort TO 'off' SET enable_seqscan TO 'off'
  SET enable_mergejoin TO 'off' SET enable_hashjoin TO 'off'
  SET plan_cache_mode TO 'force_generic_plan' SET jit TO 'off'`;

function claimPick(t) {
  return `
      WITH grouped AS (
        SELECT x.id FROM unnest($3, $4) AS q (group_key, lim)
        CROSS JOIN LATERAL (
          SELECT p.id FROM unnest($2) AS t (type)
          CROSS JOIN LATERAL (
            WITH RECURSIVE lv (priority) AS (
            (SELECT j.priority FROM ${t} j WHERE j.state = 'ready' AND j.group_key = q.group_key AND j.type = t.type ORDER BY j.group_key, j.type, j.priority DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT j.priority FROM ${t} j WHERE j.state = 'ready' AND j.group_key = q.group_key AND j.type = t.type AND j.priority < lv.priority ORDER BY j.group_key, j.type, j.priority DESC LIMIT 1) FROM lv WHERE lv.priority IS NOT NULL
          )
          SELECT x.id, x.priority, x.run_after FROM lv
          CROSS JOIN LATERAL (
            SELECT j.id, j.priority, j.run_after FROM ${t} j
            WHERE j.state = 'ready' AND j.group_key = q.group_key AND j.type = t.type AND j.priority = lv.priority AND j.run_after <= now()
            ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id
            LIMIT q.lim
            FOR UPDATE SKIP LOCKED
          ) x
          LIMIT q.lim
          ) p
          ORDER BY p.priority DESC, p.run_after, p.id
          LIMIT q.lim
        ) x
      ),
      any_group AS (
        SELECT p.id FROM unnest($2) AS t (type)
        CROSS JOIN LATERAL (
          WITH RECURSIVE lv (priority) AS (
            (SELECT j.priority FROM ${t} j WHERE j.state = 'ready' AND j.type = t.type ORDER BY j.type, j.priority DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT j.priority FROM ${t} j WHERE j.state = 'ready' AND j.type = t.type AND j.priority < lv.priority ORDER BY j.type, j.priority DESC LIMIT 1) FROM lv WHERE lv.priority IS NOT NULL
          )
          SELECT x.id, x.priority, x.run_after FROM lv
          CROSS JOIN LATERAL (
            SELECT j.id, j.priority, j.run_after FROM ${t} j
            WHERE j.state = 'ready' AND j.type = t.type AND j.priority = lv.priority AND j.run_after <= now()
            ORDER BY j.type, j.priority DESC, j.run_after, j.id
            LIMIT $5
            FOR UPDATE SKIP LOCKED
          ) x
          LIMIT $5
        ) p
        WHERE $5 > 0
        ORDER BY p.priority DESC, p.run_after, p.id
        LIMIT $5
      ),
      picked AS (SELECT id FROM grouped UNION ALL SELECT id FROM any_group)`;
}

const LEASE_SET = `state = CASE WHEN $7 THEN 'running' ELSE 'leased' END,
        lease_owner = $1,
        lease_expires = now() + $6 * interval '1 millisecond',
        heartbeat_at = now(),
        attempts = q.attempts + 1,
        started_at = CASE WHEN $7 THEN now() ELSE q.started_at END`;

/** What the worker needs of a claimed job (job_queue_complete_then_claim's row shape). */
const CLAIMED_ROW = `TABLE (id bigint, type varchar, args text, attempts int, max_attempts int, group_key varchar,
  priority int, parent_id bigint, timeout_ms int, run_after timestamptz, trace_context text)`;

// The dependents' countdown of the shipped job_queue_complete (1766000000002 … 1768800000001),
// over the table that holds pending_deps (`w`); `done` must be a CTE returning the finished ids.
function countdown(w) {
  return `
      raw AS MATERIALIZED (
        SELECT done.id AS up_id, s.job_id FROM done
        CROSS JOIN LATERAL (SELECT d.job_id FROM job_deps d WHERE d.depends_on_id = done.id LIMIT 2001) s),
      many AS MATERIALIZED (
        SELECT raw.up_id FROM raw GROUP BY raw.up_id HAVING COUNT(*) > 2000),
      sliced AS (
        INSERT INTO job_queue_promotions (job_id, after_job_id) SELECT many.up_id, 0 FROM many
        RETURNING job_queue_promotions.job_id),
      dep AS MATERIALIZED (
        SELECT raw.job_id, COUNT(*) AS n FROM raw WHERE NOT EXISTS (SELECT 1 FROM many WHERE many.up_id = raw.up_id)
        GROUP BY raw.job_id ORDER BY raw.job_id),
      promoted AS (
        UPDATE ${w} j SET state = CASE WHEN j.state = 'waiting' AND j.is_container = 0 AND j.pending_deps - dep.n <= 0 THEN 'ready' ELSE j.state END,
          pending_deps = j.pending_deps - dep.n
        FROM dep WHERE j.id = dep.job_id
        RETURNING j.id, j.state),
      woken AS (
        SELECT pg_notify('nestjs_sql_job_queue', 'r') FROM (SELECT 1 FROM promoted WHERE state = 'ready' AND $4 LIMIT 1) p),
      told AS (
        SELECT pg_notify('nestjs_sql_job_queue_settled', string_agg(id::text, ',')) FROM (
          SELECT id, (row_number() OVER ()) / 390 AS part FROM done WHERE $4) s GROUP BY part)
      SELECT 'refused'::text, v.id FROM v WHERE NOT EXISTS (SELECT 1 FROM done WHERE done.id = v.id)
      UNION ALL SELECT 'promoted'::text, COUNT(*) FROM promoted WHERE state = 'ready'
      UNION ALL SELECT 'sliced'::text, COUNT(*) FROM sliced
      UNION ALL SELECT 'notified'::text, NULL::bigint FROM woken
      UNION ALL SELECT 'told'::text, COUNT(*) FROM told;`;
}

const COMPLETE_HEAD = `RETURNS TABLE(kind text, job bigint) LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan' SET enable_seqscan TO 'off'
    AS $f$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH v AS (SELECT * FROM unnest($2, $3) AS u (id, result)),`;

/** The narrow table of the hot path: what the claim orders/filters by, the lease, the countdown. */
const NARROW_TABLE = `
  CREATE TABLE job_queue (
    id bigint PRIMARY KEY,
    type varchar(200) NOT NULL,
    group_key varchar(200) NOT NULL DEFAULT 'default',
    priority integer NOT NULL DEFAULT 0,
    run_after timestamptz NOT NULL DEFAULT now(),
    state varchar(16) NOT NULL,
    is_container smallint NOT NULL DEFAULT 0,
    pending_deps integer NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    lease_owner varchar(128),
    lease_expires timestamptz,
    heartbeat_at timestamptz,
    started_at timestamptz
  )`;
const QUEUE_INDEXES = [
  `CREATE INDEX job_queue_ready_idx ON job_queue (type, priority DESC, run_after, id) WHERE state = 'ready'`,
  `CREATE INDEX job_queue_ready_group_idx ON job_queue (group_key, type, priority DESC, run_after, id) WHERE state = 'ready'`,
  `CREATE INDEX job_queue_in_flight_idx ON job_queue (lease_expires) WHERE state IN ('leased', 'running')`,
];
const DROP_HOT_PATH_INDEXES = [`DROP INDEX jobs_ready_idx`, `DROP INDEX jobs_ready_group_idx`, `DROP INDEX jobs_in_flight_idx`];
const DROP_SHIPPED_FUNCTIONS = [
  `DROP FUNCTION job_queue_claim(text, text[], text[], integer[], integer, double precision, boolean)`,
  `DROP FUNCTION job_queue_complete(text, bigint[], text[], boolean)`,
];

// The enqueue: what insertJobsPostgres sends for enqueueGraph of no-op jobs (args {}), per chunk.
const JOBS_INSERT = (state) => `INSERT INTO jobs (type, ref, args, state, parent_id, is_container, pending_deps, pending_children,
    group_key, weight, priority, run_after, max_attempts, timeout_ms, job_key, created_at, updated_at)
  SELECT 'noop', 'j' || i, '{}', '${state}', NULL, 0, 0, 0, 'default', 1, 0, now(), 3, NULL, NULL, now(), now()
  FROM generate_series($1::int, $2::int) AS i`;

/** narrow and narrow-hot share the functions; they differ in the wide table's indexes. */
const narrowFunctions = [
  `CREATE FUNCTION job_queue_claim(text, text[], text[], integer[], integer, double precision, boolean) RETURNS ${CLAIMED_ROW}
   ${CLAIM_SETTINGS} AS $f$
    #variable_conflict use_column
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      RETURN QUERY
      ${claimPick('job_queue')},
      leased AS (
        UPDATE job_queue q SET ${LEASE_SET}
        FROM picked WHERE q.id = picked.id
        RETURNING q.id, q.type, q.attempts, q.group_key, q.priority, q.run_after)
      SELECT l.id, l.type, j.args, l.attempts, j.max_attempts, l.group_key, l.priority, j.parent_id, j.timeout_ms, l.run_after, j.trace_context
      FROM leased l JOIN jobs j ON j.id = l.id;
    END $f$`,
  `CREATE FUNCTION job_queue_complete(text, bigint[], text[], boolean) ${COMPLETE_HEAD}
      gone AS (
        DELETE FROM job_queue q USING v
        WHERE q.id = v.id AND q.lease_owner = $1 AND q.state || '' = 'running'
        RETURNING q.id, q.attempts, q.started_at, v.result),
      done AS (
        UPDATE jobs SET result = gone.result, state = 'done', progress = 100, attempts = gone.attempts,
          started_at = gone.started_at, finished_at = now(), updated_at = now()
        FROM gone WHERE jobs.id = gone.id
        RETURNING jobs.id),
      ${countdown('job_queue')}
    END $f$`,
];

async function narrowEnqueue(c, lo, hi) {
  await c.query('BEGIN');
  await c.query(
    `WITH ins AS (${JOBS_INSERT('ready')} RETURNING id, type, group_key, priority, run_after)
     INSERT INTO job_queue (id, type, group_key, priority, run_after, state) SELECT id, type, group_key, priority, run_after, 'ready' FROM ins`,
    [lo, hi],
  );
  await c.query('COMMIT');
}

const VARIANTS = {
  current: {
    about: 'the shipped schema and functions',
    async setup(c) {
      await migrate(c);
    },
    async enqueue(c, lo, hi) {
      await c.query('BEGIN');
      await c.query(JOBS_INSERT('ready'), [lo, hi]);
      await c.query('COMMIT');
    },
    queueTable: null,
  },
  'current-nofind': {
    about: 'shipped schema minus jobs_find_{args,group,state,type}_idx and jobs_finished_idx',
    async setup(c) {
      await migrate(c);
      for (const i of ['jobs_find_args_idx', 'jobs_find_group_idx', 'jobs_find_state_idx', 'jobs_find_type_idx', 'jobs_finished_idx'])
        await c.query(`DROP INDEX ${i}`);
    },
    enqueue: (c, lo, hi) => VARIANTS.current.enqueue(c, lo, hi),
    queueTable: null,
  },
  'current-noargs': {
    about: 'the shipped schema minus jobs_find_args_idx (the GIN behind find({ argsContains }))',
    async setup(c) {
      await migrate(c);
      await c.query(`DROP INDEX jobs_find_args_idx`);
    },
    enqueue: (c, lo, hi) => VARIANTS.current.enqueue(c, lo, hi),
    queueTable: null,
  },
  'current-ff50': {
    about: 'the shipped schema with jobs fillfactor 50: claim/complete updates stay on their page (not HOT: state is indexed)',
    async setup(c) {
      await migrate(c);
      await c.query(`ALTER TABLE jobs SET (fillfactor = 50)`);
    },
    enqueue: (c, lo, hi) => VARIANTS.current.enqueue(c, lo, hi),
    queueTable: null,
  },
  narrow: {
    about: 'narrow job_queue for claim/lease; wide jobs row (find indexes as shipped) written at enqueue and once at completion',
    async setup(c) {
      await migrate(c);
      for (const s of [...DROP_HOT_PATH_INDEXES, ...DROP_SHIPPED_FUNCTIONS, NARROW_TABLE, ...QUEUE_INDEXES, ...narrowFunctions]) await c.query(s);
    },
    enqueue: narrowEnqueue,
    queueTable: 'job_queue',
  },
  'narrow-hot': {
    about: 'narrow, plus wide-row indexes that never mention state/finished_at (fillfactor 40): HOT completion',
    async setup(c) {
      await migrate(c);
      for (const s of [
        ...DROP_HOT_PATH_INDEXES,
        ...DROP_SHIPPED_FUNCTIONS,
        `DROP INDEX jobs_find_args_idx`,
        `DROP INDEX jobs_find_group_idx`,
        `DROP INDEX jobs_find_state_idx`,
        `DROP INDEX jobs_find_type_idx`,
        `DROP INDEX jobs_finished_idx`,
        `CREATE INDEX jobs_find_args_idx ON jobs USING gin ((args::jsonb) jsonb_path_ops)`,
        `CREATE INDEX jobs_find_group_idx ON jobs (group_key, id)`,
        `CREATE INDEX jobs_find_type_idx ON jobs (type, id)`,
        `ALTER TABLE jobs SET (fillfactor = 40)`,
        NARROW_TABLE,
        ...QUEUE_INDEXES,
        ...narrowFunctions,
      ])
        await c.query(s);
    },
    enqueue: narrowEnqueue,
    queueTable: 'job_queue',
  },
  history: {
    about: 'open rows (all columns) in job_queue; completion moves the row into jobs (find indexes as shipped)',
    async setup(c) {
      await migrate(c);
      for (const s of [
        ...DROP_HOT_PATH_INDEXES,
        ...DROP_SHIPPED_FUNCTIONS,
        `CREATE TABLE job_queue (LIKE jobs INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
        `ALTER TABLE job_queue ALTER COLUMN id SET DEFAULT nextval('jobs_id_seq'), ADD PRIMARY KEY (id)`,
        ...QUEUE_INDEXES,
        `CREATE FUNCTION job_queue_claim(text, text[], text[], integer[], integer, double precision, boolean) RETURNS ${CLAIMED_ROW}
         ${CLAIM_SETTINGS} AS $f$
          #variable_conflict use_column
          BEGIN
            PERFORM set_config('synchronous_commit', 'off', true);
            RETURN QUERY
            ${claimPick('job_queue')}
            UPDATE job_queue q SET ${LEASE_SET}, updated_at = now()
            FROM picked WHERE q.id = picked.id
            RETURNING q.id, q.type, q.args, q.attempts, q.max_attempts, q.group_key, q.priority, q.parent_id, q.timeout_ms, q.run_after, q.trace_context;
          END $f$`,
        `CREATE FUNCTION job_queue_complete(text, bigint[], text[], boolean) ${COMPLETE_HEAD}
            gone AS (
              DELETE FROM job_queue q USING v
              WHERE q.id = v.id AND q.lease_owner = $1 AND q.state || '' = 'running'
              RETURNING q.*, v.result AS new_result),
            done AS (
              INSERT INTO jobs (id, type, ref, args, result, state, parent_id, is_container, pending_deps, pending_children, failed_children,
                group_key, weight, priority, run_after, attempts, max_attempts, last_error, timeout_ms, progress, current_stage, job_key,
                created_at, started_at, finished_at, updated_at, trace_context)
              SELECT g.id, g.type, g.ref, g.args, g.new_result, 'done', g.parent_id, g.is_container, g.pending_deps, g.pending_children, g.failed_children,
                g.group_key, g.weight, g.priority, g.run_after, g.attempts, g.max_attempts, g.last_error, g.timeout_ms, 100, g.current_stage, g.job_key,
                g.created_at, g.started_at, now(), now(), g.trace_context
              FROM gone g
              RETURNING jobs.id),
            ${countdown('job_queue')}
          END $f$`,
      ])
        await c.query(s);
    },
    async enqueue(c, lo, hi) {
      await c.query('BEGIN');
      await c.query(JOBS_INSERT('ready').replace('INSERT INTO jobs', 'INSERT INTO job_queue'), [lo, hi]);
      await c.query('COMMIT');
    },
    queueTable: 'job_queue',
  },
};

// ---------------------------------------------------------------------------------------------

async function loop(c, batch, onProgress) {
  const owner = 'ceiling-0';
  let claims = 0;
  let refused = 0;
  let jobs = 0;
  for (;;) {
    const claimed = await c.query(`SELECT id FROM job_queue_claim($1, '{noop}'::text[], '{}'::text[], '{}'::int[], $2::int, 30000::float8, true)`, [
      owner,
      batch,
    ]);
    claims++;
    if (!claimed.rows.length) return { claims, refused };
    const ids = claimed.rows.map((r) => Number(r.id));
    const out = await c.query(`SELECT kind, job FROM job_queue_complete($1, $2::bigint[], $3::text[], false)`, [owner, ids, ids.map(() => 'null')]);
    jobs += ids.length;
    if (onProgress) onProgress(jobs);
    refused += out.rows.filter((r) => r.kind === 'refused').length;
  }
}

/**
 * --waldump: the loop's WAL records read back with pg_waldump (needs read access to the server's
 * pg_wal, i.e. root or postgres on the database host), keeping only records whose block
 * references name this database, grouped by relation and record type. A B-tree INSERT_LEAF /
 * INSERT_POST record (a split carries its entry in the SPLIT record instead, < 1 % here) or a
 * GIN pending-list append (UPDATE_META_PAGE) is one index entry written, so this counts index entries per job.
 */
function walByRelation(fromLsn, toLsn, dbOid, relNames) {
  const dir = process.env.PG_WAL_DIR || '/var/lib/postgresql/15/main/pg_wal';
  const bin = process.env.PG_WALDUMP || '/usr/lib/postgresql/15/bin/pg_waldump';
  const out = require('node:child_process').execFileSync(bin, ['-p', dir, '-s', fromLsn, '-e', toLsn], { maxBuffer: 1 << 30, encoding: 'utf8' });
  const groups = new Map();
  for (const line of out.split('\n')) {
    const rel = new RegExp(`rel \\d+/${dbOid}/(\\d+)`).exec(line);
    if (!rel) continue;
    const m = /rmgr: (\S+)\s+len \(rec\/tot\):\s+\d+\/\s*(\d+).*desc: (\S+)/.exec(line);
    if (!m) continue;
    const key = `${relNames.get(rel[1]) || rel[1]} ${m[1]}/${m[3]}`;
    const g = groups.get(key) || { n: 0, bytes: 0, fpi: 0 };
    g.n++;
    g.bytes += Number(m[2]);
    if (/FPW|fpw|FPI/.test(line)) g.fpi++;
    groups.set(key, g);
  }
  return [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0]));
}

function lsnToNumber(lsn) {
  const [hi, lo] = lsn.split('/');
  return parseInt(hi, 16) * 2 ** 32 + parseInt(lo, 16);
}

async function oneRun(variantName, batch, { profile = false, waldump = false } = {}) {
  const v = VARIANTS[variantName];
  const db = `jq_proto_${variantName.replace(/-/g, '_')}_${process.pid}`;
  await admin(`DROP DATABASE IF EXISTS ${db}`);
  await admin(`CREATE DATABASE ${db}`);
  const setup = new pg.Client({ connectionString: urlFor(db) });
  const c = new pg.Client({ connectionString: urlFor(db) });
  try {
    await setup.connect();
    await v.setup(setup);
    const setupPid = (await setup.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    const enq0 = cpuOf(setupPid);
    const enqLsn0text = (await setup.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l;
    const enqLsn0 = lsnToNumber(enqLsn0text);
    const te0 = process.hrtime.bigint();
    for (let lo = 1; lo <= N; lo += 1000) await v.enqueue(setup, lo, Math.min(N, lo + 999));
    const enqueueMs = Number(process.hrtime.bigint() - te0) / 1e6;
    const enqLsn1text = (await setup.query('SELECT pg_current_wal_flush_lsn()::text AS l')).rows[0].l;
    const enqLsn1 = lsnToNumber(enqLsn1text);
    const enq1 = cpuOf(setupPid);
    await c.connect();
    const loopPid = (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    // Warm the session as a worker's pooled connection would be: function compiled, plans cached.
    const notices = [];
    if (profile) {
      await c.query(`LOAD 'auto_explain'`);
      for (const s of [
        `SET auto_explain.log_min_duration = 0`,
        `SET auto_explain.log_analyze = on`,
        `SET auto_explain.log_buffers = on`,
        `SET auto_explain.log_wal = on`,
        `SET auto_explain.log_timing = on`,
        `SET auto_explain.log_nested_statements = on`,
        `SET auto_explain.log_level = 'notice'`,
        `SET client_min_messages = notice`,
      ])
        await c.query(s);
      c.on('notice', (n) => notices.push(n.message));
    }
    const pids = (await setup.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)).rows.map((r) => r.pid);
    const cpu0 = cpuOf(loopPid);
    const lsn0text = (await setup.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l;
    const lsn0 = lsnToNumber(lsn0text);
    const t0 = process.hrtime.bigint();
    // CPU of the loop's backend per quarter of the jobs: does a claim cost more late in the run?
    const quarterCpu = [];
    const onProgress = (done) => {
      while (quarterCpu.length < 4 && done >= ((quarterCpu.length + 1) * N) / 4) quarterCpu.push(cpuOf(loopPid));
    };
    const { claims, refused } = await loop(c, batch, onProgress);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const lsn1text = (await setup.query('SELECT pg_current_wal_flush_lsn()::text AS l')).rows[0].l;
    const lsn1 = lsnToNumber(lsn1text);
    const cpu1 = cpuOf(loopPid);
    let benchStyle = 0;
    for (const p of pids) {
      try {
        benchStyle += cpuOf(p);
      } catch {
        /* gone */
      }
    }
    await c.end(); // flushes the loop backend's table statistics
    await new Promise((r) => setTimeout(r, 300));
    const done = Number((await setup.query(`SELECT count(*) AS n FROM jobs WHERE state = 'done'`)).rows[0].n);
    const left = v.queueTable ? Number((await setup.query(`SELECT count(*) AS n FROM ${v.queueTable}`)).rows[0].n) : 0;
    if (done !== N || refused || left) throw new Error(`${variantName} B=${batch}: done ${done}/${N}, refused ${refused}, left in queue ${left}`);
    const stats = (
      await setup.query(
        `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables WHERE relname IN ('jobs', 'job_queue') ORDER BY relname`,
      )
    ).rows;
    const indexBytes = Number(
      (await setup.query(`SELECT COALESCE(sum(pg_relation_size(indexrelid)), 0) AS b FROM pg_index WHERE indrelid IN ('jobs'::regclass, ${v.queueTable ? `'job_queue'::regclass` : `'jobs'::regclass`})`)).rows[0].b,
    );
    const heapBytes = Number(
      (await setup.query(`SELECT pg_relation_size('jobs') + ${v.queueTable ? `pg_relation_size('job_queue')` : '0'} AS b`)).rows[0].b,
    );
    const indexSizes = (
      await setup.query(
        `SELECT c.relname, pg_relation_size(c.oid) AS b FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid IN ('jobs'::regclass${v.queueTable ? `, 'job_queue'::regclass` : ''}) ORDER BY 1`,
      )
    ).rows;
    let wal;
    let enqueueWal;
    if (waldump) {
      const dbOid = (await setup.query('SELECT oid FROM pg_database WHERE datname = current_database()')).rows[0].oid;
      const rels = (await setup.query(`SELECT relfilenode::text AS f, relname FROM pg_class WHERE relfilenode <> 0`)).rows;
      const names = new Map(rels.map((r) => [r.f, r.relname]));
      wal = walByRelation(lsn0text, lsn1text, dbOid, names);
      enqueueWal = walByRelation(enqLsn0text, enqLsn1text, dbOid, names);
    }
    return {
      wal,
      enqueueWal,
      variant: variantName,
      batch,
      quarterCpuUsPerJob: quarterCpu.map((us, i) => (us - (i ? quarterCpu[i - 1] : cpu0)) / (N / 4)),
      enqueueJobsPerSec: (N / enqueueMs) * 1000,
      enqueueCpuUsPerJob: (enq1 - enq0) / N,
      enqueueWalBytesPerJob: (enqLsn1 - enqLsn0) / N,
      jobsPerSec: (N / ms) * 1000,
      ms,
      claims,
      cpuUsPerJob: (cpu1 - cpu0) / N,
      benchStyleCpuUsPerJob: benchStyle / N,
      walBytesPerJob: (lsn1 - lsn0) / N,
      stats,
      indexBytesPerJob: indexBytes / N,
      heapBytesPerJob: heapBytes / N,
      indexSizes,
      notices,
    };
  } finally {
    await c.end().catch(() => undefined);
    await setup.end().catch(() => undefined);
    await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const fmt = (x) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));
const cell = (all) => {
  const xs = all.filter((x) => typeof x === 'number');
  return xs.length ? `${fmt(median(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})` : '—';
};

/** Per statement kind: WAL records/fpi/bytes and buffers summed from auto_explain's top-level plans. */
function summarizeProfile(notices, n) {
  const out = {};
  for (const text of notices) {
    const q = /Query Text: (.*)/.exec(text);
    if (!q) continue;
    const kind = /job_queue_claim\(\$1/.test(q[1]) ? 'claim' : /job_queue_complete\(\$1/.test(q[1]) ? 'complete' : null;
    if (!kind) continue;
    const wal = /WAL: (?:records=(\d+))?\s*(?:fpi=(\d+))?\s*(?:bytes=(\d+))?/.exec(text);
    const buf = /Buffers: shared hit=(\d+)(?: read=(\d+))?(?: dirtied=(\d+))?(?: written=(\d+))?/.exec(text);
    const o = (out[kind] ??= { calls: 0, records: 0, fpi: 0, bytes: 0, hit: 0, dirtied: 0 });
    o.calls++;
    if (wal) {
      o.records += Number(wal[1] || 0);
      o.fpi += Number(wal[2] || 0);
      o.bytes += Number(wal[3] || 0);
    }
    if (buf) {
      o.hit += Number(buf[1] || 0);
      o.dirtied += Number(buf[3] || 0);
    }
  }
  for (const [k, o] of Object.entries(out))
    console.log(
      `  ${k}: ${o.calls} calls; per job: WAL records ${(o.records / n).toFixed(2)}, fpi ${(o.fpi / n).toFixed(3)}, WAL bytes ${(o.bytes / n).toFixed(0)}, buffer hits ${(o.hit / n).toFixed(1)}, dirtied ${(o.dirtied / n).toFixed(2)}`,
    );
}

async function main() {
  const variants = String(args.variants || 'current,narrow,narrow-hot,history,current-nofind').split(',');
  for (const name of variants) if (!VARIANTS[name]) throw new Error(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(', ')}`);
  if (args.validate) {
    // The bench's own measurement of the same loop (pg-ceiling's ceilingSubject through
    // measureThroughput: Nest enqueuer, probe, db-cpu-sampler), alternating with this harness.
    const { measureThroughput } = require(path.join(__dirname, '..', '..', 'dist', 'bench', 'lib', 'measure.js'));
    const { ceilingSubject } = require(path.join(__dirname, '..', '..', 'dist', 'bench', 'lib', 'ours', 'ceiling-subject.js'));
    for (let round = 1; round <= ROUNDS; round++)
      for (const batch of BATCHES) {
        const b = await measureThroughput('postgres', ceilingSubject({ label: 'ceiling', connections: 1, batch }), N);
        console.log(`bench pg-ceiling B=${batch}: ${fmt((N / b.processMs) * 1000)} jobs/s, PostgreSQL CPU ${fmt(b.cpu.databaseUs / N)} µs/job`);
        const m = await oneRun('current', batch);
        console.log(`this harness     B=${batch}: ${fmt(m.jobsPerSec)} jobs/s, loop CPU ${fmt(m.cpuUsPerJob)} µs/job, bench-style ${fmt(m.benchStyleCpuUsPerJob)} µs/job`);
      }
    process.exit(0);
  }
  if (args.table) return printTable(JSON.parse(fs.readFileSync(args.table, 'utf8')), variants);
  if (args.waldump) {
    for (const batch of BATCHES)
      for (const name of variants) {
        const r = await oneRun(name, batch, { waldump: true });
        for (const [phase, wal, lsnDiff] of [
          ['enqueue', r.enqueueWal, r.enqueueWalBytesPerJob],
          ['loop', r.wal, r.walBytesPerJob],
        ]) {
          if (phase === 'enqueue' && batch !== BATCHES[0]) continue; // the same enqueue for every batch
          console.log(`\n=== WAL of the ${phase}, ${name}${phase === 'loop' ? ` B=${batch}` : ''} (per job; records touching this database, from pg_waldump) ===`);
          let total = 0;
          const entries = new Map();
          for (const [k, g] of wal) {
            total += g.bytes;
            // GIN with fastupdate (the default) appends to its pending list: UPDATE_META_PAGE carries the entry.
            if (/ (Btree\/INSERT_LEAF|Btree\/INSERT_POST|Gin\/UPDATE_META_PAGE|Gin\/INSERT)$/.test(k)) entries.set(k.split(' ')[0], (entries.get(k.split(' ')[0]) || 0) + g.n);
            console.log(`  ${k.padEnd(60)} ${(g.n / N).toFixed(3).padStart(7)} records ${(g.bytes / N).toFixed(1).padStart(7)} B${g.fpi ? `  (${g.fpi} with page images)` : ''}`);
          }
          const sum = [...entries.values()].reduce((a, b) => a + b, 0);
          console.log(`  total ${(total / N).toFixed(0)} B/job in relation records; LSN diff ${fmt(lsnDiff)} B/job (commit records included)`);
          console.log(`  index entries written ${(sum / N).toFixed(2)}/job: ${[...entries].map(([i, n]) => `${i} ${(n / N).toFixed(2)}`).join(', ')}`);
        }
      }
    return;
  }
  if (args.profile) {
    for (const batch of BATCHES)
      for (const name of variants) {
        const r = await oneRun(name, batch, { profile: true });
        console.log(`\n=== profile ${name} B=${batch} (instrumented: ${fmt(r.jobsPerSec)} jobs/s, ${fmt(r.cpuUsPerJob)} µs/job) ===`);
        summarizeProfile(r.notices, N);
        const first = (re) => r.notices.find((t) => re.test(t) && !/Query Text: SELECT/.test(t));
        if (args.plans) {
          console.log('--- first inner claim plan ---\n' + first(/Query Text:[\s\S]*picked AS/));
          console.log('--- first inner complete plan ---\n' + first(/Query Text:[\s\S]*WITH v AS/));
        }
      }
    return;
  }
  const results = [];
  for (let round = 1; round <= ROUNDS; round++)
    for (const batch of BATCHES)
      for (const name of variants) {
        const r = await oneRun(name, batch);
        delete r.notices;
        r.round = round;
        results.push(r);
        const st = r.stats.map((s) => `${s.relname}: ins ${(s.n_tup_ins / N).toFixed(2)} upd ${(s.n_tup_upd / N).toFixed(2)} hot ${(s.n_tup_hot_upd / N).toFixed(2)} del ${(s.n_tup_del / N).toFixed(2)}`).join('; ');
        console.log(
          `round ${round} ${name.padEnd(14)} B=${String(batch).padEnd(3)} enqueue ${fmt(r.enqueueCpuUsPerJob)} µs ${fmt(r.enqueueWalBytesPerJob)} B/job | ${fmt(r.jobsPerSec).padStart(7)} jobs/s  loop CPU ${fmt(r.cpuUsPerJob).padStart(5)} µs/job  bench-style ${fmt(r.benchStyleCpuUsPerJob).padStart(5)}  WAL ${fmt(r.walBytesPerJob).padStart(6)} B/job  idx ${fmt(r.indexBytesPerJob)} heap ${fmt(r.heapBytesPerJob)} B/job  quarters ${r.quarterCpuUsPerJob.map((x) => x.toFixed(0)).join('/')} µs/job  [${st}]`,
        );
      }
  if (args.json) fs.writeFileSync(args.json, JSON.stringify(results, null, 2));
  printTable(results, variants);
}

/**
 * Medians (min–max) per variant and batch, and each variant against the run of variants[0]
 * (the baseline) in the same round and batch: paired ratios, which cancel most of the drift
 * of a shared machine's load between rounds.
 */
function printTable(results, variants) {
  const batches = [...new Set(results.map((r) => r.batch))];
  const base = variants[0];
  console.log(`\n| Variant | Batch | loop jobs/s | loop PG CPU µs/job | jobs/s ÷ ${base} (paired) | CPU ÷ ${base} (paired) | loop WAL B/job | enqueue PG CPU µs/job | enqueue WAL B/job | bench-style PG CPU µs/job |`);
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const batch of batches)
    for (const name of variants) {
      const rs = results.filter((r) => r.variant === name && r.batch === batch);
      const pair = (f) =>
        rs
          .map((r) => {
            const b = results.find((x) => x.variant === base && x.batch === batch && x.round === r.round);
            return b ? f(r) / f(b) : NaN;
          })
          .filter((x) => !Number.isNaN(x));
      const ratio = (xs) => `${median(xs).toFixed(2)}× (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
      console.log(
        `| ${name} | ${batch} | ${cell(rs.map((r) => r.jobsPerSec))} | ${cell(rs.map((r) => r.cpuUsPerJob))} | ${name === base ? '—' : ratio(pair((r) => r.jobsPerSec))} | ${name === base ? '—' : ratio(pair((r) => r.cpuUsPerJob))} | ${cell(rs.map((r) => r.walBytesPerJob))} | ${cell(rs.map((r) => r.enqueueCpuUsPerJob))} | ${cell(rs.map((r) => r.enqueueWalBytesPerJob))} | ${cell(rs.map((r) => r.benchStyleCpuUsPerJob))} |`,
      );
    }
}

module.exports = { oneRun, VARIANTS, migrate };
if (require.main === module)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
