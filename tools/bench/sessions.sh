#!/usr/bin/env bash
# session_bench on the three session backends: in memory, an SQLite file, and a PostgreSQL server started for
# the run (tests/support/postgres_server.sh --durable: fsync on, PostgreSQL's defaults otherwise), all on
# this machine.
#   tools/bench/sessions.sh [BUILD_DIR] [APPENDS]     (default build/release, 2000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
appends=${2:-2000}
cmake --build "$build" --target session_bench >/dev/null
work=$(mktemp -d)
read -r pg_dir pg_url < <(bash "$root/tests/support/postgres_server.sh" start --durable)
trap 'bash "$root/tests/support/postgres_server.sh" stop "$pg_dir"; rm -rf "$work"' EXIT
"$build/tools/bench/session_bench" --appends "$appends" memory:// "sqlite:///$work/bench.db" "$pg_url"
