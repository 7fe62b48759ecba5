#!/usr/bin/env bash
# adk-cpp and Google's TypeScript ADK (@google/adk from npm) on the same workloads, against the same mock-llm
# (Gemini's format, loopback), in one run; prints a Markdown table with the ratios.
#   tools/bench/compare.sh [quick]      "quick": fewer invocations, for a smoke run
# Workloads: (a) one LlmAgent, a tool call, then 20 streamed chunks; (b) the same with 100 chunks;
# (c) a ParallelAgent of 4 such agents; (d) a SequentialAgent of 5. Each at concurrency 1, 50 and 1000, and
# (a) at 10,000. mock-llm writes each chunk as soon as it can (a burst); one more row runs (a) at
# concurrency 1 with chunks 1 ms apart, where chunk-to-event is the pipeline's latency, not queueing.
# Each row also shows mock-llm's own CPU per invocation during each runtime's run: on a 2-core machine it is
# what the runtime under test did not get.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
source tools/listening.sh  # start_listening
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target mock-llm agent_bench >/dev/null
work=$root/build/release/bench_compare
mkdir -p "$work"
cp tools/bench/ts/package.json tools/bench/ts/agent_bench.mjs tools/bench/ts/report.mjs "$work/"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
  { echo "compare.sh: npm install of @google/adk failed:"; cat "$work/npm.log"; exit 1; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true  # 10,000 concurrent connections on each side

pids=()
declare -A mock_pid  # mock-llm's process, by its URL
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
start_mock() {  # K: the number of chunks, then mock-llm's options; sets $url
  local script=$work/script_$1.json log=$work/mock_$1${2:+_paced}.log
  printf '{"turns": [{"function_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}, {"chunks": ["w{t} "], "repeat": %d}]}\n' "$1" >"$script"
  start_listening mock-llm "$log" build/release/tools/mock_llm/mock-llm --stamp --script "$script" "${@:2}"
  pids+=($listening_pid)
  url=$listening_url
  mock_pid[$url]=$listening_pid
}
cpu_us() {  # a process's time on a CPU so far (user and system), in microseconds
  awk '{ printf "%d", $1 / 1000 }' "/proc/$1/schedstat"
}
start_mock 20
url20=$url
start_mock 100
url100=$url
start_mock 20 --chunk-delay-ms 1
url20paced=$url

quick=${1:-}
results=$work/results.jsonl
: >"$results"
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  echo "date: $(date -u +%Y-%m-%d)"
} >"$work/machine.txt"
# Runs a benchmark command and appends its JSON line to the results, with the tag and the CPU that
# mock-llm spent meanwhile (the two share the machine's cores).
measure() {  # mock-url tag command...
  local pid=${mock_pid[$1]} tag=$2 before out status=0
  shift 2
  before=$(cpu_us "$pid")
  out=$("$@") || status=$?
  [ -n "$out" ] && printf '%s\n' "$out" | sed "s/^{/{\"tag\":\"$tag\",\"mock_cpu_us\":$(($(cpu_us "$pid") - before)),/" >>"$results"
  return $status
}
run_cpp() {  # workload concurrency invocations chunks mock-url
  build/release/tools/bench/agent_bench --mock "$5" --workload "$1" --concurrency "$2" --invocations "$3" --chunks "$4"
}
run_ts() {  # workload concurrency invocations chunks mock-url
  (cd "$work" && GOOGLE_GEMINI_BASE_URL=$5 GEMINI_API_KEY=bench node --max-old-space-size=8192 agent_bench.mjs \
    --workload "$1" --concurrency "$2" --invocations "$3" --chunks "$4")
}
run_both() {  # workload concurrency adk-cpp-invocations ts-invocations chunks mock-url [tag]
  echo "workload $1${7:+ ($7)}, concurrency $2: adk-cpp x$3, TypeScript ADK x$4" >&2
  measure "$6" "${7:-}" run_cpp "$1" "$2" "$3" "$5" "$6" || echo "adk-cpp: some invocations failed" >&2
  measure "$6" "${7:-}" run_ts "$1" "$2" "$4" "$5" "$6" || echo "TypeScript ADK: some invocations failed" >&2
}
for workload in a b c d; do
  chunks=20; mock=$url20
  [ "$workload" = b ] && { chunks=100; mock=$url100; }
  for concurrency in 1 50 1000 10000; do
    [ "$concurrency" = 10000 ] && [ "$workload" != a ] && continue
    # Enough invocations for a steady state; the TypeScript ADK gets fewer where it is slow.
    case $concurrency in 1) cpp=400 ts=100;; 50) cpp=3000 ts=500;; 1000) cpp=4000 ts=1000;; 10000) cpp=10000 ts=10000;; esac
    [ "$workload" = c ] || [ "$workload" = d ] && { cpp=$((cpp / 4)); ts=$((ts / 4)); }
    [ "$concurrency" = 1000 ] && [ $ts -lt 1000 ] && ts=1000 && [ $cpp -lt 2000 ] && cpp=2000
    [ -n "$quick" ] && { cpp=$((cpp / 10 > concurrency ? cpp / 10 : concurrency)); ts=$((ts / 10 > concurrency ? ts / 10 : concurrency)); }
    [ -n "$quick" ] && [ "$concurrency" = 10000 ] && continue
    run_both "$workload" "$concurrency" "$cpp" "$ts" "$chunks" "$mock"
  done
done
paced=200
[ -n "$quick" ] && paced=20
run_both a 1 "$paced" "$paced" 20 "$url20paced" paced
node "$work/report.mjs" "$results" "$work/machine.txt"
