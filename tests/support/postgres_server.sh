#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: initdb and pg_ctl into a new directory under /tmp, reached
# through a unix socket in that directory only (no port is opened), trust authentication for user "adk".
#
#   postgres_server.sh start [--durable]   prints "DIR URL" on one line, e.g.
#                                          /tmp/adk-pg.Ab12 postgresql://adk@%2Ftmp%2Fadk-pg.Ab12/postgres
#   postgres_server.sh stop DIR            stops the server and removes DIR
#
# Without --durable the server does not fsync (the tests kill clients, never the server). PostgreSQL
# refuses to run as root: as root, the server runs as the user "postgres" (Debian's postgresql package
# makes it). Exits 77 with "SKIPPED: ..." when the binaries are not installed (tools/setup.sh installs them).
set -euo pipefail

find_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/$1" ] && { echo "$d/$1"; return; }
  done
  command -v "$1" || true
}

as_server_user() {  # from "/": the server's user may not be allowed into the caller's directory
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && "$@")
  fi
}

case "${1:-}" in
start)
  initdb=$(find_bin initdb)
  pg_ctl=$(find_bin pg_ctl)
  if [ -z "$initdb" ] || [ -z "$pg_ctl" ]; then
    echo "SKIPPED: PostgreSQL's initdb and pg_ctl are not installed (tools/setup.sh installs postgresql)" >&2
    exit 77
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "SKIPPED: running as root and there is no user 'postgres' to run the server as" >&2
    exit 77
  fi
  dir=$(mktemp -d /tmp/adk-pg.XXXXXX)
  chmod 755 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  settings=(-c listen_addresses= -c "unix_socket_directories=$dir" -c max_connections=200)
  [ "${2:-}" = --durable ] || settings+=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)
  if ! as_server_user "$initdb" -D "$dir/data" -U adk --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    exit 1
  fi
  if ! as_server_user "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "${settings[*]}" start >/dev/null; then
    cat "$dir/server.log" >&2
    exit 1
  fi
  echo "$dir postgresql://adk@${dir//\//%2F}/postgres"
  ;;
stop)
  dir=${2:?postgres_server.sh stop DIR}
  case "$dir" in /tmp/adk-pg.*) ;; *) echo "not a directory this script made: $dir" >&2; exit 2 ;; esac
  pg_ctl=$(find_bin pg_ctl)
  [ -d "$dir/data" ] && as_server_user "$pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: postgres_server.sh start [--durable] | stop DIR" >&2
  exit 2
  ;;
esac
