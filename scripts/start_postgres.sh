#!/usr/bin/env bash
# Start a throw-away PostgreSQL server for the audit tests and print its URL.
#
#   eval "$(scripts/start_postgres.sh)"      # exports SAGE_TEST_POSTGRES_URL / _DIR
#   scripts/start_postgres.sh stop          # stops the server in $SAGE_TEST_POSTGRES_DIR
#
# Run as root on Debian with the `postgresql` package (binaries in
# /usr/lib/postgresql/<ver>/bin; the cluster runs as the `postgres` user) or as
# an ordinary user (the cluster runs as that user). The cluster lives in a temp
# dir, listens on 127.0.0.1 only, trust auth, first free port from 54329.
# Only the export lines go to stdout; progress goes to stderr.
set -euo pipefail

PGBIN="${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
    echo "start_postgres.sh: PostgreSQL binaries not found (apt-get install postgresql, or set PGBIN)" >&2
    exit 1
fi

as_owner() {
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

if [ "${1:-}" = "stop" ]; then
    dir="${2:-${SAGE_TEST_POSTGRES_DIR:-}}"
    [ -n "$dir" ] || { echo "start_postgres.sh stop: give the dir or set SAGE_TEST_POSTGRES_DIR" >&2; exit 1; }
    as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >&2
    exit 0
fi

PORT="${SAGE_PG_PORT:-54329}"
DBNAME="${SAGE_PG_DB:-sage_test}"
DIR="${SAGE_PG_DIR:-$(mktemp -d /tmp/sage-pg.XXXXXX)}"
mkdir -p "$DIR"
chmod 700 "$DIR"
if [ "$(id -u)" = "0" ]; then
    chown postgres:postgres "$DIR"
fi

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in $(seq 1 50); do
    port_busy "$PORT" || break
    PORT=$((PORT + 1))
done
if port_busy "$PORT"; then
    echo "start_postgres.sh: no free port found" >&2
    exit 1
fi

echo "start_postgres.sh: initdb in $DIR/data" >&2
as_owner "$PGBIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --no-locale >"$DIR/initdb.log" 2>&1 \
    || { cat "$DIR/initdb.log" >&2; exit 1; }
echo "start_postgres.sh: starting on 127.0.0.1:$PORT" >&2
as_owner "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR -c max_connections=100" \
    start >&2 || { cat "$DIR/server.log" >&2; exit 1; }
as_owner "$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DBNAME" >&2

URL="postgresql+psycopg://postgres@127.0.0.1:$PORT/$DBNAME"
echo "$URL" > "$DIR/url"
[ "$(id -u)" = "0" ] && chown postgres:postgres "$DIR/url"
echo "start_postgres.sh: ready: $URL (stop: scripts/start_postgres.sh stop $DIR)" >&2
echo "export SAGE_TEST_POSTGRES_URL=$URL"
echo "export SAGE_TEST_POSTGRES_DIR=$DIR"
