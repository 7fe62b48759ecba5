#!/usr/bin/env bash
# adk-cpp and Google's TypeScript ADK (@google/adk from npm) on the same workloads, against the same mock-llm
# (Gemini's format, loopback), in one run; prints a Markdown table with the ratios.
#   tools/bench/compare.sh [quick]      "quick": fewer invocations, for a smoke run
# Workloads: (a) one LlmAgent, a tool call, then 20 streamed chunks; (b) the same with 100 chunks;
# (c) a ParallelAgent of 4 such agents; (d) a SequentialAgent of 5. Each at concurrency 1, 50 and 1000.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target mock-llm agent_bench >/dev/null
work=$root/build/release/bench_compare
mkdir -p "$work"
cp tools/bench/ts/package.json tools/bench/ts/agent_bench.mjs tools/bench/ts/report.mjs "$work/"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
  { echo "compare.sh: npm install of @google/adk failed:"; cat "$work/npm.log"; exit 1; }
ulimit -n 65536 2>/dev/null || true  # 1000 concurrent connections on each side

pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
start_mock() {  # K: the number of chunks; sets $url
  local script=$work/script_$1.json log=$work/mock_$1.log
  printf '{"turns": [{"function_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}, {"chunks": ["w{t} "], "repeat": %d}]}\n' "$1" >"$script"
  build/release/tools/mock_llm/mock-llm --stamp --script "$script" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$log" ] && break; sleep 0.05; done
  url=$(sed -n '1s/^listening on //p' "$log")
}
start_mock 20
url20=$url
start_mock 100
url100=$url

quick=${1:-}
results=$work/results.jsonl
: >"$results"
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  echo "date: $(date -u +%Y-%m-%d)"
} >"$work/machine.txt"
for workload in a b c d; do
  chunks=20; mock=$url20
  [ "$workload" = b ] && { chunks=100; mock=$url100; }
  for concurrency in 1 50 1000; do
    # Enough invocations for a steady state; the TypeScript ADK gets fewer where it is slow.
    case $concurrency in 1) cpp=400 ts=100;; 50) cpp=3000 ts=500;; 1000) cpp=4000 ts=1000;; esac
    [ "$workload" = c ] || [ "$workload" = d ] && { cpp=$((cpp / 4)); ts=$((ts / 4)); }
    [ "$concurrency" = 1000 ] && [ $ts -lt 1000 ] && ts=1000 && [ $cpp -lt 2000 ] && cpp=2000
    [ -n "$quick" ] && { cpp=$((cpp / 10 > concurrency ? cpp / 10 : concurrency)); ts=$((ts / 10 > concurrency ? ts / 10 : concurrency)); }
    echo "workload $workload, concurrency $concurrency: adk-cpp x$cpp, TypeScript ADK x$ts" >&2
    build/release/tools/bench/agent_bench --mock "$mock" --workload $workload --concurrency $concurrency \
      --invocations $cpp --chunks $chunks >>"$results" || echo "adk-cpp: some invocations failed" >&2
    (cd "$work" && GOOGLE_GEMINI_BASE_URL=$mock GEMINI_API_KEY=bench node --max-old-space-size=8192 agent_bench.mjs \
      --workload $workload --concurrency $concurrency --invocations $ts --chunks $chunks) >>"$results" ||
      echo "TypeScript ADK: some invocations failed" >&2
  done
done
node "$work/report.mjs" "$results" "$work/machine.txt"
