#!/usr/bin/env bash
# The session backends measured: in memory, an SQLite file, and a PostgreSQL server started for the run
# (tests/support/postgres_server.sh --durable: fsync on, PostgreSQL's defaults otherwise), all on this machine.
#   1. session_bench: appends/s, p50/p99 latency, the caller thread's and the process's CPU per append; one
#      session, 100 at once. Beside it, the peer: @google/adk's DatabaseSessionService (npm) on the same
#      PostgreSQL server, the same workloads (ts/session_bench.mjs, warmed up first).
#      (@google/adk on SQLite needs a native npm module, better-sqlite3, built on install: not measured.)
#   2. agent_bench workload (a) (one LlmAgent: a tool call, then 20 streamed chunks, against mock-llm) on each
#      backend, at concurrency 1 and 50: what persisting an invocation costs, in the process and on the
#      runtime's own thread (the io_context's; SQLite's workers and libpq's socket waits are elsewhere).
#   tools/bench/sessions.sh [BUILD_DIR] [APPENDS] [INVOCATIONS]     (default build/release, 2000, 3000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
appends=${2:-2000}
invocations=${3:-3000}
cmake --build "$build" --target session_bench agent_bench mock-llm >/dev/null
peer=$build/bench_sessions
mkdir -p "$peer"
cp "$root/tools/bench/ts/package.json" "$root/tools/bench/ts/session_bench.mjs" "$peer/"
(cd "$peer" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
  { echo "sessions.sh: npm install of @google/adk failed:"; cat "$peer/npm.log"; exit 1; }
work=$(mktemp -d)
pg_out=$(bash "$root/tests/support/postgres_server.sh" start --durable)
read -r pg_dir pg_url <<<"$(tail -n 1 <<<"$pg_out")"
mock=
trap '[ -n "$mock" ] && kill "$mock" 2>/dev/null; bash "$root/tests/support/postgres_server.sh" stop "$pg_dir"; rm -rf "$work"' EXIT

echo "## session_bench ($appends appends)"
"$build/tools/bench/session_bench" --appends "$appends" memory:// "sqlite:///$work/bench.db" "$pg_url"
psql -X -q "$pg_url" -c "CREATE DATABASE peer"
(cd "$peer" && node session_bench.mjs "${pg_url%/*}/peer" "$appends")

echo "## agent_bench workload (a), $invocations invocations after 300 unmeasured"
printf '{"turns": [{"function_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}, {"chunks": ["w{t} "], "repeat": 20}]}\n' >"$work/script.json"
source "$root/tools/listening.sh"
start_listening mock-llm "$work/mock.log" "$build/tools/mock_llm/mock-llm" --stamp --script "$work/script.json"
mock=$listening_pid url=$listening_url
for concurrency in 1 50; do
  for sessions in memory:// "sqlite:///$work/agent.db" "$pg_url"; do
    printf '%s concurrency %s: ' "${sessions%%:*}" "$concurrency"
    "$build/tools/bench/agent_bench" --mock "$url" --workload a --concurrency "$concurrency" \
      --invocations "$invocations" --chunks 20 --sessions "$sessions"
  done
done
