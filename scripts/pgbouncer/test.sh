#!/usr/bin/env bash
# Runs refvid's Postgres store contract suite and the multi-process test through a real PgBouncer
# in transaction pool mode (docs/pgbouncer.md): DATABASE_URL through the pooler, DATABASE_LISTEN_URL
# straight to Postgres.
#
# Installs Debian's pgbouncer when it is missing (as root), writes its configuration into a temp
# directory, starts it on a free port (as the postgres user when run as root: pgbouncer refuses
# root), and stops it by its pid on exit. It never skips: if pgbouncer cannot start, it fails.
# After each suite it reads PgBouncer's admin console to prove the suite's traffic went through it.
#
# Environment: REFVID_TEST_DATABASE_URL, the Postgres server (default
# postgres://postgres@127.0.0.1:5432/postgres, trust auth).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
DIRECT=${REFVID_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
# The test-database helper names every database it makes refvid_test_<pid>_….
PREFIX=refvid_test_
CONSOLE=(node "$ROOT/scripts/pgbouncer/console.mjs")

say() { echo "pgbouncer-test: $*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

find_pgbouncer() {
  command -v pgbouncer 2>/dev/null || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; } || true
}

PGBOUNCER=$(find_pgbouncer)
if [ -z "$PGBOUNCER" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    fail "pgbouncer is not installed. As root: apt-get install -y pgbouncer"
  fi
  say "installing pgbouncer with apt-get..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  # DPkg::Lock::Timeout: wait for another apt/dpkg run rather than fail at once.
  apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 pgbouncer >&2
  PGBOUNCER=$(find_pgbouncer)
  [ -n "$PGBOUNCER" ] || fail "apt-get finished but pgbouncer is still not found"
fi
say "$("$PGBOUNCER" --version | head -1)"

read -r PG_HOST PG_PORT PG_USER < <(node -e '
  const u = new URL(process.argv[1]);
  process.stdout.write(`${u.hostname} ${u.port || 5432} ${decodeURIComponent(u.username) || "postgres"}\n`);
' "$DIRECT")
PORT=$(node -e '
  const s = require("node:net").createServer().listen(0, "127.0.0.1", () => {
    process.stdout.write(String(s.address().port));
    s.close();
  });
')

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refvid-pgbouncer.XXXXXX")
WATCH_PID=""
stop_pgbouncer() {
  [ -f "$WORK/pgbouncer.pid" ] || return 0
  local pid
  pid=$(cat "$WORK/pgbouncer.pid")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}
on_exit() {
  local status=$?
  if [ -n "$WATCH_PID" ]; then kill "$WATCH_PID" 2>/dev/null || true; fi
  stop_pgbouncer
  rm -rf "$WORK"
  exit "$status"
}
trap on_exit EXIT

# Trust auth: PgBouncer checks nothing but that the user is in the auth file, and connects to
# Postgres as that user (the local server trusts it too).
for user in postgres root "$PG_USER"; do echo "\"$user\" \"\""; done | sort -u >"$WORK/userlist.txt"
cat >"$WORK/pgbouncer.ini" <<EOF
[databases]
; Any database name, so the databases the tests make on the fly are reachable.
* = host=$PG_HOST port=$PG_PORT

[pgbouncer]
pool_mode = transaction
listen_addr = 127.0.0.1
listen_port = $PORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
admin_users = postgres
stats_users = postgres
; The multi-process test runs six processes of up to 10 pooled connections each.
max_client_conn = 500
default_pool_size = 20
; A pool per test database, whose server connections outlive the test's store by server_idle_timeout
; (10 min by default): the store suite's property test makes 40 databases, whose idle connections
; would then pile up on the server and each be terminated when its database is dropped.
server_idle_timeout = 2
logfile = $WORK/pgbouncer.log
pidfile = $WORK/pgbouncer.pid
EOF

AS_USER=()
if [ "$(id -u)" -eq 0 ]; then
  RUN_USER=postgres
  id "$RUN_USER" >/dev/null 2>&1 || RUN_USER=nobody
  chown -R "$RUN_USER" "$WORK"
  AS_USER=(-u "$RUN_USER")
fi
"$PGBOUNCER" -d "${AS_USER[@]}" "$WORK/pgbouncer.ini" ||
  fail "pgbouncer did not start: $(tail -5 "$WORK/pgbouncer.log" 2>/dev/null)"

ADMIN_URL="postgres://postgres@127.0.0.1:$PORT/pgbouncer"
for _ in $(seq 50); do
  "${CONSOLE[@]}" "$ADMIN_URL" stats "$PREFIX" >/dev/null 2>&1 && break
  sleep 0.2
done
"${CONSOLE[@]}" "$ADMIN_URL" stats "$PREFIX" >/dev/null 2>&1 ||
  fail "pgbouncer does not answer on 127.0.0.1:$PORT: $(tail -5 "$WORK/pgbouncer.log" 2>/dev/null)"
say "pgbouncer (pid $(cat "$WORK/pgbouncer.pid")) listens on 127.0.0.1:$PORT in transaction mode"

# The test-database helper makes databases over the direct URL and hands out URLs through the
# pooler, and processes get DATABASE_LISTEN_URL direct (packages/store/src/postgres/test-databases.ts).
export REFVID_TEST_DATABASE_URL="$DIRECT"
export REFVID_TEST_POOLER_URL="postgres://$PG_USER@127.0.0.1:$PORT/postgres"

say "building the server and its packages..."
npx turbo run build --filter=@refvid/server... --output-logs=errors-only >&2

FAILED=()
transactions() { "${CONSOLE[@]}" "$ADMIN_URL" stats "$PREFIX" | cut -d' ' -f1; }

say "store contract suite on Postgres, through pgbouncer"
before=$(transactions)
(cd packages/store && npx vitest run src/postgres/postgres-store.pg.test.ts) || FAILED+=("store contract suite")
carried=$(($(transactions) - before))
say "pgbouncer carried $carried transactions of the store suite"
[ "$carried" -gt 100 ] || FAILED+=("store suite traffic did not go through pgbouncer ($carried transactions)")

say "multi-process test, through pgbouncer"
before=$(transactions)
"${CONSOLE[@]}" "$ADMIN_URL" watch "$PREFIX" "$WORK/clients" &
WATCH_PID=$!
(cd apps/server && npx vitest run test/multiprocess.pg.test.ts) || FAILED+=("multi-process test")
kill "$WATCH_PID"
wait "$WATCH_PID" || true
WATCH_PID=""
carried=$(($(transactions) - before))
clients=$(cat "$WORK/clients")
say "pgbouncer carried $carried transactions of the multi-process test, from up to $clients clients at once"
# The test's own pool holds at most 2 connections: more clients at once were refvid processes.
[ "$carried" -gt 100 ] || FAILED+=("multi-process traffic did not go through pgbouncer ($carried transactions)")
[ "$clients" -gt 2 ] || FAILED+=("the refvid processes did not connect through pgbouncer (at most $clients clients)")

if [ ${#FAILED[@]} -gt 0 ]; then
  say "pgbouncer log (last 20 lines):"
  tail -20 "$WORK/pgbouncer.log" >&2 || true
  for f in "${FAILED[@]}"; do say "FAILED: $f"; done
  say "done in ${SECONDS}s"
  exit 1
fi
say "passed through pgbouncer in ${SECONDS}s"
