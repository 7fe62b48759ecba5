#!/usr/bin/env bash
# What an invocation of workload (a) in bursts (a tool call, then 20 chunks the mock writes as fast as it can) costs
# in instructions and cache misses, served (bench_server api_server on in-memory sessions, driven by http_bench)
# beside the runtime in process (agent_bench, tracing off), counted by callgrind with chunk_misses.sh's cache
# simulation: issue 33's item 4 (served within 1.5x of in process) in a measure the host's noise does not move.
#   served: the server runs under callgrind; WARMUP invocations at CONCURRENCY, then its counts are zeroed, then
#           INVOCATIONS more (after http_bench's first one alone: 0.1% at the default), and the counts written and
#           divided by INVOCATIONS.
#   in process: agent_bench under callgrind twice, WARMUP and WARMUP + INVOCATIONS invocations; the difference over
#           INVOCATIONS (start-up and warm-up cancel out).
#   tools/bench/burst_counts.sh [BENCH_SERVER]     another bench_server binary (a build kept from before a change);
#                                                  AGENT_BENCH=... another agent_bench
#   CONCURRENCY=50 INVOCATIONS=1000 WARMUP=300 TOP=0 tools/bench/burst_counts.sh     the defaults; TOP: the served
#                                                  run's functions with the most instructions, inclusive, per invocation
#   KEEP=DIR tools/bench/burst_counts.sh           callgrind's file of the served window left in DIR/served.callgrind
#   LAST_LEVEL=1048576 tools/bench/burst_counts.sh the simulated last level's size in bytes (8 MiB by default; 1 MiB
#                                                  is a core's own second level on this host's kind of CPU)
#   DELETE_SESSIONS=1 tools/bench/burst_counts.sh  http_bench deletes each session after its run, as agent_bench does
# Prints a table: instructions, L1 instruction misses, L1 data misses (read + write), last-level misses (read + write)
# per invocation, and served / in process.
set -euo pipefail
cd "$(dirname "$0")/../.."
bench_server=${1:-$PWD/build/release/tools/bench/bench_server}
concurrency=${CONCURRENCY:-50} invocations=${INVOCATIONS:-1000} warmup=${WARMUP:-300} top=${TOP:-0}
last_level=${LAST_LEVEL:-8388608}
delete=()
[ -n "${DELETE_SESSIONS:-}" ] && delete=(--delete-sessions)
source tools/bench/server_lib.sh  # the release build, start_mock, start_server with $server_prefix
cmake --build --preset release --target agent_bench >/dev/null
command -v valgrind >/dev/null || { echo "burst_counts.sh: valgrind is missing (tools/setup.sh installs it)" >&2; exit 1; }
work=$work/burst_counts
rm -rf "$work" && mkdir -p "$work"
cache=(--cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL="$last_level",16,64)

start_mock burst "$(weather_script "w{t} " 20)" --stamp

# summary: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw (trailing zeros left out) -> "Ir I1mr D1 LL"
counts() {
  sed -n 's/^summary: //p' "$1" | awk '{ for (i = NF + 1; i <= 9; i++) $i = 0; print $1, $4, $5 + $6, $8 + $9 }'
}

# Served.
server_prefix=(valgrind --tool=callgrind "${cache[@]}" --callgrind-out-file="$work/served")
BENCH_SERVER=$bench_server start_server cpp "$mock_url"
"$bin/bench/http_bench" --url "$base" --app weather --server-pid "$server_pid" invocations --concurrency "$concurrency" \
  --invocations 1 --warmup "$warmup" "${delete[@]}" >"$work/warmup.json" || { echo "burst_counts.sh: the warm-up failed" >&2; exit 1; }
callgrind_control -z "$server_pid" >/dev/null
"$bin/bench/http_bench" --url "$base" --app weather --server-pid "$server_pid" invocations --concurrency "$concurrency" \
  --invocations "$invocations" --warmup 0 "${delete[@]}" >"$work/window.json" || { echo "burst_counts.sh: some invocations failed" >&2; exit 1; }
callgrind_control -d "$server_pid" >/dev/null
stop_server
server_prefix=()
[ -s "$work/served.1" ] || { echo "burst_counts.sh: callgrind wrote no dump of the server" >&2; exit 1; }
read -r s_ir s_i1 s_d1 s_ll < <(counts "$work/served.1")
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work/served.1" "$KEEP/served.callgrind"

# In process.
run_in_process() {  # INVOCATIONS
  valgrind --tool=callgrind "${cache[@]}" --callgrind-out-file="$work/in_process.$1" "${AGENT_BENCH:-$bin/bench/agent_bench}" \
    --mock "$mock_url" --workload a --concurrency "$concurrency" --invocations "$1" --chunks 20 >/dev/null \
    2>"$work/in_process.$1.log" || { echo "burst_counts.sh: agent_bench failed: $(tail -3 "$work/in_process.$1.log")" >&2; exit 1; }
  counts "$work/in_process.$1"
}
read -r l_ir l_i1 l_d1 l_ll < <(run_in_process "$warmup")
read -r h_ir h_i1 h_d1 h_ll < <(run_in_process $((warmup + invocations)))

echo "workload (a) in bursts at concurrency $concurrency, per invocation ($invocations counted after $warmup); simulated caches: 32 KiB L1, $((last_level / 1024)) KiB last level${delete:+, each session deleted after its run}"
echo "| | instructions | L1 instruction misses | L1 data misses | last-level misses |"
echo "|---|---|---|---|---|"
awk -v n="$invocations" -v sir="$s_ir" -v si1="$s_i1" -v sd1="$s_d1" -v sll="$s_ll" \
  -v pir=$((h_ir - l_ir)) -v pi1=$((h_i1 - l_i1)) -v pd1=$((h_d1 - l_d1)) -v pll=$((h_ll - l_ll)) 'BEGIN {
  printf "| in process (agent_bench) | %.0f | %.0f | %.0f | %.1f |\n", pir / n, pi1 / n, pd1 / n, pll / n
  printf "| served (bench_server) | %.0f | %.0f | %.0f | %.1f |\n", sir / n, si1 / n, sd1 / n, sll / n
  printf "| served / in process | %.2fx | %.2fx | %.2fx | |\n", sir / pir, si1 / pi1, sd1 / pd1 }'
if [ "$top" -gt 0 ]; then
  echo "served: the $top functions with the most instructions, inclusive, per invocation:"
  callgrind_annotate --inclusive=yes --threshold=100 "$work/served.1" 2>/dev/null | sed -E 's/\( *[0-9.]+%\)//g' |
    grep -E '^ *[0-9,]+ ' | grep -v 'PROGRAM TOTALS' |
    awk -v n="$invocations" -v top="$top" '{ c = $1; gsub(",", "", c); if (++shown > top) exit
      f = ""; for (i = 2; i <= NF; i++) f = f " " $i; printf "  %9.0f %s\n", c / n, substr(f, 1, 150) }'
fi
