#!/usr/bin/env bash
# A throw-away PostgreSQL server for the registry tests (and for trying the registry by hand):
#   scripts/registry/postgres.sh start DIR PORT   # initdb into DIR, listen on 127.0.0.1:PORT only
#   scripts/registry/postgres.sh stop DIR
# `start` prints the URL (postgres://memskill@127.0.0.1:PORT/registry) on its last line.
# PostgreSQL comes from Debian's packages (`apt-get install postgresql`; the binaries are under
# /usr/lib/postgresql/<version>/bin). The server refuses to run as root, so as root it runs as
# the `postgres` user the package creates. Trust authentication, on loopback only: a test
# server, never a real one. Exit 3 when no PostgreSQL is installed (the tests then skip).
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2; }
bin=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) ; do
  [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { bin="$d"; break; }
done
if [ -z "$bin" ] && command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
  bin="$(dirname "$(command -v initdb)")"
fi
[ -n "$bin" ] || { echo "no PostgreSQL server installed (apt-get install postgresql)" >&2; exit 3; }
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "running as root and there is no postgres user to run the server as" >&2; exit 3; }
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}
case "$cmd" in
  start)
    port="${3:?PORT}"
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then
      chown postgres "$dir"
      chmod o+x "$(dirname "$dir")"   # a private temp folder: let the server reach its own
    fi
    as_owner "$bin/initdb" -D "$dir/data" -U memskill --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || as_owner "$bin/initdb" -D "$dir/data" -U memskill --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U memskill registry
    echo "postgres://memskill@127.0.0.1:$port/registry"
    ;;
  stop)
    [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    ;;
  *) echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
