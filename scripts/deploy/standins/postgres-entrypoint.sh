#!/bin/sh
# What the official postgres image's entry point does, in short: initialise PGDATA on the first
# start with the user, password and database from the environment, then run the server.
set -e
mkdir -p "$PGDATA"
chown postgres:postgres "$PGDATA"
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  runuser -u postgres -- initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile="$pwfile" \
    --auth-host=scram-sha-256 --auth-local=trust >/dev/null
  rm -f "$pwfile"
  if [ -n "$POSTGRES_DB" ] && [ "$POSTGRES_DB" != postgres ]; then
    runuser -u postgres -- postgres --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE DATABASE "$POSTGRES_DB" OWNER "${POSTGRES_USER:-postgres}";
SQL
  fi
fi
[ "$1" = postgres ] && shift
exec runuser -u postgres -- postgres -D "$PGDATA" "$@"
