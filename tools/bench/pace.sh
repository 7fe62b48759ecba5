#!/usr/bin/env bash
# The paced benchmark: streams at a real model's pace. mock-llm writes each chunk 50 ms (20 per second),
# 20 ms (50 per second) or 1 s after the last, stamped with the time it wrote it, each stream at its own phase
# (--spread-chunks: the streams' chunks come spread over the period alike to every server, however fast it
# opened them; before 2026-12-02 streams opened together wrote together); the agent is agent_bench's
# workload (a) (a tool call, then the streamed answer), served over ADK's HTTP API by adk-cpp (bench_server
# api_server, in-memory sessions, on SQLite, and with the model reached over TLS as hosted models are: server
# tls, 20 chunks per second) and by @google/adk-devtools' `adk api_server`; beside them the floor (relay_floor: each
# chunk carried to its client with one wait, one read and one write, and nothing else). http_bench
# opens N /run_sse streams at once and, when all are streaming, measures a window in which no invocation
# starts or ends (http_bench.cpp, mode paced): the server's CPU per chunk, the streams one core holds at that
# cost, the latency each frame adds after its chunk left the model (p50, p99), the server's RSS per stream
# (and of it, the text each answer streamed so far: the server holds it for the answer's final event, and it
# grows with the time the streams took to open), and how busy the machine was (with both cores full, latency is queueing, not the server's own).
#   tools/bench/pace.sh [quick]
#   PACE_RUNS="cpp:20:50 ts:20:1000" tools/bench/pace.sh    only these runs (server:chunks per second:streams;
#                                                        20, 50 or 1 chunks per second)
#   BENCH_SERVER=/tmp/before/bench_server PACE_RUNS=... tools/bench/pace.sh    a build kept from before a change
#                                                        (cp build/release/tools/bench/bench_server), same sitting
#   PACE_SECONDS=30 ...                                  a longer window (the server's CPU time is read to the
#                                                        nanosecond, its kernel part in ticks of 10 ms)
# Concurrency 50, 1,000, 5,000 and the most this machine's descriptor limit allows up to 10,000 (the server
# holds two sockets per stream); at that most, streams at 1 chunk per second too: what an open stream holds when
# the machine keeps up (at 20 per second two cores saturate past about 1,500 streams, and the figures are then
# of a backlog); the TypeScript server at 50 (about 85 paced streams at 20 per second fill the
# one core its event loop runs on: at 1,000 it takes minutes to open the streams and never catches up). Each measurement gets a fresh server, warmed up by creating sessions (http_bench), so that no run of an
# earlier one is still going. Prints one JSON line per measurement and a table.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/server_lib.sh
: >"$results"
quick=${1:-}

seconds=${PACE_SECONDS:-10} settle=2
most=$(( ($(ulimit -n) - 100) / 2 ))
[ "$most" -gt 10000 ] && most=10000
concurrencies="50 1000 5000 $most" ts_concurrencies=50 sqlite_concurrencies="50 1000 5000" tls_concurrencies="50 1000 5000"
floor_concurrencies="50 1000 5000"
[ -n "$quick" ] && { seconds=5; concurrencies="50 1000"; ts_concurrencies=50; sqlite_concurrencies=50; tls_concurrencies=50; floor_concurrencies=50; }

mock_pace=(--spread-chunks --stamp)
# The script: the tool call, then an answer of N stamped chunks.
answer() { weather_script "stamp:{t} " "$1"; }
# The answer outlasts opening every stream, the settling and the window: 300 s of chunks.
start_mock pace20 "$(answer 6000)" --chunk-delay-ms 50 "${mock_pace[@]}"
pace20=$mock_url
start_mock pace50 "$(answer 15000)" --chunk-delay-ms 20 "${mock_pace[@]}"
pace50=$mock_url
start_mock pace1 "$(answer 300)" --chunk-delay-ms 1000 "${mock_pace[@]}"
pace1=$mock_url
# The model over HTTPS, as hosted models are reached (server tls): the same answer, TLS to the mock; started only
# when a tls run is asked for.
pace20tls=
if [ -z "${PACE_RUNS:-}" ] || [[ " $PACE_RUNS" == *" tls:"* ]]; then
  make_mock_certificate
  start_mock pace20tls "$(answer 6000)" --chunk-delay-ms 50 "${mock_pace[@]}" "${mock_tls[@]}"
  pace20tls=$mock_url
fi

paced() {  # SERVER RATE CONCURRENCY
  local url=$pace20
  [ "$2" = 50 ] && url=$pace50
  [ "$2" = 1 ] && url=$pace1
  [ "$1" = tls ] && url=$pace20tls  # 20 chunks per second only
  start_server "$1" "$url"
  measure "$1" paced --concurrency "$3" --seconds $seconds --settle $settle |
    sed "s/^{\"server\":\"$1\",/{\"server\":\"$1\",\"rate\":$2,/" | tee -a "$results.rated"
  stop_server
}
: >"$results.rated"
if [ -n "${PACE_RUNS:-}" ]; then
  for run in $PACE_RUNS; do IFS=: read -r server rate c <<<"$run"; paced "$server" "$rate" "$c"; done
else
  for c in $concurrencies; do paced cpp 20 "$c"; done
  for c in $concurrencies; do paced cpp 50 "$c"; done
  if [ -z "$quick" ]; then paced cpp 1 "$most"; fi
  for c in $sqlite_concurrencies; do paced sqlite 20 "$c"; done
  for c in $tls_concurrencies; do paced tls 20 "$c"; done
  for c in $floor_concurrencies; do paced floor 20 "$c"; done
  for c in $ts_concurrencies; do paced ts 20 "$c"; done
fi
mv "$results.rated" "$results"

node - "$results" <<'JS'
const fs = require('node:fs');
const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const fmt = (v, d = 0) => (v === undefined ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
const names = { cpp: 'adk-cpp', sqlite: 'adk-cpp, SQLite', tls: 'adk-cpp, model over TLS', ts: 'TypeScript ADK', floor: 'the floor (relay_floor)' };
console.log('\n| server | chunks/s per stream (asked) | streams | CPU per chunk (kernel) | streams per core | added p50 | added p99 | machine busy | RSS per stream (of it, the answer text so far) | failed |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${names[r.server]} | ${fmt(r.chunks_per_s_per_stream, 1)} (${r.rate}) | ${fmt(r.streams_open)} | ${fmt(r.server_cpu_us_per_chunk, 1)} us (${fmt(r.server_system_us_per_chunk, 1)}) | ${fmt(r.streams_per_core)} | ${fmt(r.added_latency_ms_p50, 2)} ms | ${fmt(r.added_latency_ms_p99, 2)} ms | ${fmt(r.machine_busy_cores, 2)} cores | ${fmt(r.server_kib_per_stream, 1)} KiB (${fmt(r.answer_kib_per_stream, 1)}) | ${r.failed + r.ended_in_window} |`);
JS
