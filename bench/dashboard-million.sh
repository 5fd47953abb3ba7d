#!/usr/bin/env bash
# 1,000,000 jobs in a fresh PostgreSQL database (its own, dropped at the end), then the dashboard API
# timed with curl. Run from the repository root after npm run build: bash bench/dashboard-million.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DB=jq_dash11_million
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" postgres
psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB" postgres
# Start once to run the migrations.
DATABASE_URL=postgres://postgres@127.0.0.1:5432/$DB PORT=3913 SAMPLE_DEMO=0 node dist/sample-app/main.js > /tmp/million-app.log 2>&1 &
APP=$!
for i in $(seq 1 60); do grep -q dashboard: /tmp/million-app.log && break; sleep 1; done
kill $APP; wait $APP || true
time psql -h 127.0.0.1 -U postgres -q $DB <<'SQL'
INSERT INTO jobs (type, args, state, group_key, finished_at, started_at, created_at, updated_at, run_after, last_error)
SELECT CASE WHEN g % 3 = 0 THEN 'render' ELSE 'fetch' END,
       '{"tenant":"t' || (g % 5000) || '","n":' || g || '}',
       CASE WHEN g % 50 = 0 THEN 'failed' WHEN g % 100 = 1 THEN 'ready' ELSE 'done' END,
       't' || (g % 5000),
       CASE WHEN g % 100 = 1 THEN NULL ELSE now() - (g % 3600) * interval '1 second' END,
       CASE WHEN g % 100 = 1 THEN NULL ELSE now() - (g % 3600) * interval '1 second' - interval '1 second' END,
       now() - (1000000 - g) * interval '10 millisecond', now(), now() - interval '1 minute',
       CASE WHEN g % 50 = 0 THEN 'Error: upstream timed out' END
FROM generate_series(1, 1000000) g;
ANALYZE jobs;
SQL
DATABASE_URL=postgres://postgres@127.0.0.1:5432/$DB PORT=3913 SAMPLE_DEMO=0 node dist/sample-app/main.js > /tmp/million-app.log 2>&1 &
APP=$!
for i in $(seq 1 60); do grep -q dashboard: /tmp/million-app.log && break; sleep 1; done
sleep 1
uptime
B=http://127.0.0.1:3913/dashboard/api
for path in overview overview "jobs?limit=50" "jobs?state=failed&limit=50" "jobs?group=t42&limit=50" "jobs?args=%7B%22tenant%22%3A%22t42%22%7D&limit=50" "jobs?type=render&state=ready&limit=50" "jobs/500000" "graph/500000"; do
  for run in 1 2 3; do
    curl -s -o /dev/null -w "$path run$run %{http_code} %{time_total}s %{size_download}B\n" "$B/$path"
    sleep 1.1
  done
done
uptime
kill $APP; wait $APP || true
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" postgres
