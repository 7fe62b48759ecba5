#!/usr/bin/env bash
# adk-cpp and @google/adk's DatabaseSessionService (npm) on one PostgreSQL server, each reading what the other
# wrote: a session with app:, user: and session state, and events of every kind.
#   run_adk_database.sh ADK_SESSION_WORKER WORK_DIR
# Database 1: adk-cpp creates the tables and writes; @google/adk opens them (its schema update runs over them)
# and reads. Database 2: @google/adk creates the tables and writes; adk-cpp opens them and reads; then
# @google/adk writes again over the tables as adk-cpp left them, and adk-cpp reads that too.
set -euo pipefail
worker=$1
here=$(cd "$(dirname "$0")" && pwd)
NPM_PACKAGE_DIR=$here/adk_database source "$here/npm_install.sh" "$2" adk_sessions.mjs

set +e
server=$(bash "$here/../support/postgres_server.sh" start 2>server_start.log)
status=$?
set -e
if [ $status = 77 ]; then cat server_start.log; exit 77; fi
if [ $status != 0 ]; then echo "FAIL: PostgreSQL did not start: $(cat server_start.log)"; exit 1; fi
read -r pg_dir admin_url <<<"$(tail -n 1 <<<"$server")"
trap 'bash "$here/../support/postgres_server.sh" stop "$pg_dir"' EXIT
base=${admin_url%/*}
psql -X -q "$admin_url" -c "CREATE DATABASE written_by_cpp" -c "CREATE DATABASE written_by_adk"

check() {  # check NAME A.json B.json
  if node adk_sessions.mjs compare "$2" "$3"; then
    echo "PASS: $1"
  else
    echo "FAIL: $1"; echo "  $2: $(cat "$2")"; echo "  $3: $(cat "$3")"; exit 1
  fi
}

"$worker" write-sample "$base/written_by_cpp" from_cpp >cpp_wrote.json
node adk_sessions.mjs show "$base/written_by_cpp" from_cpp >adk_read.json
check "@google/adk reads the session adk-cpp wrote" cpp_wrote.json adk_read.json

node adk_sessions.mjs write-sample "$base/written_by_adk" from_adk >adk_wrote.json
"$worker" show "$base/written_by_adk" from_adk >cpp_read.json
check "adk-cpp reads the session @google/adk wrote" adk_wrote.json cpp_read.json
node -e '
  const s = JSON.parse(require("fs").readFileSync("cpp_read.json", "utf8"));
  const wrong = s.events.filter((e) => !(e.timeMs <= s.lastUpdateTimeMs && e.timeMs > s.lastUpdateTimeMs - 60000));
  if (wrong.length) { console.log("FAIL: adk-cpp reads event times that are not the times @google/adk stored:", JSON.stringify(wrong)); process.exit(1); }
  console.log("PASS: adk-cpp reads the times of the events @google/adk wrote");'

node adk_sessions.mjs write-sample "$base/written_by_adk" again >adk_wrote_again.json
"$worker" show "$base/written_by_adk" again >cpp_read_again.json
check "@google/adk writes over the tables as adk-cpp left them, and adk-cpp reads it" adk_wrote_again.json cpp_read_again.json

"$worker" count "$base/written_by_adk" from_adk 3 >/dev/null
node adk_sessions.mjs show "$base/written_by_adk" from_adk >adk_read_counted.json
node -e '
  const s = JSON.parse(require("fs").readFileSync("adk_read_counted.json", "utf8"));
  if (s.events.length !== 7 || s.state.counter !== 3 || s.state["user:counter"] !== 3) {
    console.log("FAIL: after 3 adk-cpp invocations @google/adk reads", JSON.stringify(s)); process.exit(1);
  }'
echo "PASS: adk-cpp appends to the session @google/adk wrote, and @google/adk reads the counts"
echo "adk database interop: PASS"
